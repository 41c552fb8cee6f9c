/**
 * The Modbus simulator: one modbus-serial ServerTCP serving simulated
 * machines, one unit id per machine (1, 2, 3… in the order given), laid out
 * as the default register map. It is the driver's test peer and what
 * `npm run sim` starts for Modbus.
 */
import { createServer } from 'node:net';
import type { ServerTCP } from 'modbus-serial';
import type { ProtocolSimulatorOptions, RunningSimulator, SimulatedMachineSpec, StartSimulator } from '../protocol-simulator.js';
import { SimulatedMachine } from '../simulator/model.js';
import { DEFAULT_MAP } from './options.js';
import { RegisterImage } from './register-image.js';

/** Port `npm run sim` serves Modbus on (502 needs root). */
export const MODBUS_SIMULATOR_PORT = 5020;
/** Unit ids a Modbus TCP device may answer to: 1..247. */
const MAX_UNITS = 247;

/** The device answers "gateway target device failed to respond" for a unit id it does not serve. */
class UnknownUnitError extends Error {
  readonly modbusErrorCode = 0x0b;
}

/** A free TCP port on `host`; ServerTCP treats port 0 as "use 502", so the OS is asked first. */
export function freePort(host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen({ host, port: 0 }, () => {
      const address = probe.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      probe.close(() => resolve(port));
    });
  });
}

export const startModbusSimulator: StartSimulator = async (options: ProtocolSimulatorOptions): Promise<RunningSimulator> => {
  const host = options.host ?? '127.0.0.1';
  const now = options.now ?? Date.now;
  if (options.machines.length > MAX_UNITS) throw new Error(`the Modbus simulator serves at most ${MAX_UNITS} machines (unit ids 1..${MAX_UNITS}); got ${options.machines.length}`);
  const units = new Map<number, SimulatedMachine>();
  const unitOf = new Map<string, number>();
  options.machines.forEach((spec, i) => {
    units.set(i + 1, new SimulatedMachine({
      seed: spec.seed, timeScale: spec.timeScale ?? 1, machineType: spec.machineType, system: spec.system,
      cycleTimeSec: 120, alarmRate: 1, setupRate: 1, estopRate: 1,
    }, now));
    unitOf.set(spec.machineID, i + 1);
  });
  const image = new RegisterImage(DEFAULT_MAP);
  const machine = (unit: number): SimulatedMachine => {
    const found = units.get(unit);
    if (!found) throw new UnknownUnitError(`no machine at unit id ${unit}`);
    return found;
  };
  const vector = {
    getHoldingRegister: (address: number, unit: number) => image.registers(machine(unit), 'holding', address, 1)[0] ?? 0,
    getMultipleHoldingRegisters: (address: number, length: number, unit: number) => image.registers(machine(unit), 'holding', address, length),
    getInputRegister: (address: number, unit: number) => image.registers(machine(unit), 'input', address, 1)[0] ?? 0,
    getMultipleInputRegisters: (address: number, length: number, unit: number) => image.registers(machine(unit), 'input', address, length),
    getCoil: (address: number, unit: number) => image.bits(machine(unit), 'coils', address, 1)[0] ?? false,
    getDiscreteInput: (address: number, unit: number) => image.bits(machine(unit), 'discreteInputs', address, 1)[0] ?? false,
  };

  const { ServerTCP: Server } = (await import('modbus-serial')).default;
  const port = options.port ? options.port : await freePort(host);
  const server: ServerTCP = await new Promise((resolve, reject) => {
    const started = new Server(vector, { host, port, unitID: 255 });
    started.on('initialized', () => resolve(started));
    started.on('serverError', reject);
    // A client resetting its socket is the client's business; the server keeps serving the others.
    started.on('socketError', (error: Error | null) => options.logger?.debug({ err: error }, 'modbus simulator: client socket error'));
  });

  let closing: Promise<void> | undefined;
  return {
    scheme: 'modbus',
    host,
    port,
    describe: () => [
      `modbus: Modbus TCP on ${host}:${port}, default register map (docs/drivers/modbus.md)`,
      ...options.machines.map((spec) => `  unit id ${unitOf.get(spec.machineID)}: ${spec.machineID} (${spec.machineType}, ${spec.system})`),
    ],
    machineConfig: (spec: SimulatedMachineSpec) => {
      const unitId = unitOf.get(spec.machineID);
      if (unitId === undefined) throw new Error(`machine ${spec.machineID} is not served by this Modbus simulator`);
      return {
        machineID: spec.machineID,
        name: `${spec.machineID} (Modbus)`,
        system: spec.system,
        machineType: spec.machineType,
        ip: host,
        port,
        driver: 'modbus',
        driverOptions: { unitId },
      };
    },
    close: () => {
      closing ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
      });
      return closing;
    },
  };
};

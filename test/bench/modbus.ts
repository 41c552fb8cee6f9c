/**
 * Modbus benchmark, in one process against the Modbus simulator:
 *  - status reads/s through the driver, for 1 machine and for N machines
 *    (N connections, one per machine, each to its own unit id: a gateway
 *    talks to each Modbus device over its own TCP connection), each machine
 *    in a closed loop (next read when the previous one answered);
 *  - the same requests from a plain modbus-serial client (connectTCP,
 *    readHoldingRegisters/readDiscreteInputs in sequence), as the ratio
 *    driver / raw;
 *  - CPU (% of one core) and peak RSS of a real gateway polling N Modbus
 *    machines' CNCStatus every second. The simulator answering them runs in
 *    the same process, so its share is included.
 *
 *   npm run bench -- modbus [--machines 200] [--seconds 10] [--fleet-seconds 10] [--warmup 5]
 */
import { tmpdir } from 'node:os';
import { pino } from 'pino';
import ModbusSerial from 'modbus-serial';
import type { ModbusRTU } from 'modbus-serial/ModbusRTU.js';
import { familyPlans } from '../../drivers/modbus/client.js';
import { DEFAULT_MAP, ModbusClient, modbusDriver } from '../../drivers/modbus/index.js';
import { startModbusSimulator } from '../../drivers/modbus/simulator.js';
import type { RunningSimulator, SimulatedMachineSpec } from '../../drivers/protocol-simulator.js';
import { benchMachines, measureFleet } from './bench-fleet.js';
import { option, percentile, printTable } from './stats.js';

/** The bench fleet's machines as simulator specs, so the Modbus fleet is the same mix. */
function specsOf(machines: Record<string, unknown>[]): SimulatedMachineSpec[] {
  return machines.map((m) => {
    const options = m.driverOptions as { seed: number; machineType: SimulatedMachineSpec['machineType']; system: string; timeScale: number };
    return { machineID: String(m.machineID), seed: options.seed, machineType: options.machineType, system: options.system, timeScale: options.timeScale };
  });
}

/** Runs `loops` closed loops of `readOnce` for `seconds`; returns reads/s over all loops. */
async function closedLoops(loops: number, seconds: number, readOnce: (loop: number) => Promise<unknown>): Promise<{ perSec: number; latencyP50: number; latencyP99: number }> {
  const deadline = performance.now() + seconds * 1000;
  const latencies: number[] = [];
  let reads = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: loops }, async (_, loop) => {
      while (performance.now() < deadline) {
        const start = performance.now();
        await readOnce(loop);
        latencies.push(performance.now() - start);
        reads++;
      }
    }),
  );
  const elapsed = (performance.now() - t0) / 1000;
  return { perSec: reads / elapsed, latencyP50: percentile(latencies, 50), latencyP99: percentile(latencies, 99) };
}

async function driverRate(sim: RunningSimulator, machines: number, seconds: number) {
  const clients: ModbusClient[] = [];
  for (let unitId = 1; unitId <= machines; unitId++) {
    const driverOptions = modbusDriver.configSchema.parse({ unitId });
    const client = modbusDriver.create({ machineID: `B${unitId}`, ip: sim.host, port: sim.port, driverOptions }, { logger: pino({ level: 'silent' }), dataDir: tmpdir(), now: Date.now });
    if (!(client instanceof ModbusClient)) throw new Error('expected a ModbusClient');
    await client.connect();
    clients.push(client);
  }
  const result = await closedLoops(machines, seconds, (loop) => (clients[loop] as ModbusClient).read('status'));
  await Promise.all(clients.map((client) => client.close()));
  return result;
}

async function rawRate(sim: RunningSimulator, machines: number, seconds: number, requestTimeoutMs: number) {
  // Exactly the requests the driver plans for a status read of the default map.
  const plan = familyPlans(DEFAULT_MAP, modbusDriver.configSchema.parse({})).status ?? [];
  const clients: ModbusRTU[] = [];
  for (let unitId = 1; unitId <= machines; unitId++) {
    // modbus-serial is CommonJS; its typings put the client class at .default.
    const client = new ModbusSerial.default();
    await client.connectTCP(sim.host, { port: sim.port });
    client.setID(unitId);
    client.setTimeout(requestTimeoutMs);
    clients.push(client);
  }
  const result = await closedLoops(machines, seconds, async (loop) => {
    const client = clients[loop] as ModbusRTU;
    for (const request of plan) {
      if (request.function === 'holding') await client.readHoldingRegisters(request.address, request.count);
      else if (request.function === 'input') await client.readInputRegisters(request.address, request.count);
      else if (request.function === 'discreteInputs') await client.readDiscreteInputs(request.address, request.count);
      else await client.readCoils(request.address, request.count);
    }
  });
  await Promise.all(clients.map((client) => new Promise<void>((resolve) => client.destroy(() => resolve()))));
  return result;
}

export async function run(args: string[]): Promise<void> {
  const machines = option(args, 'machines', 200);
  const seconds = option(args, 'seconds', 10);
  const fleetSeconds = option(args, 'fleet-seconds', 10);
  const warmup = option(args, 'warmup', 5);
  const requestTimeoutMs = modbusDriver.configSchema.parse({}).requestTimeoutMs;
  const fleet = benchMachines(machines);
  const sim = await startModbusSimulator({ machines: specsOf(fleet) });
  process.stdout.write(`modbus: simulator on ${sim.host}:${sim.port} with ${machines} unit ids; ${seconds}s per throughput case, fleet ${fleetSeconds}s after ${warmup}s warm-up\n`);
  try {
    const raw1 = await rawRate(sim, 1, seconds, requestTimeoutMs);
    const driver1 = await driverRate(sim, 1, seconds);
    const rawN = await rawRate(sim, machines, seconds, requestTimeoutMs);
    const driverN = await driverRate(sim, machines, seconds);
    const specs = specsOf(fleet);
    const load = await measureFleet(
      fleet.map((m, i) => ({ ...m, ...sim.machineConfig(specs[i] as SimulatedMachineSpec), tasks: m.tasks })),
      { seconds: fleetSeconds, warmup, label: 'modbus fleet' },
    );
    const result = {
      machines,
      requestsPerStatusRead: (familyPlans(DEFAULT_MAP, modbusDriver.configSchema.parse({})).status ?? []).length,
      driver1PerSec: driver1.perSec,
      raw1PerSec: raw1.perSec,
      ratio1: driver1.perSec / raw1.perSec,
      driver1LatencyP99Ms: driver1.latencyP99,
      driverNPerSec: driverN.perSec,
      rawNPerSec: rawN.perSec,
      ratioN: driverN.perSec / rawN.perSec,
      driverNLatencyP99Ms: driverN.latencyP99,
      fleet: load,
    };
    printTable(`modbus benchmark (${machines} machines = ${machines} connections to ${machines} unit ids, Node ${process.version})`, [
      ['status reads/s, driver, 1 machine', result.driver1PerSec.toFixed(0), ''],
      ['status reads/s, raw, 1 machine', result.raw1PerSec.toFixed(0), ''],
      ['driver / raw, 1 machine', result.ratio1.toFixed(2), '>= 0.8'],
      [`status reads/s, driver, ${machines} machines`, result.driverNPerSec.toFixed(0), ''],
      [`status reads/s, raw, ${machines} machines`, result.rawNPerSec.toFixed(0), ''],
      [`driver / raw, ${machines} machines`, result.ratioN.toFixed(2), '>= 0.8'],
      [`fleet CPU, % of one core (${machines} machines, 1 s)`, load.cpuPercentOfOneCore.toFixed(1), 'incl. simulator'],
      ['fleet peak RSS, MB', load.peakRssMB.toFixed(0), ''],
      ['fleet status samples/s', load.statusSamplesPerSec.toFixed(0), String(machines)],
      ['fleet sample lag p99, ms', load.lagP99Ms.toFixed(1), ''],
      ['fleet machines online at end', String(load.online), String(machines)],
    ]);
    process.stdout.write(`${JSON.stringify(result)}\n`);
  } finally {
    await sim.close();
  }
}

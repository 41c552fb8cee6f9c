/**
 * The Modbus benchmark's throughput comparison: status reads through the
 * driver against the same requests from a plain modbus-serial client, both
 * sets of connections open side by side, measured in alternating rounds.
 */
import { tmpdir } from 'node:os';
import { pino } from 'pino';
import ModbusSerial from 'modbus-serial';
import type { ModbusRTU } from 'modbus-serial/ModbusRTU.js';
import { familyPlans } from '../../drivers/modbus/client.js';
import { DEFAULT_MAP, ModbusClient, modbusDriver } from '../../drivers/modbus/index.js';
import type { RunningSimulator } from '../../drivers/protocol-simulator.js';
import { percentile } from './stats.js';

/** One closed loop per machine: `read(i)` is machine i's next status read. */
export interface Loops {
  read(machine: number): Promise<unknown>;
  close(): Promise<void>;
}

/** The requests the driver plans for a status read of the default map. */
export function statusPlan() {
  return familyPlans(DEFAULT_MAP, modbusDriver.configSchema.parse({})).status ?? [];
}

/** `machines` driver clients, one connection each to its own unit id. */
export async function driverLoops(sim: RunningSimulator, machines: number): Promise<Loops> {
  const clients: ModbusClient[] = [];
  for (let unitId = 1; unitId <= machines; unitId++) {
    const driverOptions = modbusDriver.configSchema.parse({ unitId });
    const client = modbusDriver.create({ machineID: `B${unitId}`, ip: sim.host, port: sim.port, driverOptions }, { logger: pino({ level: 'silent' }), dataDir: tmpdir(), now: Date.now });
    if (!(client instanceof ModbusClient)) throw new Error('expected a ModbusClient');
    await client.connect();
    clients.push(client);
  }
  return {
    read: (machine) => (clients[machine] as ModbusClient).read('status'),
    close: async () => {
      await Promise.all(clients.map((client) => client.close()));
    },
  };
}

/** `machines` plain modbus-serial clients (connectTCP, the requests of a status read in sequence). */
export async function rawLoops(sim: RunningSimulator, machines: number): Promise<Loops> {
  const plan = statusPlan();
  const requestTimeoutMs = modbusDriver.configSchema.parse({}).requestTimeoutMs;
  const clients: ModbusRTU[] = [];
  for (let unitId = 1; unitId <= machines; unitId++) {
    // modbus-serial is CommonJS; its typings put the client class at .default.
    const client = new ModbusSerial.default();
    await client.connectTCP(sim.host, { port: sim.port });
    client.setID(unitId);
    client.setTimeout(requestTimeoutMs);
    clients.push(client);
  }
  return {
    read: async (machine) => {
      const client = clients[machine] as ModbusRTU;
      for (const request of plan) {
        if (request.function === 'holding') await client.readHoldingRegisters(request.address, request.count);
        else if (request.function === 'input') await client.readInputRegisters(request.address, request.count);
        else if (request.function === 'discreteInputs') await client.readDiscreteInputs(request.address, request.count);
        else await client.readCoils(request.address, request.count);
      }
    },
    close: async () => {
      await Promise.all(clients.map((client) => new Promise<void>((resolve) => client.destroy(() => resolve()))));
    },
  };
}

/**
 * Runs every machine's closed loop (next read when the previous one answered)
 * for `seconds`: reads per second of wall time, and per second of this
 * process's CPU time (the simulator's share included).
 */
export async function closedLoops(loops: Loops, machines: number, seconds: number): Promise<{ perSec: number; perCpuSec: number; latencies: number[] }> {
  const deadline = performance.now() + seconds * 1000;
  const latencies: number[] = [];
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: machines }, async (_, machine) => {
      while (performance.now() < deadline) {
        const start = performance.now();
        await loops.read(machine);
        latencies.push(performance.now() - start);
      }
    }),
  );
  const cpu = process.cpuUsage(cpu0);
  return { perSec: latencies.length / ((performance.now() - t0) / 1000), perCpuSec: latencies.length / ((cpu.user + cpu.system) / 1e6), latencies };
}

/** A full collection, with --expose-gc (which npm run bench sets). */
const collect = () => (globalThis as { gc?: () => void }).gc?.();

export interface Comparison {
  rawPerSec: number;
  driverPerSec: number;
  /** The median of the rounds' driver/raw ratios. */
  ratio: number;
  ratioMin: number;
  ratioMax: number;
  /** The same per second of CPU time: reads/CPU-s of each, the median of the rounds' ratios and their range. */
  rawPerCpuSec: number;
  driverPerCpuSec: number;
  cpuRatio: number;
  cpuRatioMin: number;
  cpuRatioMax: number;
  rounds: number;
  /** Each round's ratios, in order. */
  roundRatios: number[];
  roundCpuRatios: number[];
  driverLatencyP99Ms: number;
}

/**
 * Warms both loops up, then runs `rounds` rounds of raw and driver for
 * `seconds` each, back to back, alternating which goes first, each after a
 * full collection. Reads/s are
 * the medians over the rounds, the ratio the median of the rounds' ratios.
 */
export async function compare(sim: RunningSimulator, machines: number, options: { seconds: number; rounds: number; warmup: number }): Promise<Comparison> {
  const raw = await rawLoops(sim, machines);
  const driver = await driverLoops(sim, machines);
  try {
    await closedLoops(raw, machines, options.warmup);
    await closedLoops(driver, machines, options.warmup);
    const rawRates: number[] = [];
    const driverRates: number[] = [];
    const ratios: number[] = [];
    const rawCpu: number[] = [];
    const driverCpu: number[] = [];
    const cpuRatios: number[] = [];
    const driverLatencies: number[] = [];
    for (let round = 0; round < options.rounds; round++) {
      const first = round % 2 === 0 ? raw : driver;
      const second = first === raw ? driver : raw;
      // Each half starts from a collected heap, so neither pays for the other's garbage.
      collect();
      const a = await closedLoops(first, machines, options.seconds);
      collect();
      const b = await closedLoops(second, machines, options.seconds);
      const [r, d] = first === raw ? [a, b] : [b, a];
      rawRates.push(r.perSec);
      driverRates.push(d.perSec);
      ratios.push(d.perSec / r.perSec);
      rawCpu.push(r.perCpuSec);
      driverCpu.push(d.perCpuSec);
      cpuRatios.push(d.perCpuSec / r.perCpuSec);
      for (const latency of d.latencies) driverLatencies.push(latency);
    }
    return {
      rawPerSec: percentile(rawRates, 50),
      driverPerSec: percentile(driverRates, 50),
      ratio: percentile(ratios, 50),
      ratioMin: Math.min(...ratios),
      ratioMax: Math.max(...ratios),
      rawPerCpuSec: percentile(rawCpu, 50),
      driverPerCpuSec: percentile(driverCpu, 50),
      cpuRatio: percentile(cpuRatios, 50),
      cpuRatioMin: Math.min(...cpuRatios),
      cpuRatioMax: Math.max(...cpuRatios),
      rounds: options.rounds,
      roundRatios: ratios,
      roundCpuRatios: cpuRatios,
      driverLatencyP99Ms: percentile(driverLatencies, 99),
    };
  } finally {
    await raw.close();
    await driver.close();
  }
}

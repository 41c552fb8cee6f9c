/**
 * Modbus benchmark against the Modbus simulator:
 *  - status reads/s through the driver, for 1 machine and for N machines
 *    (N connections, one per machine, each to its own unit id: a gateway
 *    talks to each Modbus device over its own TCP connection), each machine
 *    in a closed loop (next read when the previous one answered);
 *  - the same requests from a plain modbus-serial client (connectTCP,
 *    readHoldingRegisters/readDiscreteInputs in sequence), as the ratio
 *    driver / raw;
 *  - CPU (% of one core), peak RSS and sample lag of a real gateway polling
 *    N Modbus machines' CNCStatus every second, with the simulator answering
 *    them in the same process (its share is included);
 *  - the process's memory after full collections (RSS, V8 heap used,
 *    external, array buffers) at each phase's end.
 *
 * How the ratio is measured: both sets of connections are open side by side,
 * both loops are warmed up (`--loop-warmup` s each), then `--rounds` rounds
 * each measure raw and driver for `--seconds` back to back, alternating which
 * goes first, each half after a full collection (so neither pays for the
 * other's garbage); the ratio is the median of the rounds' ratios (their
 * range is printed too). On a shared 2-core machine the raw loop alone moved
 * between 8,275 and 9,621 reads/s from one run to the next, and one 10 s run
 * of each, raw first, at different moments let that drift decide the ratio
 * (0.87 and 0.74 on the same tree); a round's two halves see nearly the same
 * background load, and the median drops the rounds a burst of it spoiled.
 * Rounds of 5 s: shorter ones let one full collection or burst of other work
 * weigh too much. What it cannot do is make a machine whose load average is
 * four times its cores quiet (figures in docs/drivers/modbus.md); for a
 * figure to compare with the target, run it on an idle machine.
 *
 * The ratio is also given per second of this process's CPU time. With 200
 * machines the loops keep the one event loop busy, so on an idle machine
 * reads/s is the inverse of CPU time per read and the two ratios agree; on a
 * machine other processes share, wall-clock reads/s also counts the time this
 * process waited for a core, which the CPU ratio does not. With 1 machine the
 * loop waits on the simulator's answers, so only the reads/s ratio means
 * anything there.
 *
 * Why the fleet runs in a child process: run after the throughput phases in
 * the same process, it inherited their heap. Thousands of reads/s over 400
 * connections grow V8's heap to 200-300 MB of garbage not yet collected (and
 * pages kept), so the fleet's "peak RSS" (545 MB) and its sample lag p99 (273
 * ms, full collections over that heap) measured the phases before it, and
 * varied with how fast they had run. In its own process (its own simulator,
 * the same machines) the fleet's figures are its own.
 *
 *   npm run bench -- modbus [--machines 200] [--seconds 5] [--rounds 5] [--loop-warmup 2] [--fleet-seconds 10 (0: no fleet)] [--warmup 5]
 */
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { startModbusSimulator } from '../../drivers/modbus/simulator.js';
import type { SimulatedMachineSpec } from '../../drivers/protocol-simulator.js';
import { benchMachines, measureFleet, type FleetMeasurement } from './bench-fleet.js';
import { compare, statusPlan } from './modbus-loops.js';
import { option, printTable, settled, type SettledMemory } from './stats.js';

/** The line the fleet's child process prints its result on. */
const RESULT = 'modbus-fleet-result ';

/** The bench fleet's machines as simulator specs, so the Modbus fleet is the same mix. */
function specsOf(machines: Record<string, unknown>[]): SimulatedMachineSpec[] {
  return machines.map((m) => {
    const options = m.driverOptions as { seed: number; machineType: SimulatedMachineSpec['machineType']; system: string; timeScale: number };
    return { machineID: String(m.machineID), seed: options.seed, machineType: options.machineType, system: options.system, timeScale: options.timeScale };
  });
}

interface PhaseMemory { rssMB: number; heapUsedMB: number; externalMB: number; arrayBuffersMB: number }
const mb = (bytes: number) => bytes / 1024 / 1024;
const phaseMemory = (m: SettledMemory): PhaseMemory => ({ rssMB: mb(m.rss), heapUsedMB: mb(m.heapUsed), externalMB: mb(m.external), arrayBuffersMB: mb(m.arrayBuffers) });

interface FleetResult extends Omit<FleetMeasurement, 'memoryAtEnd'> {
  /** With the simulator up, before the gateway starts. */
  memoryAtStart: PhaseMemory;
  memoryAtEnd: PhaseMemory;
  /** The child's highest RSS over its whole life, start-up included. */
  processPeakRssMB: number;
}

/** The fleet phase, in the child process: its own simulator and gateway. */
async function fleetPhase(args: string[]): Promise<void> {
  const machines = option(args, 'machines', 200);
  const fleet = benchMachines(machines);
  const specs = specsOf(fleet);
  const sim = await startModbusSimulator({ machines: specs });
  try {
    const memoryAtStart = phaseMemory(await settled());
    const load = await measureFleet(
      fleet.map((m, i) => ({ ...m, ...sim.machineConfig(specs[i] as SimulatedMachineSpec), tasks: m.tasks })),
      { seconds: option(args, 'fleet-seconds', 10), warmup: option(args, 'warmup', 5), label: 'modbus fleet' },
    );
    const result: FleetResult = { ...load, memoryAtStart, memoryAtEnd: phaseMemory(load.memoryAtEnd), processPeakRssMB: mb(process.resourceUsage().maxRSS * 1024) };
    process.stdout.write(`${RESULT}${JSON.stringify(result)}\n`);
  } finally {
    await sim.close();
  }
}

/** Runs the fleet phase in a child process with this process's Node flags and environment; its progress lines pass through. */
async function fleetInChild(args: string[]): Promise<FleetResult> {
  const child = spawn(process.execPath, [...process.execArgv, process.argv[1] as string, 'modbus', '--fleet-phase', ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
  let result: FleetResult | undefined;
  const lines = createInterface({ input: child.stdout });
  lines.on('line', (line) => {
    if (line.startsWith(RESULT)) result = JSON.parse(line.slice(RESULT.length)) as FleetResult;
    else process.stdout.write(`${line}\n`);
  });
  const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
  if (!result) throw new Error(`the fleet phase's process ended (code ${code}) without a result`);
  return result;
}

const memoryRow = (label: string, m: PhaseMemory): [string, string, string] => [
  `memory ${label}: rss / heapUsed / external / arrayBuffers, MB`,
  `${m.rssMB.toFixed(0)} / ${m.heapUsedMB.toFixed(0)} / ${m.externalMB.toFixed(1)} / ${m.arrayBuffersMB.toFixed(1)}`,
  'after full GC',
];

export async function run(args: string[]): Promise<void> {
  if (args.includes('--fleet-phase')) return fleetPhase(args);
  const machines = option(args, 'machines', 200);
  const rounds = { seconds: option(args, 'seconds', 5), rounds: option(args, 'rounds', 5), warmup: option(args, 'loop-warmup', 2) };
  const sim = await startModbusSimulator({ machines: specsOf(benchMachines(machines)) });
  process.stdout.write(`modbus: simulator on ${sim.host}:${sim.port} with ${machines} unit ids; ${rounds.rounds} rounds of ${rounds.seconds}s raw and ${rounds.seconds}s driver after ${rounds.warmup}s warm-up each, then the fleet in its own process\n`);
  let one, many, memory;
  try {
    const start = phaseMemory(await settled());
    one = await compare(sim, 1, rounds);
    const afterOne = phaseMemory(await settled());
    many = await compare(sim, machines, rounds);
    memory = { start, afterOne, afterMany: phaseMemory(await settled()) };
  } finally {
    await sim.close();
  }
  const load = option(args, 'fleet-seconds', 10) > 0 ? await fleetInChild(args) : undefined;
  const result = { machines, requestsPerStatusRead: statusPlan().length, one, many, memory, fleet: load };
  printTable(`modbus benchmark (${machines} machines = ${machines} connections to ${machines} unit ids, Node ${process.version})`, [
    ['status reads/s, driver, 1 machine (median)', one.driverPerSec.toFixed(0), ''],
    ['status reads/s, raw, 1 machine (median)', one.rawPerSec.toFixed(0), ''],
    [`driver / raw, 1 machine (median of ${one.rounds}; range)`, `${one.ratio.toFixed(2)} (${one.ratioMin.toFixed(2)}-${one.ratioMax.toFixed(2)})`, '>= 0.8'],
    [`status reads/s, driver, ${machines} machines (median)`, many.driverPerSec.toFixed(0), ''],
    [`status reads/s, raw, ${machines} machines (median)`, many.rawPerSec.toFixed(0), ''],
    [`driver / raw, ${machines} machines (median of ${many.rounds}; range)`, `${many.ratio.toFixed(2)} (${many.ratioMin.toFixed(2)}-${many.ratioMax.toFixed(2)})`, '>= 0.8'],
    [`status reads per CPU-s, driver / raw, ${machines} machines`, `${many.driverPerCpuSec.toFixed(0)} / ${many.rawPerCpuSec.toFixed(0)}`, ''],
    [`driver / raw per CPU-s, ${machines} machines (median; range)`, `${many.cpuRatio.toFixed(2)} (${many.cpuRatioMin.toFixed(2)}-${many.cpuRatioMax.toFixed(2)})`, '>= 0.8 (busy machine)'],
    [`driver status read p99, ${machines} machines, ms`, many.driverLatencyP99Ms.toFixed(1), ''],
    memoryRow('at start', memory.start),
    memoryRow('after 1 machine', memory.afterOne),
    memoryRow(`after ${machines} machines`, memory.afterMany),
    ...(load ? fleetRows(machines, load) : []),
  ]);
  process.stdout.write(`${JSON.stringify(result)}\n`);
}

function fleetRows(machines: number, load: FleetResult): [string, string, string][] {
  return [
    [`fleet CPU, % of one core (${machines} machines, 1 s)`, load.cpuPercentOfOneCore.toFixed(1), 'incl. simulator'],
    ['fleet peak RSS while measured, MB', load.peakRssMB.toFixed(0), ''],
    ['fleet process peak RSS (start-up included), MB', load.processPeakRssMB.toFixed(0), ''],
    memoryRow('fleet, simulator up', load.memoryAtStart),
    memoryRow('fleet, end of measuring', load.memoryAtEnd),
    ['fleet status samples/s', load.statusSamplesPerSec.toFixed(0), String(machines)],
    ['fleet sample lag p99, ms', load.lagP99Ms.toFixed(1), ''],
    ['fleet machines online at end', String(load.online), String(machines)],
  ];
}

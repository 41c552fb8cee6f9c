/**
 * Deployments at scale, and several instances: `--machines` (1,000) scripted
 * machines behind `--gateways` (10) gateways in this process, each reached
 * over HTTP; one program of `--kib` (256) KiB to all of them. A machine takes
 * a transfer at `--rate` KiB/s (256: a FOCAS Ethernet transfer of 256 KiB
 * takes about a second on a Fanuc 0i; the read-back is not slowed), so one
 * gateway's 100 machines at 4 transfers at once take 25 s at best.
 *
 * Phases, each on a fresh database, each from the batch stored to its last
 * final status, against the ideal (the slowest gateway's transfers over its
 * slots):
 *  1. one instance on SQLite;
 *  2. one instance on PostgreSQL;
 *  3. two instances on PostgreSQL, the batch claimed by both, in this process;
 *  4. the same, each instance a process of its own (what a user with two hosts gets);
 *  5. two instances in this process, the one holding more stopped hard (no
 *     further write, no lease given back) a third of the way: the takeover
 *     time, from the stop until the other holds everything left;
 *  6. the same with two processes, the one holding more killed (SIGKILL).
 * Each phase reports the uploads beyond one per machine (the target is none,
 * and with a stop at most the transfers it cut), the transfers in flight
 * at the stop, the most uploads seen at once at one gateway (the ideal counts
 * TRANSFERS_PER_GATEWAY; each instance takes that many, and a scripted
 * machine is no slower for more at its gateway, so two instances may beat
 * the ideal of one), how the work was shared (per instance, the deployments
 * it finished and when it finished its last), and what the deployments cost: PostgreSQL round trips per
 * deployment by what they were for, CPU per deployment (of the processes that
 * run instances: in phases 1–3 and 5 that is this process, gateways
 * included), and the longest event-loop delay. The deployment runners are
 * the service's (leases, fencing, rounds, audit); the REST layer and the
 * fleet plugin are not in the measured path. The PostgreSQL phases use
 * PROGRAMS_DATABASE_URL, each in a schema of its own that is dropped after;
 * without it they are skipped, with a line saying so.
 *
 *   npm run bench -- deploy-scale [--machines 1000] [--gateways 10] [--kib 256] [--rate 256] [--lease-ms 5000] [--only 1,4] [--cpu-prof-dir DIR]
 *
 * `--only` runs the phases named; `--cpu-prof-dir` has the instances' own processes write CPU profiles there
 * (run the benchmark itself with `node --cpu-prof` for this process's).
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HttpGatewayLink } from '../../core/gateway-link/http.js';
import type { GatewayLink } from '../../core/gateway-link/types.js';
import { PostgresDatabase } from '../../core/store/postgres-database.js';
import { DEPLOYMENT_MACHINE_VERSION } from '../../plugins/deployments/machine.js';
import { TRANSFERS_PER_GATEWAY } from '../../plugins/deployments/runner.js';
import type { FleetMachine } from '../../plugins/gateways/service.js';
import { openDatabaseAt, type DatabaseLocation } from '../fixtures/database-engines.js';
import { deploymentInstance } from '../fixtures/deployment-instance.js';
import { startDeploymentProcess } from '../fixtures/deployment-process.js';
import { startTestGateway, type TestGateway } from '../fixtures/gateway.js';
import { startCosts, sumCosts, take, UNCOUNTED, type Costs } from '../fixtures/round-trips.js';
import { DRIVERS_WITH_SCRIPTED, scriptedMachine, scriptedMachineConfig } from '../fixtures/scripted-machine.js';
import { option, printTable } from './stats.js';

const DIR = '//CNC_MEM/USER/PATH1/';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function program(kib: number): Buffer {
  const lines = ['%', 'O7001 (SCALE)'];
  for (let i = 1, size = 20; size < kib * 1024; i++) {
    const line = `N${i} G1 X${(i * 7) % 5000}.5 Y${(i * 13) % 3000}.5 F${200 + (i % 9) * 25}`;
    lines.push(line);
    size += line.length + 1;
  }
  return Buffer.from(`${lines.join('\n')}\nM30\n%\n`).subarray(0, kib * 1024);
}

/** One instance under test, in this process or in one of its own. */
interface BenchInstance {
  holder: string;
  /** Claims what it may and runs it. */
  resume(): Promise<number>;
  /** Stops it hard: nothing more written, no lease given back (in a process: SIGKILL). */
  stopHard(): Promise<void>;
  /** Stops it cleanly and closes its database. */
  stop(): Promise<void>;
  /** Its costs since the last ask, when it runs in a process of its own (this process's are taken by the phase). */
  costs(): Promise<Costs | undefined>;
}

interface Setup {
  fleet: FleetMachine[];
  linkOf: (gatewayId: string) => GatewayLink;
  gateways: Record<string, { url: string; key: string }>;
  leaseMs: number;
  /** Node options of the instances' processes. */
  execArgv: string[];
}

async function inProcess(location: DatabaseLocation, holder: string, setup: Setup): Promise<BenchInstance & { started: Awaited<ReturnType<typeof deploymentInstance>> }> {
  const started = await deploymentInstance({ open: () => openDatabaseAt(location) }, holder, setup.fleet, setup.linkOf, { leaseMs: setup.leaseMs, takeOverAtStart: false, claimLimit: 50 });
  let closed = false;
  const close = async () => {
    if (closed) return;
    closed = true;
    await started.db.close();
  };
  return {
    holder, started,
    resume: () => started.runner.resumeAll(),
    stopHard: async () => {
      await started.runner.stop({ release: false });
      await close();
    },
    stop: async () => {
      await started.runner.stop();
      await close();
    },
    costs: async () => undefined,
  };
}

async function ownProcess(location: DatabaseLocation, holder: string, setup: Setup): Promise<BenchInstance> {
  const p = await startDeploymentProcess({ location, holder, leaseMs: setup.leaseMs, fleet: setup.fleet, gateways: setup.gateways, runner: { takeOverAtStart: false, claimLimit: 50 }, countCosts: true, execArgv: setup.execArgv });
  return {
    holder,
    resume: async () => (await p.ask<{ resumed: number }>({ cmd: 'resume' })).resumed,
    stopHard: async () => {
      p.child.kill('SIGKILL');
      await p.exited;
    },
    stop: async () => {
      if (p.child.exitCode !== null || p.child.signalCode !== null) return;
      await p.ask({ cmd: 'stop', release: true });
      await p.exited;
    },
    costs: async () => (p.child.exitCode === null && p.child.signalCode === null ? (await p.ask<{ costs: Costs }>({ cmd: 'costs' })).costs : undefined),
  };
}

interface PhaseResult {
  ms: number;
  takeoverMs: number | null;
  failed: number;
  beyondOne: number;
  inFlightAtStop: number | null;
  /** The most uploads seen under way at once at one gateway (sampled with the progress): TRANSFERS_PER_GATEWAY per instance at most. */
  mostAtOneGateway: number;
  /** Per instance (by holder), the deployments it finished and when it finished its last one, ms after the batch was stored. */
  perInstance: { holder: string; finished: number; lastMs: number }[];
  costs: Costs;
}

/** Runs one phase: stores the batch (with no holder when several instances claim it), starts it, and waits for every final status. */
async function runPhase(location: DatabaseLocation, n: number, processes: boolean, setup: Setup, content: Buffer, run: string, stopOneAt?: number): Promise<PhaseResult> {
  const { fleet } = setup;
  for (const m of fleet) {
    const s = scriptedMachine(m.machineId);
    s.files.clear();
    s.uploads = 0;
  }
  // This process's view of the progress, on connections whose round trips are not counted.
  const monitor = location.engine === 'postgres' ? await PostgresDatabase.open(location.url, { max: 2, applicationName: UNCOUNTED }) : await openDatabaseAt(location);
  const made: BenchInstance[] = [];
  const first = await inProcess(location, `bench-${run}-1`, setup);
  if (processes) await first.stop();
  for (let i = processes ? 0 : 1; i < n; i++) made.push(await (processes ? ownProcess : inProcess)(location, `bench-${run}-${i + 1}`, setup));
  if (!processes) made.unshift(first);
  const sha256 = createHash('sha256').update(content).digest('hex');
  const now = Date.now();
  const planned = fleet.map((m, i) => ({ id: `dep_${run}_${i}`, assignmentId: 'asg_scale', machineId: m.id, gatewayId: m.gatewayId, dir: DIR, fileName: 'O7001', content, sha256 }));
  take();
  for (const i of made) await i.costs();
  const started = performance.now();
  const rows = await monitor.write(async (tx) => {
    const inserted = await first.started.repo.insertBatch(tx, {
      id: `bat_${run}`, versionId: 'ver_scale', purpose: 'deploy', isTrial: false, trialHours: null, key: null, requestHash: run, answer: '{}', createdBy: 'bench', createdAt: now, deadline: now + 600_000,
    }, planned, DEPLOYMENT_MACHINE_VERSION);
    if (n > 1) await tx.run('UPDATE deploy_deployments SET holder = NULL, lease_until = NULL WHERE batch_id = ?', [`bat_${run}`]);
    return inserted;
  }, { transaction: true });
  if (n === 1 && !processes) {
    // As the service starts a batch it has just stored: with what the steps need at hand.
    first.started.repo.track(rows);
    const machines = new Map(fleet.map((m) => [m.id, m]));
    for (const r of rows) first.started.runner.start(r.id, r.deadline, { row: r, machine: machines.get(r.machineId) as FleetMachine, link: setup.linkOf(r.gatewayId), content });
  }
  await Promise.all(made.map((i) => i.resume()));
  let takeoverMs: number | null = null;
  let stoppedAt: number | null = null;
  let inFlightAtStop: number | null = null;
  let victim: BenchInstance | undefined;
  let mostAtOneGateway = 0;
  const byGateway = new Map<string, FleetMachine[]>();
  for (const m of fleet) byGateway.set(m.gatewayId, [...(byGateway.get(m.gatewayId) ?? []), m]);
  for (;;) {
    await sleep(200);
    for (const machines of byGateway.values()) mostAtOneGateway = Math.max(mostAtOneGateway, machines.reduce((s, m) => s + scriptedMachine(m.machineId).uploadsInFlight.size, 0));
    const counts = await monitor.all<{ holder: string | null; done: number; n: number }>(
      'SELECT holder, SUM(CASE WHEN finished_at IS NULL THEN 0 ELSE 1 END) AS done, COUNT(*) AS n FROM deploy_deployments WHERE batch_id = ? GROUP BY holder', [`bat_${run}`],
    );
    const done = counts.reduce((s, c) => s + Number(c.done), 0);
    if (stopOneAt !== undefined && !victim && done >= stopOneAt) {
      const most = [...counts].sort((a, b) => (Number(b.n) - Number(b.done)) - (Number(a.n) - Number(a.done)))[0];
      victim = made.find((i) => i.holder === most?.holder) ?? made[0];
      inFlightAtStop = fleet.reduce((s, m) => s + scriptedMachine(m.machineId).uploadsInFlight.size, 0);
      await victim?.stopHard();
      stoppedAt = performance.now();
    }
    if (victim && takeoverMs === null && stoppedAt !== null) {
      const left = counts.find((c) => c.holder === victim!.holder);
      if (!left || Number(left.n) === Number(left.done)) takeoverMs = performance.now() - stoppedAt;
    }
    if (done === fleet.length) break;
  }
  const ms = performance.now() - started;
  const processCosts = (await Promise.all(made.map((i) => i.costs()))).filter((c): c is Costs => c !== undefined);
  const costs = processes ? sumCosts(processCosts) : take();
  const failed = Number((await monitor.get<{ n: number }>("SELECT COUNT(*) AS n FROM deploy_deployments WHERE batch_id = ? AND status <> 'Succeeded'", [`bat_${run}`]))?.n ?? 0);
  const byHolder = await monitor.all<{ holder: string; n: number; last: number }>(
    'SELECT holder, COUNT(*) AS n, MAX(finished_at) AS last FROM deploy_deployments WHERE batch_id = ? GROUP BY holder ORDER BY holder', [`bat_${run}`],
  );
  const perInstance = byHolder.map((h) => ({ holder: String(h.holder), finished: Number(h.n), lastMs: Number(h.last) - now }));
  for (const i of made) if (i !== victim) await i.stop();
  await monitor.close();
  const beyondOne = fleet.reduce((s, m) => s + Math.max(0, scriptedMachine(m.machineId).uploads - 1), 0);
  return { ms, takeoverMs, failed, beyondOne, inFlightAtStop, mostAtOneGateway, perInstance, costs };
}

/** Round trips per deployment, the kinds that cost most first. */
function roundTripsLine(costs: Costs, deployments: number): string {
  const total = Object.values(costs.roundTrips).reduce((s, n) => s + n, 0);
  const kinds = Object.entries(costs.roundTrips).sort((a, b) => b[1] - a[1]).slice(0, 6).map(([k, n]) => `${k} ${(n / deployments).toFixed(2)}`);
  return `${(total / deployments).toFixed(2)} (${kinds.join(', ')})`;
}

/** A text option's value: `--key value` or `--key=value`. */
function textOption(args: readonly string[], key: string): string | undefined {
  const i = args.findIndex((a) => a === `--${key}` || a.startsWith(`--${key}=`));
  if (i < 0) return undefined;
  return args[i]?.includes('=') ? args[i]?.slice(key.length + 3) : args[i + 1];
}

function onlyPhases(args: readonly string[]): Set<number> | undefined {
  const value = textOption(args, 'only');
  return value === undefined ? undefined : new Set(value.split(',').map(Number).filter((n) => Number.isInteger(n)));
}

export async function run(args: string[]): Promise<void> {
  const machines = option(args, 'machines', 1000);
  const gatewayCount = option(args, 'gateways', 10);
  const kib = option(args, 'kib', 256);
  const rate = option(args, 'rate', 256);
  const leaseMs = option(args, 'lease-ms', 5000);
  const only = onlyPhases(args);
  const transferMs = Math.round((kib / rate) * 1000);
  const content = program(kib);
  const perGateway = Math.ceil(machines / gatewayCount);
  const ideal = Math.ceil(perGateway / TRANSFERS_PER_GATEWAY) * transferMs;
  const gws: TestGateway[] = [];
  const links = new Map<string, GatewayLink>();
  const gateways: Record<string, { url: string; key: string }> = {};
  const fleet: FleetMachine[] = [];
  const dirs: string[] = [];
  const postgresUrl = process.env.PROGRAMS_DATABASE_URL;
  const schemas: string[] = [];
  startCosts();
  try {
    for (let g = 0; g < gatewayCount; g++) {
      const ids = Array.from({ length: Math.min(perGateway, machines - g * perGateway) }, (_, i) => `S${g}-${String(i + 1).padStart(3, '0')}`);
      const gw = await startTestGateway({ machines: ids.map((id) => ({ ...scriptedMachineConfig(id), tasks: { CNCStatus: { enabled: true, intervalMs: 60_000 } } })) }, undefined, { drivers: DRIVERS_WITH_SCRIPTED });
      gws.push(gw);
      const url = await gw.gateway.listen({ host: '127.0.0.1', port: 0 });
      const key = ((await gw.request('POST', '/api/security/secret-key/create', { username: 'admin', label: 'program service' })).body.data as { key: string }).key;
      links.set(`gw_${g}`, new HttpGatewayLink(url, key, { timeoutMs: 120_000 }));
      gateways[`gw_${g}`] = { url, key };
      for (const id of ids) {
        scriptedMachine(id).uploadDelayMs = transferMs;
        fleet.push({ id: `mch_${id}`, gatewayId: `gw_${g}`, machineId: id, name: id, driver: 'scripted', system: 'FANUC', model: '0i-MF', present: true, programDir: DIR, transformProfile: null });
      }
    }
    const profiles = textOption(args, 'cpu-prof-dir');
    const setup: Setup = { fleet, linkOf: (gatewayId) => links.get(gatewayId) as GatewayLink, gateways, leaseMs, execArgv: profiles ? ['--cpu-prof', `--cpu-prof-dir=${profiles}`] : [] };
    const sqlite = (): DatabaseLocation => {
      const dir = mkdtempSync(join(tmpdir(), 'bench-scale-'));
      dirs.push(dir);
      return { engine: 'sqlite', file: join(dir, 'programs.db') };
    };
    const postgres = async (): Promise<DatabaseLocation> => {
      const schema = `bench_scale_${randomBytes(4).toString('hex')}`;
      const admin = await PostgresDatabase.open(postgresUrl as string, { max: 1, applicationName: UNCOUNTED });
      await admin.write((tx) => tx.run(`CREATE SCHEMA ${schema}`));
      await admin.close();
      schemas.push(schema);
      return { engine: 'postgres', url: `${postgresUrl}${(postgresUrl as string).includes('?') ? '&' : '?'}options=${encodeURIComponent(`-c search_path=${schema}`)}`, max: 6 };
    };
    const rows: [string, string, string][] = [[`ideal (${perGateway} machines per gateway, ${TRANSFERS_PER_GATEWAY} at once, ${transferMs} ms each)`, `${(ideal / 1000).toFixed(1)} s`, '']];
    const figures: Record<string, unknown> = { idealMs: ideal };
    let oneInstanceMs: number | undefined;
    const measure = async (phase: number, label: string, key: string, location: () => Promise<DatabaseLocation> | DatabaseLocation, n: number, processes: boolean, stopOneAt?: number) => {
      if (only && !only.has(phase)) return;
      const r = await runPhase(await location(), n, processes, setup, content, key, stopOneAt);
      const target = stopOneAt !== undefined ? 'every deployment ends once' : n === 1 ? '<= 1.25 × ideal' : `<= one instance${oneInstanceMs ? ` (${(oneInstanceMs / ideal).toFixed(2)} ×)` : ''}`;
      if (key === 'postgres1') oneInstanceMs = r.ms;
      rows.push([`${phase}. ${label}`, `${(r.ms / 1000).toFixed(1)} s = ${(r.ms / ideal).toFixed(2)} × ideal`, target]);
      rows.push(['   not Succeeded / uploads beyond one per machine', `${r.failed} / ${r.beyondOne}`, stopOneAt !== undefined ? `0 / at most the transfers the stop cut` : '0 / 0']);
      if (r.inFlightAtStop !== null) rows.push(['   transfers in flight at the stop', String(r.inFlightAtStop), '']);
      // The ideal counts TRANSFERS_PER_GATEWAY at once; several instances each take that many, and the scripted machines do not slow down for it.
      rows.push(['   most uploads at once at one gateway (sampled)', String(r.mostAtOneGateway), `<= ${TRANSFERS_PER_GATEWAY} per instance`]);
      // How the work was shared: an instance that finishes long before the other had less of it.
      rows.push(['   deployments finished per instance, the last at', r.perInstance.map((p) => `${p.holder.slice(p.holder.lastIndexOf('-') + 1)}: ${p.finished} by ${(p.lastMs / 1000).toFixed(1)} s`).join(', '), '']);
      if (r.takeoverMs !== null) rows.push(['   takeover after the holder of most stopped', `${(r.takeoverMs / 1000).toFixed(1)} s`, `<= lease + 2 s = ${((leaseMs + 2000) / 1000).toFixed(1)} s`]);
      rows.push([`   round trips per deployment`, roundTripsLine(r.costs, fleet.length), '']);
      rows.push([`   CPU per deployment${processes ? ' (instances\' processes)' : ' (this process, gateways included)'} / event loop max, p99`, `${(r.costs.cpuMs / fleet.length).toFixed(1)} ms / ${r.costs.loopMaxMs} ms, ${r.costs.loopP99Ms} ms`, '']);
      figures[key] = { ms: Math.round(r.ms), ratio: Number((r.ms / ideal).toFixed(2)), failed: r.failed, uploadsBeyondOne: r.beyondOne, inFlightAtStop: r.inFlightAtStop, mostAtOneGateway: r.mostAtOneGateway, perInstance: r.perInstance, takeoverMs: r.takeoverMs === null ? null : Math.round(r.takeoverMs), costs: r.costs };
    };
    await measure(1, 'one instance, SQLite', 'sqlite1', sqlite, 1, false);
    if (postgresUrl) {
      await measure(2, 'one instance, PostgreSQL', 'postgres1', postgres, 1, false);
      await measure(3, 'two instances, PostgreSQL, one process', 'postgres2', postgres, 2, false);
      await measure(4, 'two instances, PostgreSQL, two processes', 'postgres2processes', postgres, 2, true);
      await measure(5, 'two instances, PostgreSQL, one process, one stopped a third of the way', 'postgresStop', postgres, 2, false, Math.floor(machines / 3));
      await measure(6, 'two instances, PostgreSQL, two processes, one killed a third of the way', 'postgresKill', postgres, 2, true, Math.floor(machines / 3));
    } else {
      rows.push(['PostgreSQL phases', 'skipped', 'set PROGRAMS_DATABASE_URL']);
      process.stdout.write('PostgreSQL phases skipped: PROGRAMS_DATABASE_URL is not set\n');
    }
    printTable(`deploy-scale: ${machines} machines behind ${gatewayCount} gateways over HTTP, ${kib} KiB at ${rate} KiB/s, lease ${leaseMs} ms`, rows);
    process.stdout.write(`${JSON.stringify({ machines, gateways: gatewayCount, kib, rate, leaseMs, ...figures })}\n`);
  } finally {
    for (const gw of gws) await gw.stop();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
    if (postgresUrl && schemas.length > 0) {
      const admin = await PostgresDatabase.open(postgresUrl, { max: 1, applicationName: UNCOUNTED });
      for (const schema of schemas) await admin.write((tx) => tx.run(`DROP SCHEMA ${schema} CASCADE`));
      await admin.close();
    }
  }
}

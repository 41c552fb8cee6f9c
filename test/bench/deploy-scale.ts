/**
 * Deployments at scale, and several instances: `--machines` (1,000) scripted
 * machines behind `--gateways` (10) gateways in this process, each reached
 * over HTTP; one program of `--kib` (256) KiB to all of them. A machine takes
 * a transfer at `--rate` KiB/s (256: a FOCAS Ethernet transfer of 256 KiB
 * takes about a second on a Fanuc 0i; the read-back is not slowed), so one
 * gateway's 100 machines at 4 transfers at once take 25 s at best, which
 * keeps the whole benchmark within 5 minutes on 2 cores.
 *
 * Runs, each on a fresh database, each from the batch stored to its last
 * final status, against the ideal (the slowest gateway's transfers over its
 * slots):
 *  1. one instance on SQLite;
 *  2. one instance on PostgreSQL;
 *  3. two instances on PostgreSQL, the batch claimed by both;
 *  4. two instances on PostgreSQL, the one holding more stopped hard (no
 *     further write, no lease given back) a third of the way: the takeover
 *     time, from the stop until the other holds everything left.
 * The deployment runners are the service's (leases, rounds, audit); the
 * REST layer and the fleet plugin are not in the measured path. The
 * PostgreSQL runs use PROGRAMS_DATABASE_URL, each in a schema of its own
 * that is dropped after; without it they are skipped, with a line saying so.
 *
 *   npm run bench -- deploy-scale [--machines 1000] [--gateways 10] [--kib 256] [--rate 256] [--lease-ms 5000]
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HttpGatewayLink } from '../../core/gateway-link/http.js';
import type { GatewayLink } from '../../core/gateway-link/types.js';
import { SqliteDatabase } from '../../core/store/database.js';
import { PostgresDatabase } from '../../core/store/postgres-database.js';
import type { SqlDatabase } from '../../core/store/sql-database.js';
import { DEPLOYMENT_MACHINE_VERSION } from '../../plugins/deployments/machine.js';
import { TRANSFERS_PER_GATEWAY } from '../../plugins/deployments/runner.js';
import type { FleetMachine } from '../../plugins/gateways/service.js';
import { deploymentInstance, type DeploymentInstance } from '../fixtures/deployment-instance.js';
import { startTestGateway, type TestGateway } from '../fixtures/gateway.js';
import { DRIVERS_WITH_SCRIPTED, scriptedMachine, scriptedMachineConfig } from '../fixtures/scripted-machine.js';
import { option, printTable } from './stats.js';

const DIR = '//CNC_MEM/USER/PATH1/';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
type Opener = { open(): Promise<SqlDatabase> };

function program(kib: number): Buffer {
  const lines = ['%', 'O7001 (SCALE)'];
  for (let i = 1, size = 20; size < kib * 1024; i++) {
    const line = `N${i} G1 X${(i * 7) % 5000}.5 Y${(i * 13) % 3000}.5 F${200 + (i % 9) * 25}`;
    lines.push(line);
    size += line.length + 1;
  }
  return Buffer.from(`${lines.join('\n')}\nM30\n%\n`).subarray(0, kib * 1024);
}

/** Stores the batch (with no holder when `unclaimed`, for instances to claim), starts it, and waits for every final status; answers ms and what was stopped. */
async function runBatch(instances: DeploymentInstance[], fleet: readonly FleetMachine[], content: Buffer, run: string, stopOneAt?: number): Promise<{ ms: number; takeoverMs: number | null; failed: number }> {
  const [first] = instances as [DeploymentInstance];
  const sha256 = createHash('sha256').update(content).digest('hex');
  const now = Date.now();
  const planned = fleet.map((m, i) => ({ id: `dep_${run}_${i}`, assignmentId: 'asg_scale', machineId: m.id, gatewayId: m.gatewayId, dir: DIR, fileName: 'O7001', content, sha256 }));
  const started = performance.now();
  const rows = await first.db.write(async (tx) => {
    const inserted = await first.repo.insertBatch(tx, {
      id: `bat_${run}`, versionId: 'ver_scale', purpose: 'deploy', isTrial: false, trialHours: null, key: null, requestHash: run, answer: '{}', createdBy: 'bench', createdAt: now, deadline: now + 600_000,
    }, planned, DEPLOYMENT_MACHINE_VERSION);
    if (instances.length > 1) await tx.run('UPDATE deploy_deployments SET holder = NULL, lease_until = NULL WHERE batch_id = ?', [`bat_${run}`]);
    return inserted;
  }, { transaction: true });
  if (instances.length === 1) {
    first.repo.track(rows);
    for (const r of rows) first.runner.start(r.id, r.deadline);
  }
  await Promise.all(instances.map((i) => i.runner.resumeAll()));
  let takeoverMs: number | null = null;
  let stoppedAt: number | null = null;
  let victim: DeploymentInstance | undefined;
  for (;;) {
    await sleep(200);
    const counts = await first.db.all<{ holder: string | null; done: number; n: number }>(
      'SELECT holder, SUM(CASE WHEN finished_at IS NULL THEN 0 ELSE 1 END) AS done, COUNT(*) AS n FROM deploy_deployments WHERE batch_id = ? GROUP BY holder', [`bat_${run}`],
    );
    const done = counts.reduce((s, c) => s + Number(c.done), 0);
    if (stopOneAt !== undefined && !victim && done >= stopOneAt) {
      const most = [...counts].sort((a, b) => (Number(b.n) - Number(b.done)) - (Number(a.n) - Number(a.done)))[0];
      victim = instances.find((i) => i.holder === most?.holder) ?? first;
      await victim.runner.stop({ release: false });
      stoppedAt = performance.now();
    }
    if (victim && takeoverMs === null && stoppedAt !== null) {
      const left = counts.find((c) => c.holder === victim!.holder);
      if (!left || Number(left.n) === Number(left.done)) takeoverMs = performance.now() - stoppedAt;
    }
    if (done === fleet.length) break;
  }
  const ms = performance.now() - started;
  const failed = Number((await first.db.get<{ n: number }>("SELECT COUNT(*) AS n FROM deploy_deployments WHERE batch_id = ? AND status <> 'Succeeded'", [`bat_${run}`]))?.n ?? 0);
  for (const i of instances) if (i !== victim) await i.runner.stop();
  return { ms, takeoverMs, failed };
}

export async function run(args: string[]): Promise<void> {
  const machines = option(args, 'machines', 1000);
  const gateways = option(args, 'gateways', 10);
  const kib = option(args, 'kib', 256);
  const rate = option(args, 'rate', 256);
  const leaseMs = option(args, 'lease-ms', 5000);
  const transferMs = Math.round((kib / rate) * 1000);
  const content = program(kib);
  const perGateway = Math.ceil(machines / gateways);
  const ideal = Math.ceil(perGateway / TRANSFERS_PER_GATEWAY) * transferMs;
  const gws: TestGateway[] = [];
  const links = new Map<string, GatewayLink>();
  const fleet: FleetMachine[] = [];
  const dirs: string[] = [];
  const postgresUrl = process.env.PROGRAMS_DATABASE_URL;
  const schemas: string[] = [];
  try {
    for (let g = 0; g < gateways; g++) {
      const ids = Array.from({ length: Math.min(perGateway, machines - g * perGateway) }, (_, i) => `S${g}-${String(i + 1).padStart(3, '0')}`);
      const gw = await startTestGateway({ machines: ids.map((id) => ({ ...scriptedMachineConfig(id), tasks: { CNCStatus: { enabled: true, intervalMs: 60_000 } } })) }, undefined, { drivers: DRIVERS_WITH_SCRIPTED });
      gws.push(gw);
      const url = await gw.gateway.listen({ host: '127.0.0.1', port: 0 });
      const key = ((await gw.request('POST', '/api/security/secret-key/create', { username: 'admin', label: 'program service' })).body.data as { key: string }).key;
      links.set(`gw_${g}`, new HttpGatewayLink(url, key, { timeoutMs: 120_000 }));
      for (const id of ids) {
        scriptedMachine(id).uploadDelayMs = transferMs;
        fleet.push({ id: `mch_${id}`, gatewayId: `gw_${g}`, machineId: id, name: id, driver: 'scripted', system: 'FANUC', model: '0i-MF', present: true, programDir: DIR, transformProfile: null });
      }
    }
    const linkOf = (gatewayId: string) => links.get(gatewayId) as GatewayLink;
    const sqlite = (): Opener => {
      const dir = mkdtempSync(join(tmpdir(), 'bench-scale-'));
      dirs.push(dir);
      return { open: () => SqliteDatabase.open(join(dir, 'programs.db')) };
    };
    const postgres = async (): Promise<Opener> => {
      const schema = `bench_scale_${randomBytes(4).toString('hex')}`;
      const admin = await PostgresDatabase.open(postgresUrl as string, { max: 1 });
      await admin.write((tx) => tx.run(`CREATE SCHEMA ${schema}`));
      await admin.close();
      schemas.push(schema);
      const url = `${postgresUrl}${(postgresUrl as string).includes('?') ? '&' : '?'}options=${encodeURIComponent(`-c search_path=${schema}`)}`;
      return { open: () => PostgresDatabase.open(url, { max: 6 }) };
    };
    const instances = async (opener: Opener, n: number) => {
      const out: DeploymentInstance[] = [];
      for (let i = 0; i < n; i++) out.push(await deploymentInstance(opener, `bench-${i + 1}`, fleet, linkOf, { leaseMs, takeOverAtStart: false, claimLimit: 50 }));
      return out;
    };
    const resetMachines = () => {
      for (const m of fleet) {
        const s = scriptedMachine(m.machineId);
        s.files.clear();
        s.uploads = 0;
      }
    };
    const rows: [string, string, string][] = [[`ideal (${perGateway} machines per gateway, ${TRANSFERS_PER_GATEWAY} at once, ${transferMs} ms each)`, `${(ideal / 1000).toFixed(1)} s`, '']];
    const figures: Record<string, number | null> = { idealMs: ideal };
    const measure = async (label: string, key: string, opener: Opener, n: number, stopOneAt?: number) => {
      resetMachines();
      const made = await instances(opener, n);
      const r = await runBatch(made, fleet, content, key, stopOneAt);
      const uploads = fleet.reduce((s, m) => s + scriptedMachine(m.machineId).uploads, 0);
      for (const i of made) await i.db.close();
      figures[`${key}Ms`] = Math.round(r.ms);
      const target = stopOneAt !== undefined ? 'every deployment ends once' : n === 1 ? '<= 1.25 × ideal' : '<= one instance';
      rows.push([label, `${(r.ms / 1000).toFixed(1)} s = ${(r.ms / ideal).toFixed(2)} × ideal`, target]);
      rows.push([`  not Succeeded / uploads beyond one per machine`, `${r.failed} / ${uploads - fleet.length}`, '0 / 0']);
      if (r.takeoverMs !== null) {
        figures.takeoverMs = Math.round(r.takeoverMs);
        rows.push(['  takeover after the holder of most stopped', `${(r.takeoverMs / 1000).toFixed(1)} s`, `<= lease + 2 s = ${((leaseMs + 2000) / 1000).toFixed(1)} s`]);
      }
    };
    await measure('one instance, SQLite', 'sqlite1', sqlite(), 1);
    if (postgresUrl) {
      await measure('one instance, PostgreSQL', 'postgres1', await postgres(), 1);
      await measure('two instances, PostgreSQL', 'postgres2', await postgres(), 2);
      await measure('two instances, PostgreSQL, one stopped a third of the way', 'postgresKill', await postgres(), 2, Math.floor(machines / 3));
    } else {
      rows.push(['PostgreSQL runs', 'skipped', 'set PROGRAMS_DATABASE_URL']);
      process.stdout.write('PostgreSQL runs skipped: PROGRAMS_DATABASE_URL is not set\n');
    }
    printTable(`deploy-scale: ${machines} machines behind ${gateways} gateways over HTTP, ${kib} KiB at ${rate} KiB/s, lease ${leaseMs} ms`, rows);
    process.stdout.write(`${JSON.stringify({ machines, gateways, kib, rate, leaseMs, ...figures })}\n`);
  } finally {
    for (const gw of gws) await gw.stop();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
    if (postgresUrl && schemas.length > 0) {
      const admin = await PostgresDatabase.open(postgresUrl, { max: 1 });
      for (const schema of schemas) await admin.write((tx) => tx.run(`DROP SCHEMA ${schema} CASCADE`));
      await admin.close();
    }
  }
}

/**
 * Fencing, on every engine: SQLite (test/plugins/deployments/fencing.test.ts)
 * and PostgreSQL (test/peers/deployments-fencing-postgres.test.ts). The
 * holder of a batch runs in a process of its own (test/fixtures/deployment-process.ts),
 * reaching the gateway of this process over HTTP; its event loop is blocked
 * in the middle of the batch for longer than its lease, while it lives,
 * until the other instance (in this process) has taken its deployments
 * over. Once it runs again it must not touch a machine: the scripted
 * machines count what reaches them, and its link notes every transfer it
 * starts. It stalls either between two of its steps, or at the worst
 * moment: in a transfer, after every check of its hold, just before its
 * link sends the upload; then only the gateway can stop it.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HttpGatewayLink } from '../../../core/gateway-link/http.js';
import type { SqlDatabase } from '../../../core/store/sql-database.js';
import { DEPLOYMENT_MACHINE_VERSION } from '../../../plugins/deployments/machine.js';
import { TRANSFERS_PER_GATEWAY } from '../../../plugins/deployments/runner.js';
import type { DeploymentRow } from '../../../plugins/deployments/store.js';
import type { FleetMachine } from '../../../plugins/gateways/service.js';
import type { EngineUnderTest } from '../../fixtures/database-engines.js';
import { deploymentInstance, type DeploymentInstance } from '../../fixtures/deployment-instance.js';
import { startDeploymentProcess, type StartedTransfer } from '../../fixtures/deployment-process.js';
import type { TestGateway } from '../../fixtures/gateway.js';
import { startScriptedGateway } from '../../fixtures/scripted-gateway.js';
import { scriptedMachine } from '../../fixtures/scripted-machine.js';
import { until } from '../../fixtures/until.js';
import { batchOf } from './store-cases.js';

const LEASE_MS = 2000;
const DIR = '//CNC_MEM/USER/PATH1/';
const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

export function fencingCases(engine: EngineUnderTest, prefix: string): void {
  describe(`fencing on ${engine.name}`, () => {
    const MACHINES = Array.from({ length: 16 }, (_, i) => `${prefix}-F${String(i + 1).padStart(2, '0')}`);
    const fleet: FleetMachine[] = MACHINES.map((machineId, i) => ({
      id: `mch_${prefix}f${i + 1}`, gatewayId: 'gw_1', machineId, name: machineId, driver: 'scripted', system: 'FANUC', model: '0i-MF', present: true, programDir: DIR, transformProfile: null,
    }));
    let gw: TestGateway;
    let url: string;
    let key: string;
    const opened: SqlDatabase[] = [];
    const dir = mkdtempSync(join(tmpdir(), 'fencing-'));

    beforeAll(async () => {
      ({ gw, url, key } = await startScriptedGateway(MACHINES));
      for (const id of MACHINES) scriptedMachine(id).uploadDelayMs = 300;
    }, 30_000);
    afterAll(async () => {
      for (const db of opened.splice(0)) await db.close();
      await gw?.stop();
      rmSync(dir, { recursive: true, force: true });
    });

    const setup = (): Setup => ({ engine, prefix, fleet, machines: MACHINES, url, key, dir, opened });

    it('PV-24 a holder whose event loop stalls longer than its lease, while it lives, never touches a machine again once another instance has taken its deployments over; each machine gets the file once', async () => {
      await stalledHolder(setup(), 'between-steps');
    }, 90_000);

    it('PV-24 a holder stalled longer than its lease just before its link sends an upload, every check of its hold passed, is refused by the gateway as superseded when it sends; each machine gets the file once', async () => {
      await stalledHolder(setup(), 'upload');
    }, 90_000);
  });
}

/** What the cases share: the engine, the fleet behind one gateway of scripted machines, and that gateway. */
interface Setup {
  engine: EngineUnderTest;
  prefix: string;
  fleet: FleetMachine[];
  machines: string[];
  url: string;
  key: string;
  dir: string;
  opened: SqlDatabase[];
}

/** A batch run by a holder in a process of its own that stalls `at` the moment given, taken over meanwhile by an instance in this process. */
async function stalledHolder({ engine, prefix, fleet, machines: MACHINES, url, key, dir, opened }: Setup, at: 'between-steps' | 'upload'): Promise<void> {
  const database = await engine.fresh();
  // Each case its own deployments (the gateway keeps the epochs it has seen of each), on machines that start afresh.
  const tag = at === 'upload' ? 'u' : 's';
  const machines = MACHINES.map(scriptedMachine);
  // An upload a case before this one left under way would land in this one's counts.
  await until('no upload left under way', () => machines.every((m) => m.uploadsInFlight.size === 0), Boolean);
  for (const m of machines) {
    m.files.clear();
    m.fileEvents.length = 0;
    m.uploads = 0;
  }
  // The instance that takes over, in this process (migrating the database first). Its own lease is longer, so that on a loaded
  // machine it does not in turn renew too late and lose a deployment back to the stalled one, which would hold it rightly then.
  const survivor: DeploymentInstance = await deploymentInstance(database, `${prefix}-survivor-${tag}`, fleet, () => new HttpGatewayLink(url, key), { leaseMs: 3 * LEASE_MS, takeOverAtStart: false });
  opened.push(survivor.db);
  const content = Buffer.from(`%\nO1000 (${prefix} FENCING)\n${Array.from({ length: 300 }, (_, i) => `N${i + 1} G01 X${i}. F300`).join('\n')}\nM30\n%\n`);
  const planned = fleet.map((m, i) => ({ id: `dep_${prefix}${tag}${String(i + 1).padStart(2, '0')}`, assignmentId: 'asg_1', machineId: m.id, gatewayId: m.gatewayId, dir: DIR, fileName: 'O1000', content, sha256: sha(content) }));
  await survivor.db.write(async (tx) => {
    await survivor.repo.insertBatch(tx, batchOf(`bat_${prefix}${tag}`, null, Date.now()), planned, DEPLOYMENT_MACHINE_VERSION);
    // Nobody holds it yet: the process claims all of it, what it can start soon at a time.
    await tx.run('UPDATE deploy_deployments SET holder = NULL, lease_until = NULL');
  }, { transaction: true });
  const holder = await startDeploymentProcess({
    location: database.location, holder: `${prefix}-stalling-${tag}`, leaseMs: LEASE_MS, fleet, gateways: { gw_1: { url, key } }, runner: { takeOverAtStart: false },
  });
  const released = join(dir, `${prefix}-released-${tag}`);
  try {
    // Its slots at the gateway and as many again; the rest as its deployments end.
    expect((await holder.ask<{ resumed: number }>({ cmd: 'resume' })).resumed).toBe(2 * TRANSFERS_PER_GATEWAY);
    const heldBy = async (who: string) => Number((await survivor.db.get<{ n: number }>('SELECT COUNT(*) AS n FROM deploy_deployments WHERE batch_id = ? AND holder = ?', [`bat_${prefix}${tag}`, who]))?.n);
    await until('the holder holds the whole batch', () => heldBy(`${prefix}-stalling-${tag}`), (n) => n === MACHINES.length);
    expect(await survivor.runner.resumeAll()).toBe(0);

    // Mid-batch: some files stored, some uploads under way, the rest waiting for the gateway's slots.
    const stored = () => machines.filter((m) => m.fileEvents.some((e) => e.kind === 'upload-stored')).length;
    await until('the batch under way', () => ({ stored: stored(), inFlight: machines.filter((m) => m.uploadsInFlight.size > 0).length }), (n) => n.stored >= 4 && n.inFlight > 0);
    // Between steps: at once. At an upload: the next one the holder sends, after every check of its hold.
    const stalling = holder.ask<{ stalledMs: number; until: number }>({ cmd: 'stall', until: released, ...(at === 'upload' ? { at } : {}) });
    const rows = async (): Promise<DeploymentRow[]> => Promise.all(planned.map(async (d) => (await survivor.repo.get(d.id)) as DeploymentRow));
    // The stalled holder's leases end; the other instance claims every deployment it had not finished.
    await until('the takeover', rows, (all) => all.every((r) => r.finishedAt !== null || r.holder === survivor.holder));
    const takenOver = (await rows()).filter((r) => r.finishedAt === null);
    expect(takenOver.length).toBeGreaterThan(0);
    // Epoch 1 when stored, 2 when the stalling holder claimed it, 3 now.
    expect(takenOver.map((r) => r.leaseEpoch)).toEqual(takenOver.map(() => 3));
    // The new holder has announced its epoch to the gateway: the stalled holder's is refused there from now on (asking this does not touch a machine).
    const gateway = new HttpGatewayLink(url, key);
    const stale = takenOver.map((r) => ({ machineID: fleet.find((m) => m.id === r.machineId)?.machineId as string, dir: DIR, name: 'O1000', fence: { lease: r.id, epoch: 2 } }));
    await until('the new epochs at the gateway', () => gateway.announceFences(stale), (answers) => answers.every((a) => a.superseded && a.highestEpoch === 3));
    // Its lease may have been renewed a moment before the stall: hold it for longer than a whole lease from when it began.
    const began = Number(await until('the stall begun', () => { try { return readFileSync(`${released}.began`, 'utf8'); } catch { return ''; } }, (t) => t !== ''));
    await new Promise((r) => setTimeout(r, Math.max(0, began + LEASE_MS + 250 - Date.now())));
    // It runs again, while the other instance works on the same deployments.
    writeFileSync(released, '');
    const stall = await stalling;
    expect(stall.stalledMs).toBeGreaterThan(LEASE_MS);

    await until('every deployment finished', rows, (all) => all.every((r) => r.finishedAt !== null), 30_000);
    // Give the stalled holder time to do whatever it would still do.
    await new Promise((r) => setTimeout(r, LEASE_MS));
    const { transfers } = await holder.ask<{ transfers: StartedTransfer[] }>({ cmd: 'transfers' });
    // What it started after the stall (if anything: one decided before it and sent after) was refused at the gateway.
    expect(transfers.filter((t) => t.at >= stall.until - stall.stalledMs && t.outcome !== 'superseded')).toEqual([]);
    // Stalled at an upload, it did send it once it ran again (with any other it had decided on before the stall), under its old
    // epoch: only the gateway stood between it and the machine.
    const late = transfers.filter((t) => t.kind === 'upload' && t.at >= stall.until);
    if (at === 'upload') expect(late.length).toBeGreaterThan(0);
    expect(late.map((t) => [t.fence?.epoch, t.outcome])).toEqual(late.map(() => [2, 'superseded']));

    const after = await rows();
    expect(after.map((r) => [r.status, r.readBackSha256])).toEqual(after.map(() => ['Succeeded', sha(content)]));
    for (const r of takenOver) expect(after.find((a) => a.id === r.id)?.holder).toBe(survivor.holder);
    // Counted at the machines: one upload each, and each holds the verified bytes.
    for (const [i, m] of machines.entries()) {
      expect({ machine: MACHINES[i], uploads: m.fileEvents.filter((e) => e.kind === 'upload-begun').length, sha: sha(m.files.get(`${DIR}O1000`) ?? Buffer.alloc(0)) })
        .toEqual({ machine: MACHINES[i], uploads: 1, sha: sha(content) });
    }
    const finals = await survivor.db.all<{ entity_id: string; n: number }>(
      "SELECT entity_id, COUNT(*) AS n FROM audit_log WHERE action IN ('deployment.succeeded', 'deployment.failed') GROUP BY entity_id ORDER BY entity_id",
    );
    expect(finals.map((f) => [f.entity_id, Number(f.n)])).toEqual(planned.map((d) => [d.id, 1]));
  } finally {
    writeFileSync(released, '');
    const stopped = holder.ask({ cmd: 'stop', release: false }).catch(() => undefined);
    await Promise.race([stopped, new Promise((r) => setTimeout(r, 10_000))]);
    if (holder.child.exitCode === null) holder.child.kill('SIGKILL');
    await holder.exited;
    await survivor.runner.stop();
  }
}

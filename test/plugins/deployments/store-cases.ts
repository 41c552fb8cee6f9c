/**
 * The deployments' and trials' stores on every database engine: the same
 * cases on SQLite (test/plugins/deployments/store.test.ts) and on PostgreSQL
 * (test/peers/deployments-store-postgres.test.ts): a batch stored with its
 * contents once, state changes in rounds, a final status stored once with
 * one audit record and its release, listings with their pages, the
 * idempotency key, and the trials' rows.
 */
import { createHash } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { applyMigrations } from '../../../core/store/migrations.js';
import type { SqlDatabase } from '../../../core/store/sql-database.js';
import { DEPLOYMENT_MACHINE_VERSION } from '../../../plugins/deployments/machine.js';
import { claimDeployments, leaseOf, releaseDeployments, renewDeployments } from '../../../plugins/deployments/lease.js';
import { LEASE_MIGRATIONS, TRACE_MIGRATIONS } from '../../../plugins/deployments/schema.js';
import { DeploymentRepository, MIGRATIONS, type NewDeployment } from '../../../plugins/deployments/store.js';
import { TRIAL_MACHINE_VERSION } from '../../../plugins/deployments/trial-machine.js';
import { TRIAL_MIGRATIONS, TrialRepository } from '../../../plugins/deployments/trial-store.js';
import { trialRulesSchema, type TrialEvidence } from '../../../plugins/deployments/trial-verdict.js';
import { AuditChain } from '../../../core/roles/programs/audit/chain.js';
import type { EngineUnderTest } from '../../fixtures/database-engines.js';

const T0 = Date.UTC(2026, 10, 26, 8, 0, 0);
const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
const DIR = '//CNC_MEM/USER/PATH1/';

export const planned = (n: number, content: Buffer, prefix = 'dep'): NewDeployment[] =>
  Array.from({ length: n }, (_, i) => ({
    id: `${prefix}_${String(i + 1).padStart(4, '0')}`, assignmentId: 'asg_1', machineId: `mch_${String(i + 1).padStart(4, '0')}`, gatewayId: `gw_${i % 3}`,
    dir: DIR, fileName: 'O1000', content, sha256: sha(content),
  }));

export const batchOf = (id: string, key: string | null = null, createdAt = T0) => ({
  id, versionId: 'ver_1', purpose: 'deploy' as const, isTrial: false, trialHours: null, key, requestHash: `hash of ${id}`, answer: JSON.stringify({ batchId: id }),
  createdBy: 'admin', createdAt, deadline: createdAt + 600_000,
});

/** A migrated database with the deployments' and trials' tables, and the audit its final statuses append to. */
export async function deploymentsDatabase(db: SqlDatabase): Promise<{ repo: DeploymentRepository; trials: TrialRepository }> {
  await applyMigrations(db, 'deployments', [...MIGRATIONS, ...TRIAL_MIGRATIONS, ...LEASE_MIGRATIONS, ...TRACE_MIGRATIONS]);
  const lease = leaseOf({ holder: 'test-instance' });
  const repo = new DeploymentRepository(db, await AuditChain.open(db, { timeZone: 'UTC' }), lease);
  return { repo, trials: new TrialRepository(db, lease) };
}

export function deploymentStoreCases(engine: EngineUnderTest): void {
  describe(`deployments store on ${engine.name}`, () => {
    const opened: SqlDatabase[] = [];
    afterEach(async () => {
      for (const db of opened.splice(0)) await db.close();
    });

    async function store() {
      const db = await (await engine.fresh()).open();
      opened.push(db);
      return { db, ...(await deploymentsDatabase(db)) };
    }

    const finals = (db: SqlDatabase) =>
      db.all<{ entity_id: string; action: string }>("SELECT entity_id, action FROM audit_log WHERE action IN ('deployment.succeeded', 'deployment.failed') ORDER BY seq");

    it('stores a batch, its content once and its deployments as queued, and answers them by key, id, page and machine', async () => {
      const { db, repo } = await store();
      const content = Buffer.from('%\nO1000 (ÄÖÜ ✓)\nM30\n%\n\0\xff');
      const rows = await db.write((tx) => repo.insertBatch(tx, batchOf('bat_1', 'admin:key-1'), planned(260, content), DEPLOYMENT_MACHINE_VERSION), { transaction: true });
      expect(rows).toHaveLength(260);
      expect(await repo.get('dep_0001')).toEqual(rows[0]);
      expect((await repo.content(sha(content))).equals(content)).toBe(true);
      expect(await repo.batchByKey('admin:key-1')).toEqual({ id: 'bat_1', requestHash: 'hash of bat_1', answer: '{"batchId":"bat_1"}' });
      expect(await repo.batchByKey('admin:key-2')).toBeUndefined();
      expect((await repo.unfinished()).map((r) => r.id)).toEqual(rows.map((r) => r.id));
      const page1 = await repo.list({ batchId: 'bat_1' }, 100, null);
      const last = page1[page1.length - 1]!;
      const page2 = await repo.list({ batchId: 'bat_1' }, 200, { createdAt: last.createdAt, id: last.id });
      expect([...page1, ...page2].map((r) => r.id)).toEqual(rows.map((r) => r.id).reverse());
      expect(await repo.unfinishedOn('mch_0002')).toEqual([{ dir: DIR, fileName: 'O1000' }]);
    });

    it('keeps a batch\'s trace context with the batch and with each of its deployments, and none for a batch made without tracing', async () => {
      const { db, repo } = await store();
      const content = Buffer.from('%\nO1000\nM30\n%\n');
      const trace = { traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01', tracestate: 'vendor=opaque' };
      const rows = await db.write((tx) => repo.insertBatch(tx, { ...batchOf('bat_t'), trace }, planned(3, content), DEPLOYMENT_MACHINE_VERSION), { transaction: true });
      expect(rows.map((r) => r.trace)).toEqual([trace, trace, trace]);
      for (const row of rows) expect((await repo.get(row.id))?.trace).toEqual(trace);
      expect(await db.get('SELECT trace_parent, trace_state FROM deploy_batches WHERE id = ?', ['bat_t'])).toEqual({ trace_parent: trace.traceparent, trace_state: trace.tracestate });
      const plain = await db.write((tx) => repo.insertBatch(tx, batchOf('bat_u'), planned(1, content, 'depu'), DEPLOYMENT_MACHINE_VERSION), { transaction: true });
      expect((await repo.get(plain[0]!.id))?.trace).toBeNull();
    });

    it('stores the state changes of many deployments in one round, and each final status once with one audit record and its release', async () => {
      const { db, repo } = await store();
      const content = Buffer.from('%\nO1000\nM30\n%\n');
      const rows = await db.write((tx) => repo.insertBatch(tx, batchOf('bat_1'), planned(150, content), DEPLOYMENT_MACHINE_VERSION), { transaction: true });
      repo.track(rows);
      expect(rows.map((r) => r.leaseEpoch)).toEqual(rows.map(() => 1));
      expect(await Promise.all(rows.map((r, i) => repo.transition(r.id, 1, 'Transferring', null, T0 + 1, `{"n":${i}}`, DEPLOYMENT_MACHINE_VERSION)))).toEqual(rows.map(() => true));
      expect(await Promise.all(rows.map((r) => repo.openTransfer(r.id, 1, true, T0 + 1)))).toEqual(rows.map(() => true));
      const stored = await Promise.all(rows.map((r, i) =>
        i % 2 ? repo.finish(r.id, 1, 'Failed', 'read-back: not the same', T0 + 2, '{}') : repo.finish(r.id, 1, 'Succeeded', null, T0 + 2, '{}', r.sha256)));
      expect(stored.every((s) => s?.finishedAt === T0 + 2)).toBe(true);
      // A second final status for the same deployment changes nothing.
      expect(await repo.finish('dep_0001', 1, 'Failed', 'late', T0 + 3, '{}')).toBeUndefined();
      const first = (await repo.get('dep_0001'))!;
      expect(first).toMatchObject({ status: 'Succeeded', transfers: 1, readBackSha256: sha(content), finishedAt: T0 + 2 });
      expect(first.timeline.map((t) => t.status)).toEqual(['Queued', 'Transferring', 'Succeeded']);
      expect((await repo.get('dep_0002'))).toMatchObject({ status: 'Failed', reason: 'read-back: not the same' });
      const records = await finals(db);
      expect(records.map((r) => r.entity_id).sort()).toEqual(rows.map((r) => r.id).sort());
      expect(records.filter((r) => r.action === 'deployment.succeeded')).toHaveLength(75);
      expect(await repo.countFailedSince(T0)).toBe(75);
      expect(await repo.release('asg_1', 'mch_0001')).toMatchObject({ versionId: 'ver_1', deploymentId: 'dep_0001', sha256: sha(content), releasedAt: T0 + 2 });
      expect(await repo.release('asg_1', 'mch_0002')).toBeUndefined();
      expect((await repo.releasesOn('mch_0003')).map((r) => r.deploymentId)).toEqual(['dep_0003']);
      expect(await repo.unfinished()).toEqual([]);
    });

    it('refuses a second batch with the same idempotency key, and keeps nothing of it', async () => {
      const { db, repo } = await store();
      const content = Buffer.from('x');
      await db.write((tx) => repo.insertBatch(tx, batchOf('bat_1', 'admin:k'), planned(1, content), DEPLOYMENT_MACHINE_VERSION), { transaction: true });
      await expect(db.write((tx) => repo.insertBatch(tx, batchOf('bat_2', 'admin:k'), planned(1, content, 'other'), DEPLOYMENT_MACHINE_VERSION), { transaction: true })).rejects.toThrow();
      expect(await repo.get('other_0001')).toBeUndefined();
      expect((await repo.batchByKey('admin:k'))?.id).toBe('bat_1');
    });

    it('stores a state only while its instance holds the deployment under its epoch: one claimed elsewhere after its lease ended ends once, by its new holder', async () => {
      const { db, repo } = await store();
      const other = new DeploymentRepository(db, await AuditChain.open(db, { timeZone: 'UTC' }), leaseOf({ holder: 'other-instance', ms: 30_000 }));
      const rows = await db.write((tx) => repo.insertBatch(tx, batchOf('bat_1'), planned(3, Buffer.from('y')), DEPLOYMENT_MACHINE_VERSION), { transaction: true });
      repo.track(rows);
      expect(rows.map((r) => r.holder)).toEqual(['test-instance', 'test-instance', 'test-instance']);
      expect(await claimDeployments(db, other.lease, T0 + 1000)).toEqual([]);
      expect(await repo.transition('dep_0003', 1, 'Transferring', null, T0 + 20_000, '{}', DEPLOYMENT_MACHINE_VERSION)).toBe(true);
      // Its lease ran out (renewed last at T0 + 20 s by the transition): another instance claims the rest, two at a time, each under a new epoch.
      const claimed = await claimDeployments(db, other.lease, T0 + 31_000, { limit: 2 });
      expect(claimed.map((r) => [r.id, r.holder, r.leaseEpoch])).toEqual([['dep_0001', 'other-instance', 2], ['dep_0002', 'other-instance', 2]]);
      expect(await claimDeployments(db, other.lease, T0 + 31_000)).toEqual([]);
      // The first holder, late, stores nothing more about them, and cannot open a transfer.
      expect(await repo.finish('dep_0001', 1, 'Succeeded', null, T0 + 32_000, '{}', 'a'.repeat(64))).toBeUndefined();
      expect(await repo.transition('dep_0002', 1, 'Verifying', null, T0 + 32_000, '{}', DEPLOYMENT_MACHINE_VERSION)).toBe(false);
      expect(await repo.openTransfer('dep_0002', 1, true, T0 + 32_000)).toBe(false);
      // Nor can the new holder under the epoch it superseded.
      expect(await other.openTransfer('dep_0002', 1, true, T0 + 32_000)).toBe(false);
      expect(await other.openTransfer('dep_0002', 2, true, T0 + 32_000)).toBe(true);
      expect(await other.finish('dep_0001', 2, 'Failed', 'read-back: no file', T0 + 33_000, '{}')).toMatchObject({ status: 'Failed', holder: 'other-instance' });
      expect(await repo.get('dep_0002')).toMatchObject({ status: 'Queued', holder: 'other-instance', transfers: 1, leaseEpoch: 2 });
      expect(await finals(db)).toEqual([{ entity_id: 'dep_0001', action: 'deployment.failed' }]);
      expect([...await renewDeployments(db, repo.lease, T0 + 34_000)]).toEqual([['dep_0003', 1]]);
      expect([...await renewDeployments(db, other.lease, T0 + 34_000)]).toEqual([['dep_0002', 2]]);
      // A clean stop gives the leases back at once; the next claim raises the epoch again.
      await releaseDeployments(db, other.lease);
      expect((await claimDeployments(db, repo.lease, T0 + 34_001)).map((r) => [r.id, r.leaseEpoch])).toEqual([['dep_0002', 3]]);
    });

    it('claims per gateway at most what it is told, less what the instance holds there already, the oldest first, and leaves the rest claimable', async () => {
      const { db, repo } = await store();
      // Nine deployments over three gateways (gw_0, gw_1, gw_2 in turn), stored with their lease already ended.
      await db.write((tx) => repo.insertBatch(tx, batchOf('bat_1'), planned(9, Buffer.from('z')), DEPLOYMENT_MACHINE_VERSION), { transaction: true });
      const claimer = leaseOf({ holder: 'claimer', ms: 30_000 });
      const perGroup = (held: [string, number][]) => ({ column: 'gateway_id', most: 2, held: new Map(held) });
      // Holding one at gw_0 already and two at gw_1: one more at gw_0, none at gw_1, two at gw_2.
      const first = await claimDeployments(db, claimer, T0 + 31_000, { perGroup: perGroup([['gw_0', 1], ['gw_1', 2]]) });
      expect(first.map((r) => [r.id, r.gatewayId, r.holder, r.leaseEpoch])).toEqual([['dep_0001', 'gw_0', 'claimer', 2], ['dep_0003', 'gw_2', 'claimer', 2], ['dep_0006', 'gw_2', 'claimer', 2]]);
      // The next claim starts from what is left at each gateway; the limit caps the statement.
      const next = await claimDeployments(db, claimer, T0 + 31_000, { perGroup: perGroup([]), limit: 3 });
      expect(next.map((r) => r.id)).toEqual(['dep_0002', 'dep_0004', 'dep_0005']);
      expect((await claimDeployments(db, claimer, T0 + 31_000, { perGroup: perGroup([]) })).map((r) => r.id)).toEqual(['dep_0007', 'dep_0008', 'dep_0009']);
    });

    it('keeps trials: inserted with their batch, their verdict, pull-back, transitions and listings', async () => {
      const { db, repo, trials } = await store();
      const content = Buffer.from('%\nO2000\nM30\n%\n');
      const rules = trialRulesSchema.parse({});
      await db.write(async (tx) => {
        const rows = await repo.insertBatch(tx, { ...batchOf('bat_t'), purpose: 'trial', isTrial: true, trialHours: 1.5 }, planned(3, content), DEPLOYMENT_MACHINE_VERSION);
        for (const [i, r] of rows.entries()) {
          await trials.insert(tx, {
            id: `trl_${i + 1}`, deploymentId: r.id, batchId: 'bat_t', assignmentId: 'asg_1', machineId: r.machineId, versionId: 'ver_2', dir: DIR, fileName: 'O2000',
            previous: i === 0 ? { versionId: 'ver_1', sha256: sha(content), dir: DIR, fileName: 'O2000' } : null, rules, trialHours: 1.5, createdBy: 'admin', createdAt: T0 + i,
          }, TRIAL_MACHINE_VERSION);
        }
      }, { transaction: true });
      expect(await trials.get('trl_1')).toMatchObject({ status: 'Deploying', previous: { versionId: 'ver_1' }, rules, trialHours: 1.5, startedAt: null, finishedAt: null });
      expect(await trials.countActive()).toBe(3);
      await trials.started('trl_1', T0 + 10, T0 + 10 + 5_400_000);
      await trials.started('trl_1', T0 + 20, T0 + 20);
      const evidence: TrialEvidence = {
        verdict: 'pass', failedRules: [], inconclusiveBecause: null, baseline: { cycles: 5, medianSec: 61.5, from: T0 - 1000, to: T0 }, trial: { cycles: 4, medianSec: 60, from: T0, to: T0 + 100 },
        cycleChangePct: -2.4, alarms: [], alarmCount: 0, program: 'O2000', truncated: false,
      };
      await db.write(async (tx) => {
        await trials.recordVerdict(tx, 'trl_1', evidence, T0 + 30);
        await trials.setPullBack(tx, 'trl_2', 'dep_pull');
        await trials.transition(tx, 'trl_3', { status: 'Promoted', reason: null, decision: { by: 'admin', onBehalfOf: null, authMethod: 'session', note: 'good', automatic: false }, snapshot: '{}', machineVersion: TRIAL_MACHINE_VERSION, at: T0 + 40, final: true });
      }, { transaction: true });
      await trials.setReason('trl_2', 'waiting for the machine', T0 + 50);
      await trials.finishUnresumable('trl_2', 'interrupted', T0 + 60);
      expect(await trials.get('trl_1')).toMatchObject({ startedAt: T0 + 10, endsAt: T0 + 10 + 5_400_000, verdict: 'pass', evidence, evaluatedAt: T0 + 30 });
      expect(await trials.get('trl_2')).toMatchObject({ status: 'Cancelled', reason: 'interrupted', pullBackDeploymentId: 'dep_pull', finishedAt: T0 + 60 });
      expect(await trials.get('trl_3')).toMatchObject({ status: 'Promoted', decision: { note: 'good' }, finishedAt: T0 + 40 });
      expect((await trials.unfinished()).map((t) => t.id)).toEqual(['trl_1']);
      expect((await trials.unfinishedOn('mch_0001')).map((t) => t.id)).toEqual(['trl_1']);
      expect((await trials.list({}, 2, null)).map((t) => t.id)).toEqual(['trl_3', 'trl_2']);
      expect((await trials.list({}, 2, { createdAt: T0 + 1, id: 'trl_2' })).map((t) => t.id)).toEqual(['trl_1']);
      expect((await trials.list({ status: 'Promoted' }, 10, null)).map((t) => t.id)).toEqual(['trl_3']);
    });
  });
}

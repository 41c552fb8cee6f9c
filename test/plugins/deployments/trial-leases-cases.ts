/**
 * Two program-service instances' trials on one database, on every engine:
 * SQLite (one file opened twice, test/plugins/deployments/trial-leases.test.ts)
 * and PostgreSQL (test/peers/trial-leases-postgres.test.ts). Each instance is
 * the deployments plugin's own wiring (deployment and trial runners, batch
 * starter, pull-back deployer) on its own connections, with its own holder id
 * and link to one real gateway of scripted machines, which count the uploads
 * that reach them; decisions go through the trials' HTTP operation handlers.
 */
import { createHash } from 'node:crypto';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InProcessGatewayLink } from '../../../core/gateway-link/in-process.js';
import { newId } from '../../../core/rest/ids.js';
import type { AnyRestOperation, RestPrincipal } from '../../../core/rest/operation.js';
import type { ProgramsContext, ProgramsServices } from '../../../core/roles/programs/context.js';
import { ServiceRegistry } from '../../../core/runtime/services.js';
import type { SqlDatabase, WriteTx } from '../../../core/store/sql-database.js';
import type { AuditEntry } from '../../../core/roles/programs/audit/chain.js';
import { applyMigrations } from '../../../core/store/migrations.js';
import { leaseOf } from '../../../plugins/deployments/lease.js';
import { LEASE_MIGRATIONS, TRACE_MIGRATIONS } from '../../../plugins/deployments/schema.js';
import { MIGRATIONS } from '../../../plugins/deployments/store.js';
import { TRIAL_MIGRATIONS } from '../../../plugins/deployments/trial-store.js';
import type { TrialRow } from '../../../plugins/deployments/trial-store.js';
import { trialOperations } from '../../../plugins/deployments/trials.js';
import { trialRulesSchema } from '../../../plugins/deployments/trial-verdict.js';
import { wireDeployments, type DeploymentsWiring } from '../../../plugins/deployments/wiring.js';
import type { FleetMachine, GatewayMachines } from '../../../plugins/gateways/service.js';
import type { EngineUnderTest } from '../../fixtures/database-engines.js';
import { startTestGateway, type TestGateway } from '../../fixtures/gateway.js';
import { DRIVERS_WITH_SCRIPTED, scriptedMachine, scriptedMachineConfig } from '../../fixtures/scripted-machine.js';
import { AuditChain } from '../../../core/roles/programs/audit/chain.js';
import { until } from '../../fixtures/until.js';

const LEASE_MS = 1500;
const DIR = '//CNC_MEM/USER/PATH1/';
const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
const ADMIN: RestPrincipal = {
  kind: 'user', id: 'usr_admin', name: 'admin', role: 'admin', permissions: new Set(['trials.decide', 'deployments.read']), scopes: { libraries: '*', machineGroups: '*' },
  authMethod: 'session', onBehalfOf: null, requiresOperator: false,
};

interface Instance extends DeploymentsWiring {
  holder: string;
  db: SqlDatabase;
  /** The trials' HTTP operations of this instance, by operationId. */
  ops: Map<string, AnyRestOperation>;
  stopHard(): Promise<void>;
  stop(): Promise<void>;
}

export function trialLeasesCases(engine: EngineUnderTest, prefix: string): void {
  describe(`trials of two instances on one ${engine.name} database`, () => {
    const MACHINES = ['A', 'B', 'C', 'D'].map((x) => `${prefix}-TL-${x}`);
    const fleet: FleetMachine[] = MACHINES.map((machineId, i) => ({
      id: `mch_${prefix}tl${i + 1}`, gatewayId: 'gw_1', machineId, name: machineId, driver: 'scripted', system: 'FANUC', model: '0i-MF', present: true, programDir: DIR, transformProfile: null,
    }));
    const V1 = Buffer.from(`%\nO1000 (${prefix} V1)\nG90 G54\nS2000 M03\nM30\n%\n`);
    const V2 = Buffer.from(`%\nO1000 (${prefix} V2)\nG90 G54\nS2400 M03\nM30\n%\n`);
    let gw: TestGateway;
    const running: Instance[] = [];

    beforeAll(async () => {
      // History committed every 20 ms: an alarm is in the history a trial reads a moment after it is sampled.
      gw = await startTestGateway({ history: { flushIntervalMs: 20 }, machines: MACHINES.map(scriptedMachineConfig) }, undefined, { drivers: DRIVERS_WITH_SCRIPTED });
    }, 30_000);
    afterAll(async () => {
      for (const i of running.splice(0)) await i.stop();
      await gw?.stop();
    });

    /** One instance: the plugin's wiring on its own connections; webhooks land in a table, in the transaction that enqueues them. */
    const instance = async (database: { open(): Promise<SqlDatabase> }, holder: string, options: { decisionWaitMs?: number } = {}): Promise<Instance> => {
      const db = await database.open();
      await applyMigrations(db, 'deployments', [...MIGRATIONS, ...TRIAL_MIGRATIONS, ...LEASE_MIGRATIONS, ...TRACE_MIGRATIONS]);
      await db.write((tx) => tx.run('CREATE TABLE IF NOT EXISTS test_events (event TEXT NOT NULL, data TEXT NOT NULL)'));
      const audit = await AuditChain.open(db, { timeZone: 'UTC' });
      const byId = new Map(fleet.map((m) => [m.id, m]));
      const link = new InProcessGatewayLink(gw.gateway.context.interfaces);
      const services = new ServiceRegistry<ProgramsServices>('programs');
      services.provide('gateway-machines', { machine: async (id: string) => byId.get(id), machines: async (ids: string[]) => ids.flatMap((id) => byId.get(id) ?? []), linkFor: async () => link } as unknown as GatewayMachines);
      const enqueue = async (tx: WriteTx, event: string, data: Record<string, unknown>) => void (await tx.run('INSERT INTO test_events (event, data) VALUES (?, ?)', [event, JSON.stringify(data)]));
      services.provide('webhooks.outbox', {
        enqueue, enqueueMany: async (tx, events) => { for (const e of events) await enqueue(tx, e.event, e.data); }, kick: () => undefined,
      } as ProgramsServices['webhooks.outbox']);
      const ctx = {
        db, services, now: Date.now, logger: pino({ level: 'silent' }),
        audit: { appendMany: (tx: WriteTx, e: readonly AuditEntry[]) => audit.appendMany(tx, e), append: (tx: WriteTx, e: AuditEntry) => audit.appendMany(tx, [e]) },
      } as unknown as ProgramsContext;
      const wiring = wireDeployments(ctx, leaseOf({ holder, ms: LEASE_MS }), { takeOverAtStart: false, decisionPollMs: 100, ...options });
      await wiring.runner.resumeAll();
      await wiring.trialRunner.resumeAll();
      const ops = new Map(trialOperations(ctx, wiring.trialRepo, wiring.trialRunner).map((op) => [op.operationId, op]));
      let stopped = false;
      const made: Instance = {
        ...wiring, holder, db, ops,
        // As a process killed: no further write, no lease given back.
        stopHard: async () => {
          stopped = true;
          await wiring.trialRunner.stop({ release: false });
          await wiring.runner.stop({ release: false });
        },
        stop: async () => {
          if (!stopped) {
            await wiring.trialRunner.stop();
            await wiring.runner.stop();
          }
          stopped = true;
          await db.close();
        },
      };
      running.push(made);
      return made;
    };

    /** A promote or pull-back as the HTTP operation answers it: its status and body, or the problem it throws. */
    const decide = async (i: Instance, kind: 'promote' | 'pull-back', trialId: string): Promise<{ status: number; body: Record<string, unknown> }> => {
      const op = i.ops.get(kind === 'promote' ? 'promoteTrial' : 'pullBackTrial')!;
      try {
        return await (op.handler as (input: unknown, call: unknown) => Promise<{ status: number; body: Record<string, unknown> }>)(
          { params: { id: trialId }, body: { note: `${kind} from ${i.holder}` } }, { principal: ADMIN, request: {}, logger: pino({ level: 'silent' }) },
        );
      } catch (err) {
        return { status: 409, body: { problem: String((err as Error).message) } };
      }
    };

    /** Version 1 released to the machine through `i`, then a trial of version 2 held by `i`, Active. */
    const activeTrial = async (i: Instance, machine: FleetMachine, evaluateEverySec = 3600): Promise<TrialRow> => {
      const assignmentId = newId('asg');
      const one = async (content: Buffer, versionId: string, trial: boolean) => {
        const id = newId('dep');
        const trialId = newId('trl');
        const previous = trial ? await i.repo.release(assignmentId, machine.id) : undefined;
        await i.startBatch({
          versionId, purpose: trial ? 'trial' : 'deploy', isTrial: trial, trialHours: trial ? 1 : null, key: null, requestHash: sha(content), createdBy: { name: 'admin', onBehalfOf: null, authMethod: 'session' },
          planned: [{ id, assignmentId, machineId: machine.id, gatewayId: machine.gatewayId, dir: DIR, fileName: 'O1000', content, sha256: sha(content) }],
          trials: trial ? [{
            id: trialId, deploymentId: id, assignmentId, machineId: machine.id, versionId, dir: DIR, fileName: 'O1000',
            previous: previous ? { versionId: previous.versionId, sha256: previous.sha256, dir: previous.dir, fileName: previous.fileName } : null,
            // Read once an hour unless asked: the trial stays Active and watched while the test decides.
            rules: trialRulesSchema.parse({ evaluateEverySec }), trialHours: 1,
          }] : [],
          answer: (batchId) => ({ batchId }), audit: {},
        });
        await until('deployment', () => i.repo.get(id), (d) => d?.status === 'Succeeded');
        return trialId;
      };
      await one(V1, 'ver_1', false);
      const trialId = await one(V2, 'ver_2', true);
      return until('trial active', async () => (await i.trialRepo.get(trialId))!, (t) => t.status === 'Active');
    };

    const audits = async (db: SqlDatabase, trialId: string) =>
      (await db.all<{ action: string }>("SELECT action FROM audit_log WHERE entity_id = ? AND action LIKE 'trial.%' ORDER BY seq", [trialId])).map((r) => r.action);
    const events = async (db: SqlDatabase, trialId: string) =>
      (await db.all<{ event: string; data: string }>('SELECT event, data FROM test_events')).filter((e) => (JSON.parse(e.data) as { trialId?: string }).trialId === trialId).map((e) => e.event);

    it('PV-36 a promotion sent to the instance that does not hold the trial is carried out once, by its holder, and answered 200 by the instance that received it', async () => {
      const database = await engine.fresh();
      const a = await instance(database, `${prefix}-trials-a`);
      const b = await instance(database, `${prefix}-trials-b`);
      const machine = fleet[0]!;
      const t = await activeTrial(a, machine);
      expect(t.holder).toBe(a.holder);

      const answer = await decide(b, 'promote', t.id);
      expect({ status: answer.status, trialStatus: answer.body.status, holder: answer.body.holder, pending: answer.body.pendingDecision })
        .toEqual({ status: 200, trialStatus: 'Promoted', holder: a.holder, pending: null });
      expect((await a.trialRepo.get(t.id))?.decision).toMatchObject({ by: 'admin', note: `promote from ${b.holder}` });
      expect(await a.repo.release(t.assignmentId, machine.id)).toMatchObject({ versionId: 'ver_2', sha256: sha(V2) });
      // One decision, one record and one event, whichever instance received it.
      expect(await audits(a.db, t.id)).toEqual(['trial.start', 'trial.promote']);
      expect(await events(a.db, t.id)).toEqual(['trial.started', 'trial.promoted']);
      // Sent again to either instance: the trial has ended.
      expect((await decide(b, 'promote', t.id)).status).toBe(409);
      expect((await decide(a, 'pull-back', t.id)).status).toBe(409);
    }, 60_000);

    it('PV-25 PV-36 the holder of an active trial stopped hard: a pull-back sent to the other instance waits in the trial, which that instance takes over within the lease and pulls back once', async () => {
      const database = await engine.fresh();
      const a = await instance(database, `${prefix}-trials-c`);
      // Waits longer than the takeover needs even on a loaded machine (the default 5 s would answer 202 there).
      const b = await instance(database, `${prefix}-trials-d`, { decisionWaitMs: 15_000 });
      const machine = fleet[1]!;
      const t = await activeTrial(a, machine);
      const m = scriptedMachine(machine.machineId);
      const uploadsBefore = m.uploads;
      await a.stopHard();
      const stoppedAt = Date.now();

      // Received before the lease ran out: answered once the other instance holds the trial and has carried it out (within the time it waits).
      const answer = await decide(b, 'pull-back', t.id);
      expect({ status: answer.status, holder: answer.body.holder, decision: answer.body.decision }).toEqual({ status: 200, holder: b.holder, decision: expect.objectContaining({ by: 'admin', note: `pull-back from ${b.holder}` }) });
      expect(['PullingBack', 'PulledBack']).toContain(answer.body.status);
      const done = await until('pulled back', async () => (await b.trialRepo.get(t.id))!, (x) => x.finishedAt !== null);
      expect(Date.now() - stoppedAt).toBeLessThan(20_000);
      expect({ status: done.status, holder: done.holder, pending: done.pendingDecision }).toEqual({ status: 'PulledBack', holder: b.holder, pending: null });
      // Counted at the machine: the earlier program put back once, verified.
      expect({ uploads: m.uploads - uploadsBefore, onMachine: sha(m.files.get(`${DIR}O1000`) ?? Buffer.alloc(0)) }).toEqual({ uploads: 1, onMachine: sha(V1) });
      expect(await audits(b.db, t.id)).toEqual(['trial.start', 'trial.pull-back', 'trial.pulled-back']);
      expect(await events(b.db, t.id)).toEqual(['trial.started', 'trial.pulled-back']);
    }, 60_000);

    it('PV-36 a decision whose holder cannot carry it out yet is answered 202 with the trial and its pending decision, refuses a second one, and is carried out once by the instance that takes the trial over', async () => {
      const database = await engine.fresh();
      const a = await instance(database, `${prefix}-trials-g`);
      // Waits 200 ms for the holder instead of 5 s: the lease of the stopped holder runs longer.
      const b = await instance(database, `${prefix}-trials-h`, { decisionWaitMs: 200 });
      const machine = fleet[0]!;
      const t = await activeTrial(a, machine);
      await a.stopHard();

      const answer = await decide(b, 'promote', t.id);
      expect({ status: answer.status, trialStatus: answer.body.status, holder: answer.body.holder, pending: answer.body.pendingDecision })
        .toEqual({ status: 202, trialStatus: 'Active', holder: a.holder, pending: { kind: 'promote', by: 'admin', requestedAt: expect.any(String) } });
      const second = await decide(b, 'pull-back', t.id);
      expect({ status: second.status, problem: second.body.problem }).toEqual({ status: 409, problem: expect.stringContaining('another decision') });

      const done = await until('promoted', async () => (await b.trialRepo.get(t.id))!, (x) => x.finishedAt !== null);
      expect({ status: done.status, holder: done.holder, pending: done.pendingDecision, note: done.decision?.note })
        .toEqual({ status: 'Promoted', holder: b.holder, pending: null, note: `promote from ${b.holder}` });
      expect(await b.repo.release(t.assignmentId, machine.id)).toMatchObject({ versionId: 'ver_2', sha256: sha(V2) });
      expect(await audits(b.db, t.id)).toEqual(['trial.start', 'trial.promote']);
      expect(await events(b.db, t.id)).toEqual(['trial.started', 'trial.promoted']);
    }, 60_000);

    it('PV-36 the holder stopped hard in the middle of a pull-back: the other instance takes the trial and its pull-back deployment over, and the earlier program reaches the machine once', async () => {
      const database = await engine.fresh();
      const a = await instance(database, `${prefix}-trials-e`);
      const b = await instance(database, `${prefix}-trials-f`);
      const machine = fleet[2]!;
      const t = await activeTrial(a, machine);
      const m = scriptedMachine(machine.machineId);
      const uploadsBefore = m.uploads;
      m.uploadDelayMs = 300;
      try {
        const answer = await decide(a, 'pull-back', t.id);
        expect({ status: answer.status, trialStatus: answer.body.status }).toEqual({ status: 200, trialStatus: 'PullingBack' });
        const pulling = await until('pull-back transferring', async () => {
          const now = (await a.trialRepo.get(t.id))!;
          return { trial: now, deployment: now.pullBackDeploymentId ? await a.repo.get(now.pullBackDeploymentId) : undefined };
        }, (x) => x.deployment?.status === 'Transferring');
        await a.stopHard();

        const done = await until('pulled back', async () => (await b.trialRepo.get(t.id))!, (x) => x.finishedAt !== null);
        expect({ status: done.status, holder: done.holder, pullBack: done.pullBackDeploymentId }).toEqual({ status: 'PulledBack', holder: b.holder, pullBack: pulling.trial.pullBackDeploymentId });
        expect(await b.repo.get(done.pullBackDeploymentId!)).toMatchObject({ status: 'Succeeded', holder: b.holder, readBackSha256: sha(V1) });
        // One pull-back deployment, its file sent once (the new holder read it back whole before sending), one record of each step.
        const pullBacks = await b.db.all<{ id: string }>("SELECT id FROM deploy_deployments WHERE machine_id = ? AND purpose = 'pull-back'", [machine.id]);
        expect(pullBacks.map((r) => r.id)).toEqual([done.pullBackDeploymentId]);
        expect({ uploads: m.uploads - uploadsBefore, onMachine: sha(m.files.get(`${DIR}O1000`) ?? Buffer.alloc(0)) }).toEqual({ uploads: 1, onMachine: sha(V1) });
        expect(await audits(b.db, t.id)).toEqual(['trial.start', 'trial.pull-back', 'trial.pulled-back']);
        expect(await events(b.db, t.id)).toEqual(['trial.started', 'trial.pulled-back']);
      } finally {
        m.uploadDelayMs = 0;
      }
    }, 60_000);
    it('PV-25 the holder of a watched trial stopped hard: the instance that takes it over judges the machine, and its failing verdict pulls the trial back once', async () => {
      const database = await engine.fresh();
      const a = await instance(database, `${prefix}-trials-i`);
      const b = await instance(database, `${prefix}-trials-j`);
      const machine = fleet[3]!;
      const t = await activeTrial(a, machine, 0.1);
      await until('judged by its holder', async () => (await a.trialRepo.get(t.id))!, (x) => x.verdict !== null);
      const m = scriptedMachine(machine.machineId);
      const uploadsBefore = m.uploads;
      await a.stopHard();
      m.raiseAlarm('1204', 'SPINDLE OVERLOAD', 'alarm');
      try {
        const done = await until('pulled back', async () => (await b.trialRepo.get(t.id))!, (x) => x.finishedAt !== null);
        expect({ status: done.status, holder: done.holder, verdict: done.verdict, automatic: done.decision?.automatic }).toEqual({ status: 'PulledBack', holder: b.holder, verdict: 'fail', automatic: true });
        expect(done.evidence?.alarms).toEqual([expect.objectContaining({ code: '1204', level: 'alarm' })]);
        // Counted at the machine: the earlier program put back once; the failing verdict, the pull-back and its end recorded once each.
        expect({ uploads: m.uploads - uploadsBefore, onMachine: sha(m.files.get(`${DIR}O1000`) ?? Buffer.alloc(0)) }).toEqual({ uploads: 1, onMachine: sha(V1) });
        const actions = await audits(b.db, t.id);
        expect(actions.filter((x) => x !== 'trial.verdict')).toEqual(['trial.start', 'trial.pull-back', 'trial.pulled-back']);
        const verdicts = await b.db.all<{ details: string }>("SELECT details FROM audit_log WHERE entity_id = ? AND action = 'trial.verdict' ORDER BY seq", [t.id]);
        expect(verdicts.map((v) => (JSON.parse(v.details) as { verdict: string }).verdict).filter((v) => v === 'fail')).toEqual(['fail']);
        expect(await events(b.db, t.id)).toEqual(['trial.started', 'trial.pulled-back']);
      } finally {
        m.clearAlarms();
      }
    }, 60_000);
  });
}

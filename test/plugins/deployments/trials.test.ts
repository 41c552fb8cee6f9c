/**
 * Trials against a real gateway whose machines a test scripts (parts with
 * their cycle times, alarms, program files): a trial is active until
 * promoted or pulled back; promotion makes its version the release; a
 * pull-back puts the earlier file back, verified; the machine's cycle times
 * and alarms pull a worse program back by themselves, with the evidence in
 * the audit; the end of a trial's time stops the watching, not the trial.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InProcessGatewayLink } from '../../../core/gateway-link/in-process.js';
import { assignmentsPlugin } from '../../../plugins/assignments/index.js';
import { createDeploymentsPlugin } from '../../../plugins/deployments/index.js';
import { gatewaysPlugin } from '../../../plugins/gateways/index.js';
import { vaultPlugin } from '../../../plugins/vault/index.js';
import { webhooksPlugin } from '../../../plugins/webhooks/index.js';
import { startTestGateway, type TestGateway } from '../../fixtures/gateway.js';
import { openProgramsDatabase, startTestProgramService, type TestProgramService } from '../../fixtures/programs.js';
import { login, TEST_ACCOUNTS, TEST_PROGRAMS_ADMIN_PASSWORD, userSession, type Session } from '../../fixtures/programs-accounts.js';
import { DRIVERS_WITH_SCRIPTED, scriptedMachine, scriptedMachineConfig, type ScriptedMachine } from '../../fixtures/scripted-machine.js';
import { until } from '../../fixtures/until.js';

const DIR = '//CNC_MEM/USER/PATH1/';
const MACHINES = ['T1', 'T2', 'T3', 'T4', 'T5', 'T6', 'T7'];
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

// Real sampling (every 100 ms) and real history reads: on a loaded machine a scenario takes several seconds.
describe('trials', { timeout: 60_000 }, () => {
  let gw: TestGateway;
  let svc: TestProgramService;
  let admin: Session;
  let programId: string;
  let v1: { id: string };
  let v2: { id: string };
  const machines: Record<string, string> = {};
  const assignments: Record<string, string> = {};
  const m = (id: string): ScriptedMachine => scriptedMachine(`trials-${id}`);

  const post = (path: string, body?: unknown, s: Session = admin) => svc.request('POST', path, { cookie: s.cookie, headers: s.headers, ...(body !== undefined ? { body } : {}) });
  const get = (path: string, s: Session = admin) => svc.request('GET', path, { cookie: s.cookie });
  const trial = (id: string) => get(`/api/v1/trials/${id}`).then((r) => r.body);
  const deploy = async (versionId: string, machine: string, isTrial: boolean, extra: Record<string, unknown> = {}) => {
    const res = await post('/api/v1/deployments', { versionId, assignmentIds: [assignments[machine]], isTrial, trialHours: isTrial ? (extra.trialHours ?? 1) : null, ...(isTrial ? { trialRules: { evaluateEverySec: 0.1, minCycles: 3, maxCycleTimeIncreasePct: 10, ...(extra.trialRules as object) } } : {}) });
    expect(res.status).toBe(201);
    const d = res.body.deployments[0];
    await until('deployment', () => get(`/api/v1/deployments/${d.id}`).then((r) => r.body), (b) => b.status === 'Succeeded' || b.status === 'Failed');
    return d as { id: string; trialId?: string };
  };
  /** Parts made one by one, each seen by the gateway's sampling before the next. */
  const cycles = async (machine: string, seconds: number[]) => {
    for (const s of seconds) {
      const before = m(machine).count.partsTotal;
      m(machine).cycle('O1000', s);
      await until('part recorded', async () => {
        const res = await gw.request('GET', `/api/history/machine?machineID=trials-${machine}&type=Count&start=-1h&newestFirst=true&limit=1`);
        return (res.body.data as { data: { data: { partsTotal: number } }[] }).data[0]?.data.partsTotal ?? 0;
      }, (total) => total > before);
    }
  };
  const onMachine = (machine: string) => m(machine).files.get(`${DIR}O1000`)?.toString('latin1');
  /** Waits until the trial has been judged again `times` times after `since` (unix ms), its evaluations being 100 ms apart, or is no longer active. */
  const judgedAgain = (trialId: string, since: number, times: number) =>
    until(`${times} more evaluations`, () => trial(trialId), (t) => t.status !== 'Active' || (t.evaluatedAt !== null && Date.parse(t.evaluatedAt) >= since + times * 100));
  /** Waits until the machine's alarm `code` is in the gateway's history (AlarmLog), where the trial reads alarms; its time (unix ms). */
  const alarmRecorded = async (machine: string, code: string): Promise<number> => {
    const row = await until(`alarm ${code} recorded`, async () => {
      const res = await gw.request('GET', `/api/history/machine?machineID=trials-${machine}&type=AlarmLog&start=-1h&newestFirst=true&limit=20`);
      const rows = (res.body.data as { data?: { time: number; data: { code: string; event: string } }[] } | undefined)?.data ?? [];
      return rows.find((r) => r.data.code === code && r.data.event === 'start');
    }, (r) => r !== undefined);
    return row!.time;
  };

  beforeAll(async () => {
    // History committed every 20 ms instead of 750: a part is in the history the trial reads a moment after it is sampled.
    gw = await startTestGateway({ history: { flushIntervalMs: 20 }, machines: MACHINES.map((id) => scriptedMachineConfig(`trials-${id}`)) }, undefined, { drivers: DRIVERS_WITH_SCRIPTED });
    svc = await startTestProgramService({
      plugins: [TEST_ACCOUNTS, vaultPlugin, gatewaysPlugin, assignmentsPlugin, createDeploymentsPlugin({ trialRules: { evaluateEverySec: 0.1 } }), webhooksPlugin],
      env: { PROGRAMS_ADMIN_PASSWORD: TEST_PROGRAMS_ADMIN_PASSWORD }, localGateway: new InProcessGatewayLink(gw.gateway.context.interfaces),
      dataDir: mkdtempSync(join(tmpdir(), 'programs-trials-')),
    });
    admin = await login(svc, 'admin', TEST_PROGRAMS_ADMIN_PASSWORD);
    const lib = await post('/api/v1/libraries', { name: 'Trials', approvalPolicy: { mode: 'autoRelease' } });
    programId = (await post('/api/v1/programs', { libraryId: lib.body.id, name: 'O1000', controller: 'fanuc' })).body.id;
    const publish = async (text: string) => {
      const v = await post(`/api/v1/programs/${programId}/versions`, { contentBase64: Buffer.from(text).toString('base64'), notes: '' });
      return (await post(`/api/v1/versions/${v.body.id}/submit`)).body.version as { id: string };
    };
    v1 = await publish('%\nO1000 (BRACKET)\nG90 G54\nS2000 M03\nF300\nM30\n%\n');
    v2 = await publish('%\nO1000 (BRACKET)\nG90 G54\nS2400 M03\nF360\nM30\n%\n');
    for (const x of (await get('/api/v1/machines')).body.items as { id: string; machineId: string }[]) machines[x.machineId.replace('trials-', '')] = x.id;
    for (const id of MACHINES) {
      assignments[id] = (await post('/api/v1/machine-assignments', { programId, machineId: machines[id], dir: DIR })).body.id;
    }
    // Version 1 is released to every machine but T6 (which has never had a release).
    for (const id of MACHINES.filter((x) => x !== 'T6')) await deploy(v1.id, id, false);
  }, 60_000);
  afterAll(async () => {
    await svc?.stop();
    await gw?.stop();
  });

  it('PV-25 PV-36 a trial stays active while it passes, is listed, and promotion makes its version what the assignment releases', async () => {
    await cycles('T1', [60, 60, 61, 59]);
    const d = await deploy(v2.id, 'T1', true);
    expect(d.trialId).toMatch(/^trl_/);
    await until('trial active', () => trial(d.trialId!), (t) => t.status === 'Active');
    await cycles('T1', [60, 62, 61]);
    const passed = await until('verdict pass', () => trial(d.trialId!), (t) => t.verdict === 'pass');
    expect(passed).toMatchObject({ status: 'Active', active: true, watching: true, previousVersionId: v1.id, versionId: v2.id });
    expect(passed.evidence).toMatchObject({ baseline: { cycles: 4, medianSec: 60 }, trial: { cycles: 3, medianSec: 61 }, failedRules: [] });
    // Still active after further evaluations: nothing but a person ends a passing trial.
    expect((await judgedAgain(d.trialId!, Date.parse(passed.evaluatedAt), 3)).status).toBe('Active');
    const listed = await get(`/api/v1/trials?status=Active&machineId=${machines.T1}`);
    expect(listed.body.items.map((t: { id: string }) => t.id)).toContain(d.trialId);

    const promoted = await post(`/api/v1/trials/${d.trialId}/promote`, { note: 'cycle time as before' });
    expect(promoted.status).toBe(200);
    expect(promoted.body).toMatchObject({ status: 'Promoted', active: false, watching: false, decision: { by: 'admin', automatic: false, note: 'cycle time as before' } });
    // The next trial on this machine replaces version 2, not version 1.
    const next = await deploy(v1.id, 'T1', true, { trialRules: { evaluateEverySec: 60 } });
    expect((await trial(next.trialId!)).previousVersionId).toBe(v2.id);
    const again = await post(`/api/v1/trials/${d.trialId}/promote`, {});
    expect(again.status).toBe(409);
    expect(again.body.state).toBe('Promoted');
  });

  it('PV-36 a pull-back deploys the previously released file back, verified, and the trial ends PulledBack', async () => {
    const before = onMachine('T2');
    const d = await deploy(v2.id, 'T2', true, { trialRules: { evaluateEverySec: 60 } });
    await until('trial active', () => trial(d.trialId!), (t) => t.status === 'Active');
    expect(onMachine('T2')).not.toBe(before);
    const operator = await userSession(svc, admin, 'op.t2', 'operator');
    const res = await svc.request('POST', `/api/v1/trials/${d.trialId}/pull-back`, { cookie: operator.cookie, headers: { ...operator.headers, 'x-on-behalf-of': 'J. Smith' }, body: { note: 'chatter on the flange' } });
    expect(res.status).toBe(200);
    expect(['PullingBack', 'PulledBack']).toContain(res.body.status);
    const done = await until('pulled back', () => trial(d.trialId!), (t) => t.status === 'PulledBack');
    expect(done.decision).toMatchObject({ by: 'op.t2', onBehalfOf: 'J. Smith', automatic: false });
    expect(onMachine('T2')).toBe(before);
    const back = (await get(`/api/v1/deployments/${done.pullBackDeploymentId}`)).body;
    expect(back).toMatchObject({ purpose: 'pull-back', status: 'Succeeded', versionId: v1.id });
    expect(back.readBackSha256).toBe(back.sha256);
    const auditor = await userSession(svc, admin, 'aud.t2', 'auditor');
    expect((await svc.request('POST', `/api/v1/trials/${d.trialId}/pull-back`, { cookie: auditor.cookie, headers: auditor.headers, body: {} })).status).toBe(403);
  });

  it('PV-36 PV-25 a median cycle time worse than the rule allows pulls the trial back by itself, with the evidence in the audit', async () => {
    await cycles('T3', [60, 60, 60]);
    const before = onMachine('T3');
    const d = await deploy(v2.id, 'T3', true);
    await until('trial active', () => trial(d.trialId!), (t) => t.status === 'Active');
    await cycles('T3', [75, 76, 74]);
    const done = await until('pulled back', () => trial(d.trialId!), (t) => t.status === 'PulledBack');
    expect(done.verdict).toBe('fail');
    expect(done.decision).toMatchObject({ by: 'system', automatic: true });
    expect(done.decision.note).toMatch(/median cycle time 75 s is 25 % above the baseline's 60 s/);
    expect(onMachine('T3')).toBe(before);
    const db = await openProgramsDatabase(svc.dataDir);
    try {
      const rows = await db.all<{ action: string; details: string }>("SELECT action, details FROM audit_log WHERE entity_id = ? ORDER BY seq", [d.trialId!]);
      expect(rows.map((r) => r.action)).toEqual(expect.arrayContaining(['trial.start', 'trial.verdict', 'trial.pull-back', 'trial.pulled-back']));
      const pull = JSON.parse(rows.find((r) => r.action === 'trial.pull-back')!.details);
      expect(pull).toMatchObject({ automatic: true, verdict: 'fail', evidence: { baseline: { cycles: 3, medianSec: 60 }, trial: { cycles: 3, medianSec: 75 }, cycleChangePct: 25 } });
    } finally {
      await db.close();
    }
  });

  it('PV-36 an alarm of level alarm during the trial pulls it back by itself; a warning does not', async () => {
    const before = onMachine('T4');
    const d = await deploy(v2.id, 'T4', true);
    await until('trial active', () => trial(d.trialId!), (t) => t.status === 'Active');
    m('T4').raiseAlarm('3201', 'Lubrication oil low', 'warning');
    // Judged again with the warning in the history it reads.
    const warned = await alarmRecorded('T4', '3201');
    expect((await judgedAgain(d.trialId!, warned, 2)).status).toBe('Active');
    m('T4').raiseAlarm('1204', 'SPINDLE OVERLOAD', 'alarm');
    const done = await until('pulled back', () => trial(d.trialId!), (t) => t.status === 'PulledBack');
    m('T4').clearAlarms();
    expect(done.verdict).toBe('fail');
    expect(done.evidence.alarms).toEqual([expect.objectContaining({ code: '1204', message: 'SPINDLE OVERLOAD', level: 'alarm' })]);
    expect(onMachine('T4')).toBe(before);
  });

  it('PV-25 when the trial time is over the watching stops but the trial stays active, inconclusive without cycles, until a person decides', async () => {
    // A trial of 0.36 s: three or four evaluations, then the end of its time.
    const d = await deploy(v2.id, 'T5', true, { trialHours: 0.0001 });
    const t = await until('watch over', () => trial(d.trialId!), (x) => x.status === 'Active' && x.watching === false && x.verdict !== null, 10_000);
    expect(t).toMatchObject({ active: true, verdict: 'inconclusive' });
    expect(t.evidence.inconclusiveBecause).toMatch(/0 cycle\(s\) of O1000 during the trial; 3 needed/);
    // Nothing is scheduled any more, so there is no event to wait for: a moment passes and it is still active.
    await sleep(300);
    expect((await trial(d.trialId!)).status).toBe('Active');
    expect((await post(`/api/v1/trials/${d.trialId}/pull-back`, {})).status).toBe(200);
    await until('pulled back', () => trial(d.trialId!), (x) => x.status === 'PulledBack');
  });

  it('PV-36 a trial with nothing released before it cannot be pulled back (409, saying why) and can be promoted', async () => {
    const d = await deploy(v2.id, 'T6', true, { trialRules: { evaluateEverySec: 60 } });
    await until('trial active', () => trial(d.trialId!), (t) => t.status === 'Active');
    const res = await post(`/api/v1/trials/${d.trialId}/pull-back`, {});
    expect(res.status).toBe(409);
    expect(res.body.detail).toMatch(/no earlier file to put back/);
    expect((await post(`/api/v1/trials/${d.trialId}/promote`, {})).body.status).toBe('Promoted');
  });

  it('PV-35 trialHours and trialRules need isTrial; bad rules name the field', async () => {
    const noTrial = await post('/api/v1/deployments', { versionId: v2.id, assignmentIds: [assignments.T7], isTrial: false, trialHours: 2 });
    expect(noTrial.status).toBe(422);
    expect(noTrial.body.errors[0].field).toBe('body.trialHours');
    const bad = await post('/api/v1/deployments', { versionId: v2.id, assignmentIds: [assignments.T7], isTrial: true, trialHours: 1, trialRules: { failOnAlarmLevels: ['fatal'] } });
    expect(bad.status).toBe(400);
    expect(bad.body.errors[0].field).toBe('body.trialRules.failOnAlarmLevels[0]');
    expect((await get('/api/v1/trials/trl_0000000000000000')).status).toBe(404);
  });

  it('PV-25 a trial is restored from its persisted snapshot after a restart and goes on watching the machine', async () => {
    const before = onMachine('T7');
    const d = await deploy(v2.id, 'T7', true);
    await until('trial active', () => trial(d.trialId!), (t) => t.status === 'Active');
    const dataDir = svc.dataDir;
    await svc.stop();
    svc = await startTestProgramService({
      plugins: [TEST_ACCOUNTS, vaultPlugin, gatewaysPlugin, assignmentsPlugin, createDeploymentsPlugin({ trialRules: { evaluateEverySec: 0.1 } }), webhooksPlugin],
      env: { PROGRAMS_ADMIN_PASSWORD: TEST_PROGRAMS_ADMIN_PASSWORD }, localGateway: new InProcessGatewayLink(gw.gateway.context.interfaces), dataDir,
    });
    admin = await login(svc, 'admin', TEST_PROGRAMS_ADMIN_PASSWORD);
    expect((await trial(d.trialId!)).status).toBe('Active');
    m('T7').raiseAlarm('2204', 'Soft-limit X', 'emergency');
    const done = await until('pulled back after the restart', () => trial(d.trialId!), (t) => t.status === 'PulledBack');
    m('T7').clearAlarms();
    expect(done.decision.automatic).toBe(true);
    expect(onMachine('T7')).toBe(before);
  });
});

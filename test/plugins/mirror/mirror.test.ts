/**
 * The mirror against a real gateway with scripted machines: files read on
 * check-in and on the interval, snapshots kept content-addressed, drift made
 * by writing a machine's file behind the service's back (through the
 * gateway's own interface) and triaged — accept makes a draft, reject deploys
 * the release back — resolved when the file is right again, files adopted,
 * a snapshot restored, a failing mirror shown, and proof of what ran.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InProcessGatewayLink } from '../../../core/gateway-link/in-process.js';
import { assignmentsPlugin } from '../../../plugins/assignments/index.js';
import { createDeploymentsPlugin } from '../../../plugins/deployments/index.js';
import { gatewaysPlugin } from '../../../plugins/gateways/index.js';
import { mirrorPlugin } from '../../../plugins/mirror/index.js';
import { vaultPlugin } from '../../../plugins/vault/index.js';
import { webhooksPlugin } from '../../../plugins/webhooks/index.js';
import { startTestGateway, type TestGateway } from '../../fixtures/gateway.js';
import { openProgramsDatabase, startTestProgramService, type TestProgramService } from '../../fixtures/programs.js';
import { login, TEST_ACCOUNTS, TEST_PROGRAMS_ADMIN_PASSWORD, userSession, type Session } from '../../fixtures/programs-accounts.js';
import { DRIVERS_WITH_SCRIPTED, scriptedMachine, scriptedMachineConfig } from '../../fixtures/scripted-machine.js';
import { until } from '../../fixtures/until.js';

const DIR = '//CNC_MEM/USER/PATH1/';
const MACHINES = ['R1', 'R2', 'R3', 'R4', 'R5', 'R6', 'R7'];
const sha = (s: string) => createHash('sha256').update(s).digest('hex');

describe('mirror and drift', { timeout: 60_000 }, () => {
  let gw: TestGateway;
  let svc: TestProgramService;
  let admin: Session;
  let libraryId: string;
  let programId: string;
  let v1: { id: string };
  const machines: Record<string, string> = {};
  const assignments: Record<string, string> = {};
  const m = (id: string) => scriptedMachine(`mirror-${id}`);

  const post = (path: string, body?: unknown, s: Session = admin) => svc.request('POST', path, { cookie: s.cookie, headers: s.headers, ...(body !== undefined ? { body } : {}) });
  const get = (path: string, s: Session = admin) => svc.request('GET', path, { cookie: s.cookie });
  const checkin = async (id: string) => {
    const res = await post(`/api/v1/machines/${machines[id]}/request-checkin`, { wait: true });
    expect(res.status).toBe(200);
    return res.body;
  };
  const deployment = (id: string) => until('deployment', () => get(`/api/v1/deployments/${id}`).then((r) => r.body), (b) => b.status === 'Succeeded' || b.status === 'Failed');
  /** Writes a file through the gateway's own interface, behind the program service's back. */
  const behindTheBack = async (id: string, name: string, text: string) => {
    const res = await gw.request('POST', '/api/file/program/upload', { machineID: `mirror-${id}`, dir: DIR, name, contentBase64: Buffer.from(text).toString('base64') });
    expect(res.body.errorCode).toBe(0);
  };
  const fileId = async (id: string, name: string) => {
    const files = (await get(`/api/v1/machine-files?machineId=${machines[id]}`)).body.items as { id: string; name: string }[];
    const f = files.find((x) => x.name === name);
    if (!f) throw new Error(`no file ${name} on ${id}: ${files.map((x) => x.name).join(', ')}`);
    return f.id;
  };
  const released = (id: string) => m(id).files.get(`${DIR}O2000`)?.toString('latin1');

  beforeAll(async () => {
    gw = await startTestGateway({ machines: MACHINES.map((id) => scriptedMachineConfig(`mirror-${id}`)) }, undefined, { drivers: DRIVERS_WITH_SCRIPTED });
    svc = await startTestProgramService({
      plugins: [TEST_ACCOUNTS, vaultPlugin, gatewaysPlugin, assignmentsPlugin, createDeploymentsPlugin({ trialRules: { evaluateEverySec: 60 } }), webhooksPlugin, mirrorPlugin],
      env: { PROGRAMS_ADMIN_PASSWORD: TEST_PROGRAMS_ADMIN_PASSWORD }, localGateway: new InProcessGatewayLink(gw.gateway.context.interfaces),
      dataDir: mkdtempSync(join(tmpdir(), 'programs-mirror-')),
    });
    admin = await login(svc, 'admin', TEST_PROGRAMS_ADMIN_PASSWORD);
    libraryId = (await post('/api/v1/libraries', { name: 'Mirror', approvalPolicy: { mode: 'autoRelease' } })).body.id;
    programId = (await post('/api/v1/programs', { libraryId, name: 'O2000', controller: 'fanuc' })).body.id;
    const v = await post(`/api/v1/programs/${programId}/versions`, { contentBase64: Buffer.from('%\nO2000 (FLANGE)\nG90 G54\nS1800 M03\nG01 X10. F250\nM30\n%\n').toString('base64'), notes: '' });
    v1 = (await post(`/api/v1/versions/${v.body.id}/submit`)).body.version;
    for (const x of (await get('/api/v1/machines')).body.items as { id: string; machineId: string }[]) machines[x.machineId.replace('mirror-', '')] = x.id;
    for (const id of MACHINES) {
      assignments[id] = (await post('/api/v1/machine-assignments', { programId, machineId: machines[id], dir: DIR })).body.id;
      const res = await post('/api/v1/deployments', { versionId: v1.id, assignmentIds: [assignments[id]], isTrial: false, trialHours: null });
      expect((await deployment(res.body.deployments[0].id)).status).toBe('Succeeded');
    }
  }, 60_000);
  afterAll(async () => {
    await svc?.stop();
    await gw?.stop();
  });

  it('PV-33 PV-37 a check-in reads the machine\'s files and keeps each content once, however many files hold it', async () => {
    m('R1').files.set(`${DIR}O0001`, Buffer.from('%\nO0001 (SAME)\nM30\n%\n'));
    m('R1').files.set(`${DIR}O0002`, Buffer.from('%\nO0001 (SAME)\nM30\n%\n'));
    const first = await checkin('R1');
    expect(first).toMatchObject({ ok: true, files: 3, snapshots: 3, driftOpened: [] });
    const again = await checkin('R1');
    expect(again).toMatchObject({ ok: true, files: 3, snapshots: 0 });
    const db = await openProgramsDatabase(svc.dataDir);
    try {
      const contents = await db.all<{ sha256: string }>('SELECT sha256 FROM mirror_contents');
      expect(contents.map((c) => c.sha256)).toContain(sha('%\nO0001 (SAME)\nM30\n%\n'));
      expect(contents.filter((c) => c.sha256 === sha('%\nO0001 (SAME)\nM30\n%\n'))).toHaveLength(1);
    } finally {
      await db.close();
    }
    const snaps = await get(`/api/v1/machine-files/${await fileId('R1', 'O0002')}/snapshots`);
    expect(snaps.body.items).toHaveLength(1);
    const operator = await userSession(svc, admin, 'op.mirror', 'operator');
    expect((await post(`/api/v1/machines/${machines.R1}/request-checkin`, {}, operator)).status).toBe(202);
    const auditor = await userSession(svc, admin, 'aud.mirror', 'auditor');
    expect((await post(`/api/v1/machines/${machines.R1}/request-checkin`, {}, auditor)).status).toBe(403);
  });

  it('PV-37 a file changed behind the service\'s back opens a drift item with an NC-aware diff; accepting it makes a draft version and nothing on the vault is overwritten', async () => {
    await behindTheBack('R2', 'O2000', '%\nO2000 (FLANGE)\nG90 G54\nS1800 M03\nG01 X10. F400\nM30\n%\n');
    const run = await checkin('R2');
    expect(run.driftOpened).toHaveLength(1);
    const id = run.driftOpened[0];
    const item = (await get(`/api/v1/drift/${id}`)).body;
    expect(item).toMatchObject({ status: 'open', machineId: machines.R2, fileName: 'O2000', expected: { source: 'release', versionId: v1.id } });
    expect(item.diff.identical).toBe(false);
    expect(JSON.stringify(item.diff.summary)).toContain('400');
    expect((await get(`/api/v1/drift?status=open&machineId=${machines.R2}`)).body.items.map((d: { id: string }) => d.id)).toEqual([id]);
    // The same difference read again is not a second item.
    expect((await checkin('R2')).driftOpened).toEqual([]);

    const versionsBefore = (await get(`/api/v1/programs/${programId}/versions`)).body.items.length;
    const accepted = await post(`/api/v1/drift/${id}/accept`, { note: 'the setter found a better feed' });
    expect(accepted.status).toBe(200);
    expect(accepted.body.status).toBe('accepted');
    const draft = (await get(`/api/v1/versions/${accepted.body.resultVersionId}`)).body;
    expect(draft).toMatchObject({ state: 'draft', sha256: sha('%\nO2000 (FLANGE)\nG90 G54\nS1800 M03\nG01 X10. F400\nM30\n%\n') });
    expect((await get(`/api/v1/programs/${programId}/versions`)).body.items.length).toBe(versionsBefore + 1);
    expect((await get(`/api/v1/versions/${v1.id}`)).body.state).toBe('published');
    expect((await checkin('R2')).driftOpened).toEqual([]);
    expect((await post(`/api/v1/drift/${id}/accept`, {})).status).toBe(409);
  });

  it('PV-37 rejecting drift deploys the released file back, verified; a file put right behind the back resolves its item', async () => {
    const before = released('R3');
    await behindTheBack('R3', 'O2000', '%\nO2000 (EDITED AT THE MACHINE)\nM30\n%\n');
    const id = (await checkin('R3')).driftOpened[0];
    const rejected = await post(`/api/v1/drift/${id}/reject`, { note: 'not approved' });
    expect(rejected.body).toMatchObject({ status: 'rejected', decidedBy: 'admin' });
    const d = await deployment(rejected.body.resultDeploymentId);
    expect(d).toMatchObject({ status: 'Succeeded', purpose: 'drift-reject', versionId: v1.id });
    expect(released('R3')).toBe(before);
    expect((await checkin('R3')).driftOpened).toEqual([]);

    await behindTheBack('R4', 'O2000', '%\nO2000 (TYPO)\nM30\n%\n');
    const open = (await checkin('R4')).driftOpened[0];
    await behindTheBack('R4', 'O2000', before as string);
    expect((await checkin('R4')).driftResolved).toEqual([open]);
    expect((await get(`/api/v1/drift/${open}`)).body.status).toBe('resolved');
  });

  it('PV-37 snapshots list every content a file had, newest first, and a snapshot is restored onto the machine, verified', async () => {
    m('R5').files.set(`${DIR}O7000`, Buffer.from('%\nO7000 (FIXTURE A)\nM30\n%\n'));
    await checkin('R5');
    m('R5').files.set(`${DIR}O7000`, Buffer.from('%\nO7000 (FIXTURE B)\nM30\n%\n'));
    await checkin('R5');
    const file = await fileId('R5', 'O7000');
    const snaps = (await get(`/api/v1/machine-files/${file}/snapshots`)).body.items as { id: string; sha256: string }[];
    expect(snaps.map((s) => s.sha256)).toEqual([sha('%\nO7000 (FIXTURE B)\nM30\n%\n'), sha('%\nO7000 (FIXTURE A)\nM30\n%\n')]);
    const restore = await post(`/api/v1/machine-files/${file}/restore`, { snapshotId: snaps[1]!.id });
    expect(restore.status).toBe(202);
    expect(await deployment(restore.body.deploymentId)).toMatchObject({ status: 'Succeeded', purpose: 'restore', versionId: null });
    expect(m('R5').files.get(`${DIR}O7000`)?.toString()).toBe('%\nO7000 (FIXTURE A)\nM30\n%\n');
    expect((await post(`/api/v1/machine-files/${file}/restore`, { snapshotId: 'snp_0000000000000000' })).status).toBe(404);
  });

  it('PV-37 files not under management are adopted as programs with draft versions, one or all; a managed file is not', async () => {
    m('R6').files.set(`${DIR}O8001`, Buffer.from('%\nO8001\nM30\n%\n'));
    m('R6').files.set(`${DIR}O8002`, Buffer.from('%\nO8002\nM30\n%\n'));
    m('R6').files.set(`${DIR}O8003`, Buffer.from('%\nO8003\nM30\n%\n'));
    await checkin('R6');
    const one = await post(`/api/v1/machine-files/${await fileId('R6', 'O8001')}/adopt`, { libraryId, controller: 'fanuc' });
    expect(one.status).toBe(201);
    expect((await get(`/api/v1/versions/${one.body.versionId}`)).body).toMatchObject({ state: 'draft', sha256: sha('%\nO8001\nM30\n%\n') });
    await post('/api/v1/programs', { libraryId, name: 'O8003', controller: 'fanuc' });
    const all = await post(`/api/v1/machines/${machines.R6}/adopt-all`, { libraryId });
    expect(all.status).toBe(200);
    expect(all.body.adopted.map((a: { name: string }) => a.name)).toEqual(['O8002']);
    expect(all.body.skipped).toEqual([expect.objectContaining({ name: 'O8003', reason: expect.stringMatching(/has a program named O8003/) })]);
    expect((await post(`/api/v1/machine-files/${await fileId('R6', 'O2000')}/adopt`, { libraryId })).status).toBe(409);
  });

  it('an adopted program\'s name is trimmed like every name; a name of only blanks is refused naming name', async () => {
    m('R6').files.set(`${DIR}O8005`, Buffer.from('%\nO8005\nM30\n%\n'));
    await checkin('R6');
    const file = await fileId('R6', 'O8005');
    const blank = await post(`/api/v1/machine-files/${file}/adopt`, { libraryId, name: '   ' });
    expect(blank.status).toBe(400);
    expect(blank.body.errors[0].field).toBe('body.name');
    const padded = await post(`/api/v1/machine-files/${file}/adopt`, { libraryId, name: '  Flange op 2  ' });
    expect(padded.status).toBe(201);
    expect((await get(`/api/v1/programs/${padded.body.programId}`)).body.name).toBe('Flange op 2');
  });

  it('PV-37 proof of what ran: the running program against the release, and a trial\'s version is not drift while the trial is active', async () => {
    m('R1').running = { dir: DIR, name: 'O2000' };
    await checkin('R1');
    expect((await get(`/api/v1/machines/${machines.R1}/mirror`)).body.running).toMatchObject({ name: 'O2000', matches: true, expected: { source: 'release', versionId: v1.id } });
    const v = await post(`/api/v1/programs/${programId}/versions`, { contentBase64: Buffer.from('%\nO2000 (FLANGE)\nG90 G54\nS1900 M03\nM30\n%\n').toString('base64'), notes: '' });
    const v2 = (await post(`/api/v1/versions/${v.body.id}/submit`)).body.version;
    const res = await post('/api/v1/deployments', { versionId: v2.id, assignmentIds: [assignments.R1], isTrial: true, trialHours: 1 });
    await deployment(res.body.deployments[0].id);
    await until('trial active', () => get(`/api/v1/trials/${res.body.deployments[0].trialId}`).then((r) => r.body.status), (s) => s === 'Active');
    const run = await checkin('R1');
    expect(run.driftOpened).toEqual([]);
    expect(run.running).toMatchObject({ matches: true, expected: { source: 'trial', versionId: v2.id } });
    await behindTheBack('R1', 'O2000', '%\nO2000 (HAND EDIT)\nM30\n%\n');
    const edited = await checkin('R1');
    expect(edited.running.matches).toBe(false);
    expect(edited.driftOpened).toHaveLength(1);
    expect((await get(`/api/v1/drift/${edited.driftOpened[0]}`)).body.expected).toMatchObject({ source: 'trial', versionId: v2.id });
  });

  it('PV-37 a machine whose mirror fails shows its error; turning the mirror on reads the machine on its own', async () => {
    m('R5').failListing = 'controller busy (simulated)';
    const failed = await checkin('R5');
    expect(failed.ok).toBe(false);
    expect(failed.error).toMatch(/controller busy/);
    expect((await get(`/api/v1/machines/${machines.R5}/mirror`)).body.lastError).toMatch(/controller busy/);
    m('R5').failListing = null;
    // R7 was never read: turned on, it is due at once.
    expect((await get(`/api/v1/machines/${machines.R7}/mirror`)).body).toMatchObject({ enabled: false, lastRunAt: null });
    const patched = await svc.request('PATCH', `/api/v1/machines/${machines.R7}`, { cookie: admin.cookie, headers: admin.headers, body: { mirror: { enabled: true, intervalSec: 30 } } });
    expect(patched.status).toBe(200);
    const after = await until('read by the interval', () => get(`/api/v1/machines/${machines.R7}/mirror`).then((r) => r.body), (b) => b.enabled && b.lastRunAt !== null, 5000);
    expect(after).toMatchObject({ enabled: true, intervalSec: 30, lastError: null, files: 1 });
  });
});

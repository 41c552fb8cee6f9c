/**
 * The dashboard's counters, each made non-zero by a scenario of its own on a
 * real gateway (an unreachable gateway, a failing mirror, a pending approval,
 * drift, a trial, a failed deployment), and the latest deployments.
 */
import { createServer } from 'node:net';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InProcessGatewayLink } from '../../../core/gateway-link/in-process.js';
import { assignmentsPlugin } from '../../../plugins/assignments/index.js';
import { dashboardPlugin } from '../../../plugins/dashboard/index.js';
import { createDeploymentsPlugin } from '../../../plugins/deployments/index.js';
import { gatewaysPlugin } from '../../../plugins/gateways/index.js';
import { mirrorPlugin } from '../../../plugins/mirror/index.js';
import { vaultPlugin } from '../../../plugins/vault/index.js';
import { webhooksPlugin } from '../../../plugins/webhooks/index.js';
import { startTestGateway, type TestGateway } from '../../fixtures/gateway.js';
import { startTestProgramService, type TestProgramService } from '../../fixtures/programs.js';
import { login, TEST_ACCOUNTS, TEST_PROGRAMS_ADMIN_PASSWORD, userSession, type Session } from '../../fixtures/programs-accounts.js';
import { DRIVERS_WITH_SCRIPTED, scriptedMachine, scriptedMachineConfig } from '../../fixtures/scripted-machine.js';
import { until } from '../../fixtures/until.js';

const DIR = '//CNC_MEM/USER/PATH1/';

/** A port on 127.0.0.1 that nothing listens on (taken from the OS, then closed). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe('dashboard', { timeout: 60_000 }, () => {
  let gw: TestGateway;
  let svc: TestProgramService;
  let admin: Session;
  const machines: Record<string, string> = {};

  const post = (path: string, body?: unknown, s: Session = admin) => svc.request('POST', path, { cookie: s.cookie, headers: s.headers, ...(body !== undefined ? { body } : {}) });
  const get = (path: string, s: Session = admin) => svc.request('GET', path, { cookie: s.cookie });
  const summary = async () => (await get('/api/v1/dashboard/summary')).body;

  beforeAll(async () => {
    gw = await startTestGateway({
      machines: [
        scriptedMachineConfig('dash-D1'), scriptedMachineConfig('dash-D2'), scriptedMachineConfig('dash-D3'),
        // A machine whose uploads break off at the controller.
        scriptedMachineConfig('dash-JAM'),
      ],
    }, undefined, { drivers: DRIVERS_WITH_SCRIPTED });
    svc = await startTestProgramService({
      plugins: [TEST_ACCOUNTS, vaultPlugin, gatewaysPlugin, assignmentsPlugin, createDeploymentsPlugin({ trialRules: { evaluateEverySec: 60 } }), webhooksPlugin, mirrorPlugin, dashboardPlugin],
      env: { PROGRAMS_ADMIN_PASSWORD: TEST_PROGRAMS_ADMIN_PASSWORD }, localGateway: new InProcessGatewayLink(gw.gateway.context.interfaces),
      dataDir: mkdtempSync(join(tmpdir(), 'programs-dashboard-')),
    });
    admin = await login(svc, 'admin', TEST_PROGRAMS_ADMIN_PASSWORD);
    for (const x of (await get('/api/v1/machines')).body.items as { id: string; machineId: string }[]) machines[x.machineId.replace('dash-', '')] = x.id;
  }, 30_000);
  afterAll(async () => {
    await svc?.stop();
    await gw?.stop();
  });

  it('PV-14 PV-39 every counter is an integer, and each becomes non-zero through its own scenario', async () => {
    expect(await summary()).toMatchObject({ gatewaysTotal: 1, gatewaysUnreachable: 0, machinesWithMirrorError: 0, pendingApprovals: 0, openDrift: 0, activeTrials: 0, failedDeployments24h: 0 });

    // gatewaysTotal, gatewaysUnreachable: a gateway registered at an address where nothing answers.
    const port = await closedPort();
    await post('/api/v1/gateways', { name: 'plant-2', url: `http://127.0.0.1:${port}`, secretKey: 'gwk_0123456789abcdef_notarealkey' });
    expect(await summary()).toMatchObject({ gatewaysTotal: 2, gatewaysUnreachable: 1 });

    // pendingApprovals: a version submitted in a library that needs an approval.
    const lib = (await post('/api/v1/libraries', { name: 'Reviewed', approvalPolicy: { mode: 'approvals', required: 1 } })).body.id;
    const reviewed = (await post('/api/v1/programs', { libraryId: lib, name: 'O4100', controller: 'fanuc' })).body.id;
    const draft = await post(`/api/v1/programs/${reviewed}/versions`, { contentBase64: Buffer.from('%\nO4100\nM30\n%\n').toString('base64'), notes: '' });
    await post(`/api/v1/versions/${draft.body.id}/submit`);
    expect((await summary()).pendingApprovals).toBe(1);

    // A released program on D1..D3 and JAM.
    scriptedMachine('dash-JAM').failUploads = 'the tape punch jammed (simulated)';
    const auto = (await post('/api/v1/libraries', { name: 'Auto', approvalPolicy: { mode: 'autoRelease' } })).body.id;
    const programId = (await post('/api/v1/programs', { libraryId: auto, name: 'O4200', controller: 'fanuc' })).body.id;
    const publish = async (text: string) => (await post(`/api/v1/versions/${(await post(`/api/v1/programs/${programId}/versions`, { contentBase64: Buffer.from(text).toString('base64'), notes: '' })).body.id}/submit`)).body.version;
    const v1 = await publish('%\nO4200 (V1)\nM30\n%\n');
    const assignment: Record<string, string> = {};
    for (const id of ['D1', 'D2', 'D3', 'JAM']) assignment[id] = (await post('/api/v1/machine-assignments', { programId, machineId: machines[id], dir: DIR })).body.id;
    const batch = await post('/api/v1/deployments', { versionId: v1.id, assignmentIds: Object.values(assignment), isTrial: false, trialHours: null });
    const ids = batch.body.deployments.map((d: { id: string }) => d.id);
    const done = await until('batch', () => Promise.all(ids.map((id: string) => get(`/api/v1/deployments/${id}`).then((r) => r.body))), (rows) => rows.every((r) => r.status === 'Succeeded' || r.status === 'Failed'));
    // failedDeployments24h: the machine whose upload broke off failed (the batch did not).
    expect(done.filter((d) => d.status === 'Failed').map((d) => d.machineId)).toEqual([machines.JAM]);
    expect((await summary()).failedDeployments24h).toBe(1);

    // openDrift: D1's file changed behind the service's back.
    await gw.request('POST', '/api/file/program/upload', { machineID: 'dash-D1', dir: DIR, name: 'O4200', contentBase64: Buffer.from('%\nO4200 (EDITED)\nM30\n%\n').toString('base64') });
    await post(`/api/v1/machines/${machines.D1}/request-checkin`, { wait: true });
    expect((await summary()).openDrift).toBe(1);

    // machinesWithMirrorError: D2's mirror is on and its reads fail.
    scriptedMachine('dash-D2').failListing = 'controller busy (simulated)';
    await svc.request('PATCH', `/api/v1/machines/${machines.D2}`, { cookie: admin.cookie, headers: admin.headers, body: { mirror: { enabled: true } } });
    await until('mirror error counted', summary, (s) => s.machinesWithMirrorError === 1, 5000);

    // activeTrials: a trial on D3.
    const v2 = await publish('%\nO4200 (V2)\nM30\n%\n');
    await post('/api/v1/deployments', { versionId: v2.id, assignmentIds: [assignment.D3], isTrial: true, trialHours: 2 });
    const s = await summary();
    expect(s).toMatchObject({ gatewaysTotal: 2, gatewaysUnreachable: 1, machinesWithMirrorError: 1, pendingApprovals: 1, openDrift: 1, activeTrials: 1, failedDeployments24h: 1 });
    for (const key of ['gatewaysTotal', 'gatewaysUnreachable', 'machinesWithMirrorError', 'pendingApprovals', 'openDrift', 'activeTrials', 'failedDeployments24h']) expect(Number.isInteger(s[key])).toBe(true);
  });

  it('PV-39 recent deployments are newest first with the machine\'s name, the reason of a failure, and only machines in scope', async () => {
    const recent = (await get('/api/v1/dashboard/recent-deployments?limit=10')).body.items as { machineId: string; machineName: string; status: string; reason: string | null; createdAt: string; purpose: string }[];
    expect(recent.length).toBeGreaterThanOrEqual(5);
    expect([...recent].sort((a, b) => b.createdAt.localeCompare(a.createdAt)).map((r) => r.createdAt)).toEqual(recent.map((r) => r.createdAt));
    expect(recent[0]).toMatchObject({ purpose: 'trial', machineId: machines.D3 });
    const failed = recent.find((r) => r.status === 'Failed');
    expect(failed).toMatchObject({ machineId: machines.JAM, machineName: 'Scripted dash-JAM' });
    expect(failed?.reason).toMatch(/the tape punch jammed/);
    const group = (await post('/api/v1/machine-groups', { name: 'Only D1', machineIds: [machines.D1] })).body.id;
    const scoped = await userSession(svc, admin, 'op.d1', 'operator', { libraries: '*', machineGroups: [group] });
    const mine = (await get('/api/v1/dashboard/recent-deployments', scoped)).body.items as { machineId: string }[];
    expect(mine.length).toBeGreaterThan(0);
    expect(new Set(mine.map((r) => r.machineId))).toEqual(new Set([machines.D1]));
    expect((await get('/api/v1/dashboard/recent-deployments?limit=101')).status).toBe(400);
  });
});

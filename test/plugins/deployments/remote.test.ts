/**
 * A deployment to a second gateway reached over HTTP with a secret key, whose
 * machine is driven through the FOCAS bridge simulator (a real TCP peer): the
 * program reaches the controller's directory and is read back from it, and
 * the gateway learns which vault version the file is.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningSimulator } from '../../../drivers/protocol-simulator.js';
import { startFocasSimulator } from '../../../drivers/focas/simulator.js';
import { assignmentsPlugin } from '../../../plugins/assignments/index.js';
import { deploymentsPlugin } from '../../../plugins/deployments/index.js';
import { gatewaysPlugin } from '../../../plugins/gateways/index.js';
import { vaultPlugin } from '../../../plugins/vault/index.js';
import { webhooksPlugin } from '../../../plugins/webhooks/index.js';
import { startTestGateway, type TestGateway } from '../../fixtures/gateway.js';
import { startTestProgramService, type TestProgramService } from '../../fixtures/programs.js';
import { login, TEST_ACCOUNTS, TEST_PROGRAMS_ADMIN_PASSWORD, type Session } from '../../fixtures/programs-accounts.js';
import { MC } from '../../drivers/focas/bridge-fixtures.js';

describe('a deployment through a remote gateway to a FOCAS machine', () => {
  let bridge: RunningSimulator;
  let remote: TestGateway;
  let svc: TestProgramService;
  let admin: Session;

  beforeAll(async () => {
    bridge = await startFocasSimulator({ machines: [MC] });
    remote = await startTestGateway({ machines: [{ ...bridge.machineConfig(MC), driverOptions: { cnc: MC.machineID }, tasks: { CNCStatus: { enabled: true, intervalMs: 1000 } } }] });
    const url = await remote.gateway.listen({ host: '127.0.0.1', port: 0 });
    const key = ((await remote.request('POST', '/api/security/secret-key/create', { username: 'admin', label: 'programs' })).body.data as { key: string }).key;
    svc = await startTestProgramService({ plugins: [TEST_ACCOUNTS, vaultPlugin, gatewaysPlugin, assignmentsPlugin, deploymentsPlugin, webhooksPlugin], env: { PROGRAMS_ADMIN_PASSWORD: TEST_PROGRAMS_ADMIN_PASSWORD } });
    admin = await login(svc, 'admin', TEST_PROGRAMS_ADMIN_PASSWORD);
    const gateway = await svc.request('POST', '/api/v1/gateways', { cookie: admin.cookie, headers: admin.headers, body: { name: 'hall-3', url, secretKey: key } });
    expect(gateway.body.reachable).toBe(true);
    await svc.request('POST', `/api/v1/gateways/${gateway.body.id}/sync`, { cookie: admin.cookie, headers: admin.headers });
  });
  afterAll(async () => {
    await svc.stop();
    await remote.stop();
    await bridge.close();
  });

  it('PV-12 PV-24 PV-33 PV-35 deploys over HTTP to the FOCAS bridge, verified by reading the file back', async () => {
    const post = (path: string, body?: unknown) => svc.request('POST', path, { cookie: admin.cookie, headers: admin.headers, ...(body !== undefined ? { body } : {}) });
    const machine = (await svc.request('GET', '/api/v1/machines', { cookie: admin.cookie })).body.items[0];
    expect(machine).toMatchObject({ machineId: MC.machineID, driver: 'focas' });
    const lib = await post('/api/v1/libraries', { name: 'FOCAS', approvalPolicy: { mode: 'autoRelease' } });
    const prg = (await post('/api/v1/programs', { libraryId: lib.body.id, name: 'O7001', controller: 'fanuc' })).body.id;
    const v = (await post(`/api/v1/programs/${prg}/versions`, { contentBase64: Buffer.from('%\nO7001 (REMOTE)\nG90 G54 G0 X0 Y0\nM30\n%\n').toString('base64'), notes: '' })).body.id;
    await post(`/api/v1/versions/${v}/submit`);
    const asg = (await post('/api/v1/machine-assignments', { programId: prg, machineId: machine.id, dir: '//CNC_MEM/USER/PATH1/', transform: { fileName: 'O7001' } })).body.id;
    const batch = await post('/api/v1/deployments', { versionId: v, assignmentIds: [asg], isTrial: false, trialHours: null });
    expect(batch.status).toBe(201);
    const id = batch.body.deployments[0].id;
    let d;
    const deadline = Date.now() + 15_000;
    do {
      await new Promise((r) => setTimeout(r, 50));
      d = (await svc.request('GET', `/api/v1/deployments/${id}`, { cookie: admin.cookie })).body;
    } while (!['Succeeded', 'Failed'].includes(d.status) && Date.now() < deadline);
    expect(d).toMatchObject({ status: 'Succeeded', transfers: 1 });
    expect(d.readBackSha256).toBe(d.sha256);
    const files = await svc.request('GET', `/api/v1/machines/${machine.id}/files?dir=${encodeURIComponent('//CNC_MEM/USER/PATH1/')}`, { cookie: admin.cookie });
    expect(files.body.files.map((f: { name: string }) => f.name)).toContain('O7001');
    // The upload told the gateway which vault version the file is (its ProgramVersion history row).
    await remote.gateway.context.history.flush();
    const start = new Date(Date.now() - 3_600_000).toISOString();
    const kept = await remote.request('GET', `/api/history/machine?machineID=${MC.machineID}&type=ProgramVersion&start=${encodeURIComponent(start)}`);
    expect((kept.body.data as { data: { data: unknown }[] }).data.map((r) => r.data)).toEqual([{ dir: '//CNC_MEM/USER/PATH1/', name: 'O7001', program: 'O7001', version: 1, sha256: d.sha256 }]);
  });
});

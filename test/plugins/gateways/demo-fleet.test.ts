/**
 * The demo fleet of `npm start` (the machines of config/default.json) as the
 * program service meets it: each machine comes with its controller's program
 * directory, so an assignment needs none; a directory set on the service is
 * never overwritten by a sync; and a demo machine runs the program it was last
 * given, so the proof of what ran says it matches the deployed version.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InProcessGatewayLink } from '../../../core/gateway-link/in-process.js';
import { assignmentsPlugin } from '../../../plugins/assignments/index.js';
import { createDeploymentsPlugin } from '../../../plugins/deployments/index.js';
import { gatewaysPlugin } from '../../../plugins/gateways/index.js';
import { mirrorPlugin } from '../../../plugins/mirror/index.js';
import { vaultPlugin } from '../../../plugins/vault/index.js';
import { webhooksPlugin } from '../../../plugins/webhooks/index.js';
import { startTestGateway, type TestGateway } from '../../fixtures/gateway.js';
import { startTestProgramService, type TestProgramService } from '../../fixtures/programs.js';
import { login, TEST_ACCOUNTS, TEST_PROGRAMS_ADMIN_PASSWORD, type Session } from '../../fixtures/programs-accounts.js';

interface DemoMachine { machineID: string; system: string; driverOptions: Record<string, unknown> }
const DEMO = (JSON.parse(readFileSync(new URL('../../../config/default.json', import.meta.url), 'utf8')) as { machines: DemoMachine[] }).machines;

/** The usual program directory of each controller the demo fleet simulates. */
const CONTROLLER_DIRS: Record<string, string> = {
  FANUC: '//CNC_MEM/USER/PATH1/', SIEMENS: '/_N_MPF_DIR/', HEIDENHAIN: 'TNC:/nc_prog/', MAZAK: 'C:/MC_PROGRAM/', OKUMA: 'MD1:/',
};
/** The program's file name as each controller files it (docs/programs-assignments.md, the control families' rules). */
const FILE_NAMES: Record<string, string> = { FANUC: 'O2000', SIEMENS: 'O2000.MPF', HEIDENHAIN: 'O2000.H', MAZAK: 'O2000', OKUMA: 'O2000.MIN' };
const PROGRAM = '%\r\nO2000 (FLANGE \xd8 25)\r\nG90 G54\r\nS1800 M03\r\nG01 X10. F250\r\nM30\r\n%\r\n';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('the demo fleet in the program service', { timeout: 60_000 }, () => {
  let gw: TestGateway;
  let remote: TestGateway;
  let svc: TestProgramService;
  let admin: Session;
  let programId: string;
  let versionId: string;
  const machines: Record<string, { id: string; programDir: string }> = {};

  const post = (path: string, body?: unknown) => svc.request('POST', path, { cookie: admin.cookie, headers: admin.headers, ...(body !== undefined ? { body } : {}) });
  const get = (path: string) => svc.request('GET', path, { cookie: admin.cookie });
  const patch = (path: string, body: unknown) => svc.request('PATCH', path, { cookie: admin.cookie, headers: admin.headers, body });
  const finished = async (id: string): Promise<{ status: string; error?: unknown }> => {
    const deadline = Date.now() + 20_000;
    for (;;) {
      const d = (await get(`/api/v1/deployments/${id}`)).body as { status: string };
      if (d.status === 'Succeeded' || d.status === 'Failed') return d;
      if (Date.now() > deadline) throw new Error(`deployment ${id} still ${d.status}`);
      await sleep(50);
    }
  };

  beforeAll(async () => {
    gw = await startTestGateway({ machines: DEMO });
    svc = await startTestProgramService({
      plugins: [TEST_ACCOUNTS, vaultPlugin, gatewaysPlugin, assignmentsPlugin, createDeploymentsPlugin({ trialRules: { evaluateEverySec: 60 } }), webhooksPlugin, mirrorPlugin],
      env: { PROGRAMS_ADMIN_PASSWORD: TEST_PROGRAMS_ADMIN_PASSWORD }, localGateway: new InProcessGatewayLink(gw.gateway.context.interfaces),
    });
    admin = await login(svc, 'admin', TEST_PROGRAMS_ADMIN_PASSWORD);
    for (const m of (await get('/api/v1/machines')).body.items as { id: string; machineId: string; programDir: string }[]) machines[m.machineId] = m;
    const libraryId = (await post('/api/v1/libraries', { name: 'Demo', approvalPolicy: { mode: 'autoRelease' } })).body.id;
    programId = (await post('/api/v1/programs', { libraryId, name: 'O2000', controller: 'fanuc' })).body.id;
    const v = await post(`/api/v1/programs/${programId}/versions`, { contentBase64: Buffer.from(PROGRAM, 'latin1').toString('base64'), notes: '' });
    versionId = (await post(`/api/v1/versions/${v.body.id}/submit`)).body.version.id;
  }, 60_000);
  afterAll(async () => {
    await svc?.stop();
    await remote?.stop();
    await gw?.stop();
  });

  it('PV-33 PV-34 every demo machine synced from its gateway has its controller\'s program directory, and an assignment to it without dir is 201', async () => {
    expect(DEMO).toHaveLength(12);
    expect(Object.keys(machines).sort()).toEqual(DEMO.map((m) => m.machineID).sort());
    for (const m of DEMO) expect({ machine: m.machineID, programDir: machines[m.machineID]?.programDir }).toEqual({ machine: m.machineID, programDir: CONTROLLER_DIRS[m.system] });
    for (const machineID of ['L01', 'M02', 'M03', 'M04', 'T02']) {
      const system = DEMO.find((m) => m.machineID === machineID)!.system;
      const res = await post('/api/v1/machine-assignments', { programId, machineId: machines[machineID]!.id, transform: { fileName: FILE_NAMES[system] } });
      expect({ machineID, status: res.status, body: res.status === 201 ? null : res.body }).toEqual({ machineID, status: 201, body: null });
      expect(res.body.dir).toBe('');
    }
  });

  it('PV-33 a program directory set on the service is never overwritten by a sync; a remote gateway\'s machines bring theirs over HTTP', async () => {
    const l02 = machines.L02!;
    expect((await patch(`/api/v1/machines/${l02.id}`, { programDir: '//CNC_MEM/USER/PATH2/' })).status).toBe(200);
    const gatewayId = (await get('/api/v1/gateways')).body.items[0].id;
    expect((await post(`/api/v1/gateways/${gatewayId}/sync`)).status).toBe(200);
    expect((await get(`/api/v1/machines/${l02.id}`)).body.programDir).toBe('//CNC_MEM/USER/PATH2/');

    remote = await startTestGateway({ machines: DEMO.filter((m) => m.machineID === 'M03' || m.machineID === 'M06').map((m) => ({ ...m, machineID: `R-${m.machineID}` })) });
    const url = await remote.gateway.listen({ host: '127.0.0.1', port: 0 });
    const secretKey = ((await remote.request('POST', '/api/security/secret-key/create', { username: 'admin', label: 'programs' })).body.data as { key: string }).key;
    const created = await post('/api/v1/gateways', { name: 'hall-2', url, secretKey });
    expect(created.status).toBe(201);
    expect((await post(`/api/v1/gateways/${created.body.id}/sync`)).body.machines.added.names).toEqual(['R-M03', 'R-M06']);
    const listed = (await get(`/api/v1/machines?gatewayId=${created.body.id}`)).body.items as { machineId: string; programDir: string }[];
    expect(Object.fromEntries(listed.map((m) => [m.machineId, m.programDir]))).toEqual({ 'R-M03': 'TNC:/nc_prog/', 'R-M06': '/_N_MPF_DIR/' });
  });

  it('PV-37 proof of what ran: a program deployed to demo machines runs there, and the mirror\'s read of the running program matches the deployed version', async () => {
    const targets = DEMO.filter((m) => m.machineID === 'L03' || m.machineID === 'M06');
    const assignmentIds: string[] = [];
    for (const m of targets) {
      const res = await post('/api/v1/machine-assignments', { programId, machineId: machines[m.machineID]!.id, dir: CONTROLLER_DIRS[m.system], transform: { fileName: FILE_NAMES[m.system] } });
      expect(res.status).toBe(201);
      assignmentIds.push(res.body.id);
    }
    const res = await post('/api/v1/deployments', { versionId, assignmentIds, isTrial: false, trialHours: null });
    expect(res.status).toBe(201);
    for (const d of res.body.deployments as { id: string }[]) expect(await finished(d.id)).toMatchObject({ status: 'Succeeded' });
    for (const { machineID, system } of targets) {
      const id = machines[machineID]!.id;
      expect((await post(`/api/v1/machines/${id}/request-checkin`, { wait: true })).status).toBe(200);
      const running = (await get(`/api/v1/machines/${id}/mirror`)).body.running;
      expect(running).toMatchObject({ dir: CONTROLLER_DIRS[system], name: FILE_NAMES[system], matches: true, expected: { source: 'release', versionId } });
    }
  });
});

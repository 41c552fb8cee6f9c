/**
 * The program service's fleet against real gateways: the local one reached
 * in-process (registered at first start), a second one over HTTP with a
 * secret key; sync, machines, groups, scopes and the files on a machine.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InProcessGatewayLink } from '../../../core/gateway-link/in-process.js';
import { gatewaysPlugin } from '../../../plugins/gateways/index.js';
import { simMachine, startTestGateway, type TestGateway } from '../../fixtures/gateway.js';
import { openProgramsDatabase, startTestProgramService, type TestProgramService } from '../../fixtures/programs.js';
import { login, TEST_ACCOUNTS, TEST_PROGRAMS_ADMIN_PASSWORD, userSession, type Session } from '../../fixtures/programs-accounts.js';

const DIR = '//CNC_MEM/USER/PATH1/';

describe('the program service\'s fleet', () => {
  let local: TestGateway;
  let remote: TestGateway;
  let remoteUrl: string;
  let remoteKey: string;
  let svc: TestProgramService;
  let admin: Session;

  const get = (path: string, s: Session = admin) => svc.request('GET', path, { cookie: s.cookie });
  const post = (path: string, body?: unknown, s: Session = admin) => svc.request('POST', path, { cookie: s.cookie, headers: s.headers, ...(body !== undefined ? { body } : {}) });
  const patch = (path: string, body: unknown, s: Session = admin) => svc.request('PATCH', path, { cookie: s.cookie, headers: s.headers, body });

  beforeAll(async () => {
    local = await startTestGateway({ machines: [simMachine('L1'), simMachine('L2')], groups: [{ groupID: 'turning', name: 'Turning', machineIDs: ['L1'] }] });
    remote = await startTestGateway({ machines: [simMachine('R1'), simMachine('R2'), simMachine('R3')] });
    remoteUrl = await remote.gateway.listen({ host: '127.0.0.1', port: 0 });
    remoteKey = ((await remote.request('POST', '/api/security/secret-key/create', { username: 'admin', label: 'programs' })).body.data as { key: string }).key;
    svc = await startTestProgramService({
      plugins: [TEST_ACCOUNTS, gatewaysPlugin], env: { PROGRAMS_ADMIN_PASSWORD: TEST_PROGRAMS_ADMIN_PASSWORD }, localGateway: new InProcessGatewayLink(local.gateway.context.interfaces),
    });
    admin = await login(svc, 'admin', TEST_PROGRAMS_ADMIN_PASSWORD);
  });
  afterAll(async () => {
    await svc.stop();
    await remote.stop();
    await local.stop();
  });

  it('PV-33 registers the local gateway at first start, reached in-process, and reads its machines and groups', async () => {
    const gateways = await get('/api/v1/gateways');
    expect(gateways.body.items).toEqual([expect.objectContaining({ name: 'local', kind: 'in-process', url: 'in-process', reachable: true, lastSyncAt: expect.any(String) })]);
    const machines = await get(`/api/v1/machines?gatewayId=${gateways.body.items[0].id}`);
    expect(machines.body.items.map((m: { machineId: string }) => m.machineId).sort()).toEqual(['L1', 'L2']);
    const groups = await get('/api/v1/machine-groups');
    const turning = groups.body.items.find((g: { gatewayGroupId: string }) => g.gatewayGroupId === 'turning');
    expect(turning).toMatchObject({ name: 'Turning', source: 'gateway' });
    const l1 = machines.body.items.find((m: { machineId: string }) => m.machineId === 'L1');
    expect(turning.machineIds).toEqual([l1.id]);
    expect(l1.groupIds).toEqual([turning.id]);
  });

  it('PV-33 registers a remote gateway with a secret key that is sealed at rest and never returned; sync says what changed', async () => {
    const created = await post('/api/v1/gateways', { name: 'hall-2', url: remoteUrl, secretKey: remoteKey });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ name: 'hall-2', kind: 'http', url: remoteUrl, reachable: true });
    expect(created.text).not.toContain(remoteKey);
    const db = await openProgramsDatabase(svc.dataDir);
    try {
      const dump = JSON.stringify(await db.all('SELECT * FROM fleet_gateways'));
      // The secret is everything after `<prefix>_<id>_`; base64url may itself contain '_'.
      expect(dump).not.toContain(remoteKey.split('_').slice(2).join('_'));
      expect(JSON.stringify(await db.all('SELECT * FROM audit_log'))).not.toContain(remoteKey.split('_').slice(2).join('_'));
    } finally {
      await db.close();
    }
    const id = created.body.id as string;
    const first = await post(`/api/v1/gateways/${id}/sync`);
    expect(first.body.machines.added).toEqual({ names: ['R1', 'R2', 'R3'], count: 3 });

    // Behind the service's back: R2 renamed, R3 removed, R4 added on the gateway.
    await remote.request('POST', '/api/config/machine/update', { machineID: 'R2', name: 'Renamed R2' });
    await remote.request('POST', '/api/config/machine/delete', { machineID: 'R3' });
    await remote.request('POST', '/api/config/machine/add', simMachine('R4'));
    const second = await post(`/api/v1/gateways/${id}/sync`);
    expect(second.body.machines).toMatchObject({ added: { names: ['R4'], count: 1 }, changed: [{ machineId: 'R2', fields: ['name'] }], gone: { names: ['R3'], count: 1 }, unchanged: 1 });
    const all = await get(`/api/v1/machines?gatewayId=${id}`);
    const r3 = all.body.items.find((m: { machineId: string }) => m.machineId === 'R3');
    expect(r3).toMatchObject({ present: false });
    expect((await post(`/api/v1/gateways/${id}/sync`)).body.machines.unchanged).toBe(3);
  });

  it('PV-33 a remote gateway that stops answering shows as unreachable with its error, and sync is 503', async () => {
    const gone = await post('/api/v1/gateways', { name: 'switched-off', url: 'http://127.0.0.1:9', secretKey: remoteKey });
    expect(gone.status).toBe(201);
    expect(gone.body).toMatchObject({ reachable: false, lastError: expect.stringMatching(/unreachable/) });
    const sync = await post(`/api/v1/gateways/${gone.body.id}/sync`);
    expect(sync.status).toBe(503);
    expect(Number(sync.headers.get('retry-after'))).toBeGreaterThan(0);
    const wrongKey = await post('/api/v1/gateways', { name: 'wrong-key', url: remoteUrl, secretKey: 'gwk_000000000000_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA' });
    expect(wrongKey.body).toMatchObject({ reachable: false, lastError: expect.any(String) });
    const dup = await post('/api/v1/gateways', { name: 'HALL-2', url: remoteUrl, secretKey: remoteKey });
    expect(dup.status).toBe(409);
    const badUrl = await post('/api/v1/gateways', { name: 'x', url: 'ftp://somewhere', secretKey: remoteKey });
    expect(badUrl.status).toBe(400);
    expect(badUrl.body.errors[0].field).toBe('body.url');
  });

  it('PV-33 GET, PATCH /machines/{id}: the service\'s settings per machine; GET /machines/{id}/files reads the machine through its gateway', async () => {
    const machines = await get('/api/v1/machines');
    const l1 = machines.body.items.find((m: { machineId: string }) => m.machineId === 'L1');
    const updated = await patch(`/api/v1/machines/${l1.id}`, { programDir: DIR, transformProfile: 'fanuc-o-number', mirror: { enabled: true, intervalSec: 600 } });
    expect(updated.body).toMatchObject({ programDir: DIR, transformProfile: 'fanuc-o-number', mirror: { enabled: true, intervalSec: 600 } });
    expect((await get(`/api/v1/machines/${l1.id}`)).body.mirror.intervalSec).toBe(600);
    const tooOften = await patch(`/api/v1/machines/${l1.id}`, { mirror: { intervalSec: 1 } });
    expect(tooOften.status).toBe(400);
    expect(tooOften.body.errors[0].field).toBe('body.mirror.intervalSec');
    const climbing = await patch(`/api/v1/machines/${l1.id}`, { programDir: '//CNC_MEM/../etc/' });
    expect(climbing.status).toBe(400);
    // A file put on the machine through the gateway shows in the service's list.
    await local.request('POST', '/api/file/program/upload', { machineID: 'L1', dir: DIR, name: 'O7777', content: '%\nO7777\nM30\n%\n' });
    const files = await get(`/api/v1/machines/${l1.id}/files`);
    expect(files.status).toBe(200);
    expect(files.body.dir).toBe(DIR);
    expect(files.body.files.map((f: { name: string }) => f.name)).toContain('O7777');
    expect((await get('/api/v1/machines/mch_0000000000000000')).status).toBe(404);
  });

  it('PV-33 POST, GET, PATCH /machine-groups; a gateway\'s group takes its members from the gateway', async () => {
    const machines = (await get('/api/v1/machines')).body.items as { id: string; machineId: string }[];
    const ids = machines.filter((m) => m.machineId.startsWith('L')).map((m) => m.id);
    const created = await post('/api/v1/machine-groups', { name: 'Night shift', machineIds: ids });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ source: 'service', machineIds: [...ids].sort() });
    const renamed = await patch(`/api/v1/machine-groups/${created.body.id}`, { name: 'Night shift A', machineIds: ids.slice(0, 1) });
    expect(renamed.body).toMatchObject({ name: 'Night shift A', machineIds: ids.slice(0, 1) });
    const unknown = await post('/api/v1/machine-groups', { name: 'Ghosts', machineIds: ['mch_0000000000000000'] });
    expect(unknown.status).toBe(422);
    expect(unknown.body.errors[0].field).toBe('body.machineIds[0]');
    const turning = (await get('/api/v1/machine-groups')).body.items.find((g: { gatewayGroupId: string | null }) => g.gatewayGroupId === 'turning');
    const refused = await patch(`/api/v1/machine-groups/${turning.id}`, { machineIds: ids });
    expect(refused.status).toBe(409);
    expect((await patch(`/api/v1/machine-groups/${turning.id}`, { description: 'lathes' })).body.description).toBe('lathes');
  });

  it('PV-54 a machine outside the caller\'s machine-group scope is 404; fleet changes need fleet.manage (403)', async () => {
    const groups = (await get('/api/v1/machine-groups')).body.items as { id: string; gatewayGroupId: string | null; machineIds: string[] }[];
    const turning = groups.find((g) => g.gatewayGroupId === 'turning') as { id: string; machineIds: string[] };
    const operator = await userSession(svc, admin, 'op.lathe', 'operator', { libraries: '*', machineGroups: [turning.id] });
    const all = (await get('/api/v1/machines')).body.items as { id: string; machineId: string }[];
    const inside = all.find((m) => m.machineId === 'L1') as { id: string };
    const outside = all.find((m) => m.machineId === 'L2') as { id: string };
    expect((await get(`/api/v1/machines/${inside.id}`, operator)).status).toBe(200);
    const hidden = await get(`/api/v1/machines/${outside.id}`, operator);
    expect(hidden.status).toBe(404);
    expect(hidden.body.detail).toBe(`no machine ${outside.id}`);
    expect((await get(`/api/v1/machines/${outside.id}/files`, operator)).status).toBe(404);
    const listed = (await get('/api/v1/machines', operator)).body.items.map((m: { id: string }) => m.id);
    expect(listed).toEqual([inside.id]);
    expect((await get('/api/v1/machine-groups', operator)).body.items.map((g: { id: string }) => g.id)).toEqual([turning.id]);
    const beyond = await patch(`/api/v1/machines/${inside.id}`, { programDir: DIR }, operator);
    expect(beyond.status).toBe(403);
    expect((await post('/api/v1/gateways', { name: 'x', url: remoteUrl, secretKey: remoteKey }, operator)).status).toBe(403);
  });
});

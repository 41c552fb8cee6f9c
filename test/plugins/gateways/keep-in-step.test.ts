/**
 * The service keeps its fleet in step without a sync call: the local
 * gateway's machine changes reach it at once (the gateway's events), remote
 * gateways are read again on the interval and their failures recorded.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { InProcessGatewayLink } from '../../../core/gateway-link/in-process.js';
import { fleetChangesOf } from '../../../core/roles/gateway/events.js';
import { gatewaysPlugin } from '../../../plugins/gateways/index.js';
import { simMachine, startTestGateway, type TestGateway } from '../../fixtures/gateway.js';
import { openProgramsDatabase, startTestProgramService, type TestProgramService } from '../../fixtures/programs.js';
import { login, TEST_ACCOUNTS, TEST_PROGRAMS_ADMIN_PASSWORD, type Session } from '../../fixtures/programs-accounts.js';

interface MachineItem { id: string; machineId: string; name: string; present: boolean; gatewayId: string }
interface GatewayItem { id: string; name: string; reachable: boolean; lastError: string | null; lastSyncAt: string | null }

describe('the fleet kept in step with its gateways', () => {
  let local: TestGateway;
  let remote: TestGateway;
  let svc: TestProgramService;
  let admin: Session;
  let remoteId: string;
  let remoteStopped = false;

  const get = (path: string) => svc.request('GET', path, { cookie: admin.cookie });
  const machines = async () => (await get('/api/v1/machines?limit=200')).body.items as MachineItem[];
  const gateways = async () => (await get('/api/v1/gateways')).body.items as GatewayItem[];

  beforeAll(async () => {
    local = await startTestGateway({ machines: [simMachine('L1')] });
    remote = await startTestGateway({ machines: [simMachine('R1')] });
    const remoteUrl = await remote.gateway.listen({ host: '127.0.0.1', port: 0 });
    const remoteKey = ((await remote.request('POST', '/api/security/secret-key/create', { username: 'admin', label: 'programs' })).body.data as { key: string }).key;
    svc = await startTestProgramService({
      plugins: [TEST_ACCOUNTS, gatewaysPlugin], env: { PROGRAMS_ADMIN_PASSWORD: TEST_PROGRAMS_ADMIN_PASSWORD },
      localGateway: new InProcessGatewayLink(local.gateway.context.interfaces, fleetChangesOf(local.gateway.context.bus)),
      programs: { gatewaySync: { intervalSec: 1 } },
    });
    admin = await login(svc, 'admin', TEST_PROGRAMS_ADMIN_PASSWORD);
    const created = await svc.request('POST', '/api/v1/gateways', { cookie: admin.cookie, headers: admin.headers, body: { name: 'hall-2', url: remoteUrl, secretKey: remoteKey } });
    remoteId = created.body.id as string;
  });
  afterAll(async () => {
    await svc.stop();
    if (!remoteStopped) await remote.stop();
    await local.stop();
  });

  it('PV-33 a machine added, renamed or removed on the local gateway at run time reaches the service without a sync call', async () => {
    await local.request('POST', '/api/config/machine/add', simMachine('L2', { driverOptions: { seed: 7, machineType: 'mill', system: 'FANUC', programDir: '//CNC_MEM/USER/PATH1/' } }));
    await vi.waitFor(async () => expect((await machines()).find((m) => m.machineId === 'L2')).toMatchObject({ present: true, name: 'Machine L2' }), { timeout: 5000, interval: 50 });
    const l2 = (await machines()).find((m) => m.machineId === 'L2') as MachineItem;
    expect((await get(`/api/v1/machines/${l2.id}`)).body.programDir).toBe('//CNC_MEM/USER/PATH1/');
    await local.request('POST', '/api/config/machine/update', { machineID: 'L2', name: 'Lathe 2' });
    await vi.waitFor(async () => expect((await get(`/api/v1/machines/${l2.id}`)).body.name).toBe('Lathe 2'), { timeout: 5000, interval: 50 });
    await local.request('POST', '/api/config/machine/delete', { machineID: 'L2' });
    await vi.waitFor(async () => expect((await get(`/api/v1/machines/${l2.id}`)).body.present).toBe(false), { timeout: 5000, interval: 50 });
  });

  it('PV-33 a remote gateway is synced on the interval (programs.gatewaySync.intervalSec), and its last sync time moves on', async () => {
    const before = (await gateways()).find((g) => g.id === remoteId) as GatewayItem;
    await remote.request('POST', '/api/config/machine/add', simMachine('R2'));
    await vi.waitFor(async () => expect((await machines()).filter((m) => m.gatewayId === remoteId).map((m) => m.machineId).sort()).toEqual(['R1', 'R2']), { timeout: 10_000, interval: 100 });
    const after = (await gateways()).find((g) => g.id === remoteId) as GatewayItem;
    expect(after.reachable).toBe(true);
    expect(Date.parse(after.lastSyncAt ?? '')).toBeGreaterThan(Date.parse(before.lastSyncAt ?? '1970-01-01T00:00:00Z'));
  });

  it('the service\'s own syncs that change nothing write no audit record', async () => {
    const count = async () => {
      const db = await openProgramsDatabase(svc.dataDir);
      try {
        return (await db.all("SELECT action FROM audit_log WHERE action = 'gateway.sync'")).length;
      } finally {
        await db.close();
      }
    };
    const first = await count();
    const gw = async () => (await gateways()).find((g) => g.id === remoteId) as GatewayItem;
    const synced = (await gw()).lastSyncAt;
    // Two more interval syncs with nothing new on the gateway.
    await vi.waitFor(async () => expect(Date.parse((await gw()).lastSyncAt ?? '')).toBeGreaterThan(Date.parse(synced ?? '') + 1500), { timeout: 10_000, interval: 200 });
    expect(await count()).toBe(first);
  });

  it('PV-33 a remote gateway that stops answering is shown unreachable with its error by the next interval sync', async () => {
    await remote.stop();
    remoteStopped = true;
    await vi.waitFor(async () => expect((await gateways()).find((g) => g.id === remoteId)).toMatchObject({ reachable: false, lastError: expect.stringMatching(/.+/) }), { timeout: 10_000, interval: 200 });
  });
});

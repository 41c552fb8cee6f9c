/**
 * The gateways of other instances, seen from one program service: each is its
 * own fleet entry (its machines are others than this process's gateway's of
 * the same name), reached only over HTTP at the address registered for it
 * and only once it says it is that gateway, or not at all meanwhile: a
 * deployment waits, the mirror leaves its machines to their own instance.
 * Another instance is played by an entry registered by the same rule an
 * instance follows at start (plugins/gateways/local-entry.ts), on the
 * service's own database, with a real gateway behind it on 127.0.0.1.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HttpGatewayLink } from '../../../core/gateway-link/http.js';
import { InProcessGatewayLink } from '../../../core/gateway-link/in-process.js';
import { GatewayLinkError } from '../../../core/gateway-link/types.js';
import { AuditChain } from '../../../core/roles/programs/audit/chain.js';
import { assignmentsPlugin } from '../../../plugins/assignments/index.js';
import { deploymentsPlugin } from '../../../plugins/deployments/index.js';
import { IdentifiedLink } from '../../../plugins/gateways/identified-link.js';
import { gatewaysPlugin } from '../../../plugins/gateways/index.js';
import { registerLocalGateway } from '../../../plugins/gateways/local-entry.js';
import { FleetRepository } from '../../../plugins/gateways/store.js';
import { mirrorPlugin } from '../../../plugins/mirror/index.js';
import { vaultPlugin } from '../../../plugins/vault/index.js';
import { webhooksPlugin } from '../../../plugins/webhooks/index.js';
import type { SimulatorClient } from '../../../drivers/simulator/index.js';
import { CountingLink } from '../../fixtures/counting-link.js';
import { simMachine, startTestGateway, type TestGateway } from '../../fixtures/gateway.js';
import { openProgramsDatabase, PROGRAMS_TEST_POSTGRES, startTestProgramService, type TestProgramService } from '../../fixtures/programs.js';
import { login, TEST_ACCOUNTS, TEST_PROGRAMS_ADMIN_PASSWORD, type Session } from '../../fixtures/programs-accounts.js';
import { until, untilDefined } from '../../fixtures/until.js';

const DIR = '//CNC_MEM/USER/PATH1/';
const PLUGINS = [TEST_ACCOUNTS, vaultPlugin, gatewaysPlugin, assignmentsPlugin, deploymentsPlugin, webhooksPlugin, mirrorPlugin];

/** A gateway of its own (data directory, gateway-id, simulated L01) listening on 127.0.0.1, with a secret key of its administrator. */
async function otherGateway(): Promise<{ gw: TestGateway; url: string; key: string; gatewayID: string }> {
  const gw = await startTestGateway({ machines: [simMachine('L01')] });
  const url = await gw.gateway.listen({ host: '127.0.0.1', port: 0 });
  const key = ((await gw.request('POST', '/api/security/secret-key/create', { username: 'admin', label: 'other instances' })).body.data as { key: string }).key;
  const { gatewayID } = await new InProcessGatewayLink(gw.gateway.context.interfaces).identity();
  return { gw, url, key, gatewayID };
}

/** The file `name` in DIR on a test gateway's simulated L01, if it has it. */
const fileOn = (gw: TestGateway, name: string) => (gw.gateway.fleet.client('L01') as SimulatorClient).machine.download(DIR, name);

describe('the gateways of other instances', () => {
  let local: TestGateway;
  let link: CountingLink;
  let svc: TestProgramService;
  let admin: Session;
  let versionId: string;
  let programId: string;
  const others: Awaited<ReturnType<typeof otherGateway>>[] = [];

  const post = (path: string, body?: unknown) => svc.request('POST', path, { cookie: admin.cookie, headers: admin.headers, ...(body !== undefined ? { body } : {}) });
  const patch = (path: string, body: unknown) => svc.request('PATCH', path, { cookie: admin.cookie, headers: admin.headers, body });
  const get = (path: string) => svc.request('GET', path, { cookie: admin.cookie });

  /** Registers `other`'s gateway as its own instance would at start (another host), on the service's database; answers its entry id. */
  const asAnotherInstance = async (other: { gatewayID: string }, host: string): Promise<string> => {
    const db = await openProgramsDatabase(svc.dataDir);
    try {
      const { entry } = await registerLocalGateway({ db, audit: await AuditChain.open(db, { timeZone: 'UTC' }) }, new FleetRepository(db), {
        identity: { gatewayID: other.gatewayID, name: 'gateway' }, host, servedBy: `${host}:/var/lib/cnc`, shared: true, adopt: undefined, idFile: '/var/lib/cnc/gateway-id', now: Date.now(),
      });
      return entry.id;
    } finally {
      await db.close();
    }
  };
  /** A machine L01 on the entry, as the sync of its own instance leaves it; answers its id. */
  const syncedThere = async (entryId: string, suffix: string): Promise<string> => {
    const db = await openProgramsDatabase(svc.dataDir);
    const id = `mch_00000000000000${suffix}`;
    try {
      await db.write((tx) => tx.run(
        `INSERT INTO fleet_machines (id, gateway_id, machine_id, name, driver, system, model, machine_type, active_on_gateway, present, program_dir, transform_profile, mirror_enabled, mirror_interval_sec, created_at, updated_at)
         VALUES (?, ?, 'L01', 'Machine L01', 'simulator', 'FANUC', '0i-MF', 'mill', 1, 1, ?, NULL, 0, 300, ?, ?)`, [id, entryId, DIR, Date.now(), Date.now()]));
    } finally {
      await db.close();
    }
    return id;
  };
  const deployTo = async (machineId: string) => {
    const assignment = await post('/api/v1/machine-assignments', { programId, machineId, dir: DIR });
    expect(assignment.status).toBe(201);
    const batch = await post('/api/v1/deployments', { versionId, assignmentIds: [assignment.body.id], isTrial: false, trialHours: null });
    expect(batch.status).toBe(201);
    return batch.body.deployments[0].id as string;
  };
  const settled = (id: string, timeoutMs = 15_000) =>
    until(`deployment ${id} finished`, async () => (await get(`/api/v1/deployments/${id}`)).body, (d) => d.status === 'Succeeded' || d.status === 'Failed', timeoutMs);
  /** This instance's own gateway entry and its L01. */
  const own = async () => {
    const { gatewayID } = await link.identity();
    const entry = ((await get('/api/v1/gateways')).body.items as { id: string; gatewayID: string | null }[]).find((g) => g.gatewayID === gatewayID);
    const machine = ((await get('/api/v1/machines?limit=100')).body.items as { id: string; machineId: string; gatewayId: string }[]).find((m) => m.machineId === 'L01' && m.gatewayId === entry?.id);
    return { entryId: entry?.id as string, l01: machine?.id as string };
  };

  beforeAll(async () => {
    local = await startTestGateway({ machines: [simMachine('L01')] });
    link = new CountingLink(new InProcessGatewayLink(local.gateway.context.interfaces));
    svc = await startTestProgramService({ plugins: PLUGINS, env: { PROGRAMS_ADMIN_PASSWORD: TEST_PROGRAMS_ADMIN_PASSWORD }, localGateway: link });
    admin = await login(svc, 'admin', TEST_PROGRAMS_ADMIN_PASSWORD);
    for (let i = 0; i < 3; i++) others.push(await otherGateway());
    const lib = await post('/api/v1/libraries', { name: 'Lathes', approvalPolicy: { mode: 'autoRelease' } });
    programId = (await post('/api/v1/programs', { libraryId: lib.body.id, name: 'O5001', controller: 'fanuc' })).body.id;
    const version = await post(`/api/v1/programs/${programId}/versions`, { contentBase64: Buffer.from('%\nO5001 (FLANGE)\nG90 G54\nM30\n%\n').toString('base64'), notes: '' });
    versionId = (await post(`/api/v1/versions/${version.body.id}/submit`)).body.version.id;
  });
  afterAll(async () => {
    await svc?.stop();
    await local?.stop();
    for (const o of others) await o.gw.stop();
  });

  it('PV-33 PV-35 a deployment to the L01 of another instance\'s gateway goes to that gateway at its registered address; one to this instance\'s L01 stays here', async () => {
    const [b] = others as [Awaited<ReturnType<typeof otherGateway>>];
    const entryB = await asAnotherInstance(b, 'host-b');
    const registered = await patch(`/api/v1/gateways/${entryB}`, { url: b.url, secretKey: b.key });
    expect(registered.status).toBe(200);
    expect(registered.body).toMatchObject({ id: entryB, kind: 'in-process', url: b.url, gatewayID: b.gatewayID, host: 'host-b', reachable: true });
    expect(JSON.stringify(registered.body)).not.toContain(b.key);
    expect((await post(`/api/v1/gateways/${entryB}/sync`)).status).toBe(200);
    const ownEntry = await own();
    const l01 = ((await get('/api/v1/machines?limit=100')).body.items as { id: string; machineId: string; gatewayId: string }[]).filter((m) => m.machineId === 'L01');
    expect(l01.map((m) => m.gatewayId).sort()).toEqual([ownEntry.entryId, entryB].sort());
    const theirs = l01.find((m) => m.gatewayId === entryB)?.id as string;

    const uploadsHere = link.uploads;
    const there = await settled(await deployTo(theirs));
    expect(there).toMatchObject({ status: 'Succeeded', reason: null });
    expect(fileOn(b.gw, there.fileName)?.toString()).toContain('O5001 (FLANGE)');
    expect(fileOn(local, there.fileName)).toBeUndefined();
    expect(link.uploads).toBe(uploadsHere);

    const here = await settled(await deployTo(ownEntry.l01));
    expect(here).toMatchObject({ status: 'Succeeded', reason: null });
    expect(fileOn(local, here.fileName)?.toString()).toContain('O5001 (FLANGE)');
    expect(link.uploads).toBe(uploadsHere + 1);
  });

  it('PV-33 the first address of another instance\'s gateway needs its url and a secretKey, and must lead to that gateway (422 naming body.url, nothing stored)', async () => {
    const [b, c] = others as [Awaited<ReturnType<typeof otherGateway>>, Awaited<ReturnType<typeof otherGateway>>];
    const entryC = await asAnotherInstance(c, 'host-c');
    const alone = await patch(`/api/v1/gateways/${entryC}`, { url: c.url });
    expect(alone.status).toBe(400);
    expect(alone.body.errors).toEqual([expect.objectContaining({ field: 'body.secretKey' })]);
    const elsewhere = await patch(`/api/v1/gateways/${entryC}`, { url: b.url, secretKey: b.key });
    expect(elsewhere.status).toBe(422);
    expect(elsewhere.body.errors).toEqual([expect.objectContaining({ field: 'body.url', message: 'leads to another gateway' })]);
    expect(elsewhere.body.detail).toContain(`is ${b.gatewayID}`);
    expect((await get(`/api/v1/gateways/${entryC}`)).body).toMatchObject({ url: 'in-process', gatewayID: c.gatewayID });
    const nothing = await patch(`/api/v1/gateways/${entryC}`, {});
    expect(nothing.status).toBe(400);
    expect(nothing.body.errors).toEqual([expect.objectContaining({ field: 'body', accepted: 'name, url, secretKey' })]);
    const renamed = await patch(`/api/v1/gateways/${entryC}`, { name: 'cell C' });
    expect(renamed.body).toMatchObject({ name: 'cell C', url: 'in-process' });
  });

  it('PV-33 PATCH changes a remote gateway\'s key alone (sealed, never answered or audited) and its name, each audited as gateway.update', async () => {
    const [b] = others as [Awaited<ReturnType<typeof otherGateway>>];
    const remote = await post('/api/v1/gateways', { name: 'plant b', url: b.url, secretKey: 'gwk_wrong_0000000000000000' });
    expect(remote.body).toMatchObject({ kind: 'http', reachable: false });
    const fixed = await patch(`/api/v1/gateways/${remote.body.id}`, { secretKey: b.key, name: 'plant B' });
    expect(fixed.status).toBe(200);
    expect(fixed.body).toMatchObject({ name: 'plant B', url: b.url, reachable: true, lastError: null });
    expect(JSON.stringify(fixed.body)).not.toContain(b.key);
    const db = await openProgramsDatabase(svc.dataDir);
    try {
      const audit = await db.all<{ action: string; details: string }>('SELECT action, details FROM audit_log WHERE entity_id = ? ORDER BY seq', [remote.body.id]);
      expect(audit.map((r) => r.action)).toEqual(['gateway.register', 'gateway.update']);
      expect(JSON.parse(audit[1]?.details ?? '{}')).toEqual({ changed: ['name', 'secretKey'], name: 'plant B', url: b.url });
      expect(JSON.stringify(await db.all('SELECT * FROM audit_log'))).not.toContain(b.key.split('_').slice(2).join('_'));
      expect(JSON.stringify(await db.all('SELECT * FROM fleet_gateways'))).not.toContain(b.key.split('_').slice(2).join('_'));
    } finally {
      await db.close();
    }
  });

  it('an address that leads to another gateway now sends nothing there: the link asks who answers first', async () => {
    const [b, c] = others as [Awaited<ReturnType<typeof otherGateway>>, Awaited<ReturnType<typeof otherGateway>>];
    const astray = new IdentifiedLink(new HttpGatewayLink(b.url, b.key), c.gatewayID, { id: 'gw_00000000000000c1', name: 'cell C' });
    const err = await astray.uploadProgram('L01', DIR, 'O7001', Buffer.from('%\nO7001\nM30\n%\n')).then(() => undefined, (e: unknown) => e);
    expect(err).toBeInstanceOf(GatewayLinkError);
    expect((err as GatewayLinkError).kind).toBe('failed');
    expect((err as Error).message).toContain(`the gateway at ${b.url} is ${b.gatewayID}`);
    expect(fileOn(b.gw, 'O7001')).toBeUndefined();
    // The gateway it should be answers, and is used.
    const right = new IdentifiedLink(new HttpGatewayLink(c.url, c.key), c.gatewayID, { id: 'gw_00000000000000c1', name: 'cell C' });
    await right.uploadProgram('L01', DIR, 'O7001', Buffer.from('%\nO7001\nM30\n%\n'));
    expect(fileOn(c.gw, 'O7001')).toBeDefined();
  });

  it('PV-35 while another instance\'s gateway has no address, a deployment to its machine waits (Retrying, saying what to do) and nothing goes through this process\'s gateway; with its address it goes there', async () => {
    const d = others[2] as Awaited<ReturnType<typeof otherGateway>>;
    const entryD = await asAnotherInstance(d, 'host-d');
    const machine = await syncedThere(entryD, 'd1');
    const uploadsHere = link.uploads;
    const id = await deployTo(machine);
    const waiting = await until(`deployment ${id} retrying`, async () => (await get(`/api/v1/deployments/${id}`)).body, (row) => row.status === 'Retrying', 10_000);
    expect(waiting.reason).toContain(`gateway local-${d.gatewayID.slice(0, 8)} runs in the process of the instance on host-d`);
    expect(waiting.reason).toContain(`PATCH /api/v1/gateways/${entryD}`);
    expect(link.uploads).toBe(uploadsHere);
    expect(fileOn(d.gw, waiting.fileName)).toBeUndefined();

    expect((await patch(`/api/v1/gateways/${entryD}`, { url: d.url, secretKey: d.key })).status).toBe(200);
    const done = await settled(id, 30_000);
    expect(done).toMatchObject({ status: 'Succeeded' });
    expect(fileOn(d.gw, done.fileName)?.toString()).toContain('O5001 (FLANGE)');
    expect(link.uploads).toBe(uploadsHere);
  });

  it('PV-37 the mirror leaves the machines of another instance\'s gateway it has no way to to that instance, and reads its own', async () => {
    const entryE = await asAnotherInstance({ gatewayID: '0e0e0e0e-0000-4000-8000-00000000000e' }, 'host-e');
    const theirs = await syncedThere(entryE, 'e1');
    const ours = (await own()).l01;
    for (const m of [theirs, ours]) expect((await patch(`/api/v1/machines/${m}`, { mirror: { enabled: true, intervalSec: 30 } })).status).toBe(200);
    await untilDefined('a mirror read of this instance\'s L01', async () => ((await get(`/api/v1/machines/${ours}/mirror`)).body.lastRunAt ?? undefined) as string | undefined, 10_000);
    // Several scheduler rounds later, nothing was tried on theirs here: no read, no error.
    await new Promise((r) => setTimeout(r, 2500));
    expect((await get(`/api/v1/machines/${theirs}/mirror`)).body).toMatchObject({ enabled: true, lastRunAt: null, lastError: null, files: 0 });
  });
});

describe('a start on a database whose in-process gateway is another\'s', () => {
  it('PV-33 on SQLite the start is refused naming gateway-id and programs.adoptGateway, and with the setting the entry is this gateway\'s; on PostgreSQL each gateway gets its own entry', async () => {
    const first = await startTestGateway({ machines: [simMachine('L01')] });
    const second = await startTestGateway({ machines: [simMachine('L01')] });
    const dataDir = mkdtempSync(join(tmpdir(), 'programs-other-gateway-'));
    const start = (gw: TestGateway, programs?: Record<string, unknown>) =>
      startTestProgramService({ plugins: [TEST_ACCOUNTS, gatewaysPlugin], env: { PROGRAMS_ADMIN_PASSWORD: TEST_PROGRAMS_ADMIN_PASSWORD }, localGateway: new InProcessGatewayLink(gw.gateway.context.interfaces), dataDir, ...(programs ? { programs } : {}) });
    try {
      const before = await start(first);
      const session = await login(before, 'admin', TEST_PROGRAMS_ADMIN_PASSWORD);
      const entry = ((await before.request('GET', '/api/v1/gateways', { cookie: session.cookie })).body.items as { id: string }[])[0]?.id as string;
      await before.stop();
      const secondID = (await new InProcessGatewayLink(second.gateway.context.interfaces).identity()).gatewayID;
      const entries = async (svc: TestProgramService) => {
        const s = await login(svc, 'admin', TEST_PROGRAMS_ADMIN_PASSWORD);
        return ((await svc.request('GET', '/api/v1/gateways', { cookie: s.cookie })).body.items as { id: string; gatewayID: string }[]).map((g) => [g.id, g.gatewayID]);
      };
      if (process.env[PROGRAMS_TEST_POSTGRES]) {
        const after = await start(second);
        expect((await entries(after)).find(([, uid]) => uid === secondID)?.[0]).not.toBe(entry);
        await after.stop();
        return;
      }
      const refused = await start(second).then(() => undefined, (err: unknown) => err as Error);
      expect(refused?.message).toContain(`programs.db holds the gateway of entry 'local' (${entry})`);
      expect(refused?.message).toContain(`but the gateway of this data directory is ${secondID} (${join(dataDir, 'gateway-id')})`);
      expect(refused?.message).toContain(`programs.adoptGateway (PROGRAMS_ADOPT_GATEWAY)=${entry}`);
      const adopted = await start(second, { adoptGateway: entry });
      expect(await entries(adopted)).toEqual([[entry, secondID]]);
      await adopted.stop();
    } finally {
      await first.stop();
      await second.stop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

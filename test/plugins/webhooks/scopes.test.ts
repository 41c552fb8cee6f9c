/**
 * Webhooks within scopes (PV-54): an endpoint carries its maker's libraries
 * and machine groups and receives only the events about objects within them;
 * a scoped administrator sees and reads the deliveries of the endpoints
 * within its own scopes only; endpoints made before scopes take their
 * maker's. Real deployments on a plant of two libraries and two machine
 * groups, delivered to a real receiver on 127.0.0.1.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InProcessGatewayLink } from '../../../core/gateway-link/in-process.js';
import { definePlugin } from '../../../core/runtime/plugin-host.js';
import type { ProgramsContext } from '../../../core/roles/programs/context.js';
import { assignmentsPlugin } from '../../../plugins/assignments/index.js';
import { deploymentsPlugin } from '../../../plugins/deployments/index.js';
import { gatewaysPlugin } from '../../../plugins/gateways/index.js';
import { vaultPlugin } from '../../../plugins/vault/index.js';
import { createWebhooksPlugin, webhooksPlugin } from '../../../plugins/webhooks/index.js';
import { MIGRATIONS } from '../../../plugins/webhooks/store.js';
import { simMachine, startTestGateway, type TestGateway } from '../../fixtures/gateway.js';
import { startTestProgramService, type TestProgramService } from '../../fixtures/programs.js';
import { login, TEST_ACCOUNTS, TEST_PROGRAMS_ADMIN_PASSWORD, userSession, type Session } from '../../fixtures/programs-accounts.js';
import { scopedPlant, type ScopedPlant } from '../../fixtures/scoped-plant.js';
import { untilDefined } from '../../fixtures/until.js';

const RECEIVER_ON_LOOPBACK = { webhooks: { allowPrivateNetworks: true } };

interface Event {
  path: string;
  type: string;
  data: Record<string, unknown>;
}

describe('webhooks in scope', () => {
  let gw: TestGateway;
  let svc: TestProgramService;
  let admin: Session;
  let scoped: Session;
  let plant: ScopedPlant;
  let hookAll: { id: string; scopes: unknown };
  let hookA: { id: string; scopes: unknown };
  const got: Event[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const event = JSON.parse(Buffer.concat(chunks).toString()) as { type: string; data: Record<string, unknown> };
      got.push({ path: req.url ?? '', type: event.type, data: event.data });
      res.writeHead(204).end();
    });
  });
  const deployments: { machineId: string; deploymentId: string }[] = [];

  beforeAll(async () => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
    gw = await startTestGateway({ machines: [simMachine('M01'), simMachine('M02')] });
    svc = await startTestProgramService({
      plugins: [TEST_ACCOUNTS, vaultPlugin, gatewaysPlugin, assignmentsPlugin, deploymentsPlugin, createWebhooksPlugin({ retryDelaysMs: [100, 200, 300] })],
      env: { PROGRAMS_ADMIN_PASSWORD: TEST_PROGRAMS_ADMIN_PASSWORD }, localGateway: new InProcessGatewayLink(gw.gateway.context.interfaces), programs: RECEIVER_ON_LOOPBACK,
    });
    admin = await login(svc, 'admin', TEST_PROGRAMS_ADMIN_PASSWORD);
    plant = await scopedPlant(svc, admin);
    scoped = await userSession(svc, admin, 'lib.admin', 'admin', { libraries: [plant.libraryA], machineGroups: [plant.groupA] });
    const events = ['version.published', 'deployment.completed', 'deployment.failed'];
    hookAll = (await svc.request('POST', '/api/v1/admin/webhooks', { cookie: admin.cookie, headers: admin.headers, body: { url: `${url}/all`, events } })).body;
    hookA = (await svc.request('POST', '/api/v1/admin/webhooks', { cookie: scoped.cookie, headers: scoped.headers, body: { url: `${url}/a`, events } })).body;
    const onA = await plant.publish(plant.libraryA, 'SHAFT');
    const onB = await plant.publish(plant.libraryB, 'FLANGE');
    // Library B's program on machine A too: a deployment is about the machine it goes to, as GET /deployments shows it.
    for (const [release, machineId] of [[onA, plant.machineA], [onB, plant.machineB], [onB, plant.machineA]] as const) {
      deployments.push({ machineId, deploymentId: (await plant.deploy(release, machineId)).deploymentId });
    }
    await untilDefined('every event at the endpoint of everything', () => (got.filter((e) => e.path === '/all').length >= 5 ? true : undefined));
  }, 60_000);
  afterAll(async () => {
    await svc.stop();
    await gw.stop();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it('PV-54 an endpoint carries its maker\'s scopes, and a scoped administrator lists only the endpoints within its own', async () => {
    expect(hookA.scopes).toEqual({ libraries: [plant.libraryA], machineGroups: [plant.groupA] });
    expect(hookAll.scopes).toEqual({ libraries: '*', machineGroups: '*' });
    const forScoped = await svc.request('GET', '/api/v1/admin/webhooks', { cookie: scoped.cookie });
    expect(forScoped.body.items.map((w: { id: string }) => w.id)).toEqual([hookA.id]);
    const forAdmin = await svc.request('GET', '/api/v1/admin/webhooks', { cookie: admin.cookie });
    expect(forAdmin.body.items.map((w: { id: string }) => w.id).sort()).toEqual([hookA.id, hookAll.id].sort());
  });

  it('PV-54 an endpoint receives only the events about its libraries and the machines of its groups', async () => {
    const toAll = got.filter((e) => e.path === '/all');
    expect(toAll.filter((e) => e.type === 'version.published').map((e) => e.data.libraryId).sort()).toEqual([plant.libraryA, plant.libraryB].sort());
    expect(toAll.filter((e) => e.type.startsWith('deployment.')).map((e) => e.data.deploymentId).sort()).toEqual(deployments.map((d) => d.deploymentId).sort());
    // The endpoint of library A and group A: library A's publication, and the two deployments to machine A (one of them library B's program).
    const onMachineA = deployments.filter((d) => d.machineId === plant.machineA).map((d) => d.deploymentId);
    await untilDefined('the scoped endpoint\'s events', () => (got.filter((e) => e.path === '/a').length >= 3 ? true : undefined));
    const toA = got.filter((e) => e.path === '/a');
    expect(toA.filter((e) => e.type === 'version.published').map((e) => e.data.libraryId)).toEqual([plant.libraryA]);
    expect(toA.filter((e) => e.type.startsWith('deployment.')).map((e) => e.data.deploymentId).sort()).toEqual(onMachineA.sort());
    expect(toA).toHaveLength(3);
  });

  it('PV-54 a scoped administrator reads the deliveries of its endpoints only, in full pages', async () => {
    const mine = await svc.request('GET', '/api/v1/admin/webhooks/deliveries?limit=100', { cookie: scoped.cookie });
    expect(mine.body.items).toHaveLength(3);
    expect(mine.body.items.every((d: { webhookId: string }) => d.webhookId === hookA.id)).toBe(true);
    const other = await svc.request('GET', `/api/v1/admin/webhooks/deliveries?webhookId=${hookAll.id}`, { cookie: scoped.cookie });
    expect(other.body).toEqual({ items: [], nextCursor: null });
    const first = await svc.request('GET', '/api/v1/admin/webhooks/deliveries?limit=2', { cookie: scoped.cookie });
    expect(first.body.items).toHaveLength(2);
    const second = await svc.request('GET', `/api/v1/admin/webhooks/deliveries?limit=2&cursor=${first.body.nextCursor}`, { cookie: scoped.cookie });
    expect([...first.body.items, ...second.body.items].map((d: { id: string }) => d.id)).toEqual(mine.body.items.map((d: { id: string }) => d.id));
    const all = await svc.request('GET', '/api/v1/admin/webhooks/deliveries?limit=100', { cookie: admin.cookie });
    expect(all.body.items).toHaveLength(8);
  });
});

describe('webhooks made before scopes', () => {
  it('PV-54 an endpoint made by a user before endpoints had scopes takes that user\'s scopes; one made by a token keeps every scope', async () => {
    // The webhooks plugin as it was: its first migration only.
    const before = definePlugin<ProgramsContext>({ name: 'webhooks', dependsOn: ['accounts'], migrations: MIGRATIONS.slice(0, 1), register: () => undefined });
    const dataDir = mkdtempSync(join(tmpdir(), 'programs-hook-scopes-'));
    let svc = await startTestProgramService({ plugins: [TEST_ACCOUNTS, vaultPlugin, before], env: { PROGRAMS_ADMIN_PASSWORD: TEST_PROGRAMS_ADMIN_PASSWORD }, dataDir });
    let admin = await login(svc, 'admin', TEST_PROGRAMS_ADMIN_PASSWORD);
    const library = (await svc.request('POST', '/api/v1/libraries', { cookie: admin.cookie, headers: admin.headers, body: { name: 'Old', approvalPolicy: { mode: 'autoRelease' } } })).body.id as string;
    const old = await userSession(svc, admin, 'old.admin', 'admin', { libraries: [library] });
    const insert = 'INSERT INTO webhooks (id, url, events, description, sealed_secret, enabled, disabled_reason, created_by, created_at) VALUES (?, ?, ?, ?, ?, 1, NULL, ?, ?)';
    await svc.role.context.db.write(async (tx) => {
      for (const [id, by] of [['whk_000000000000000a', 'old.admin'], ['whk_000000000000000b', 'admin'], ['whk_000000000000000c', 'mes-token']] as const) {
        await tx.run(insert, [id, `https://mes.example/${by}`, '["version.published"]', '', '{}', by, Date.now()]);
      }
    }, { transaction: true });
    await svc.role.stop();
    svc = await startTestProgramService({ plugins: [TEST_ACCOUNTS, vaultPlugin, webhooksPlugin], dataDir });
    try {
      admin = await login(svc, 'admin', TEST_PROGRAMS_ADMIN_PASSWORD);
      const listed = (await svc.request('GET', '/api/v1/admin/webhooks', { cookie: admin.cookie })).body.items as { createdBy: string; scopes: unknown }[];
      expect(Object.fromEntries(listed.map((w) => [w.createdBy, w.scopes]))).toEqual({
        'old.admin': { libraries: [library], machineGroups: '*' },
        admin: { libraries: '*', machineGroups: '*' },
        'mes-token': { libraries: '*', machineGroups: '*' },
      });
      const again = await login(svc, 'old.admin', old.password);
      const own = await svc.request('GET', '/api/v1/admin/webhooks', { cookie: again.cookie });
      expect(own.body.items.map((w: { id: string }) => w.id)).toEqual(['whk_000000000000000a']);
    } finally {
      await svc.stop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

/**
 * Webhooks to a real receiver on 127.0.0.1 (allowed by
 * programs.webhooks.allowPrivateNetworks): Standard Webhooks signatures,
 * deployment.completed / deployment.failed from real deployments, retries
 * while the receiver is down, 410, and deliveries that survive a restart.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InProcessGatewayLink } from '../../../core/gateway-link/in-process.js';
import { assignmentsPlugin } from '../../../plugins/assignments/index.js';
import { deploymentsPlugin } from '../../../plugins/deployments/index.js';
import { gatewaysPlugin } from '../../../plugins/gateways/index.js';
import { vaultPlugin } from '../../../plugins/vault/index.js';
import { createWebhooksPlugin, sign } from '../../../plugins/webhooks/index.js';
import { simMachine, startTestGateway, type TestGateway } from '../../fixtures/gateway.js';
import { startTestProgramService, type TestProgramService } from '../../fixtures/programs.js';
import { login, TEST_ACCOUNTS, TEST_PROGRAMS_ADMIN_PASSWORD, type Session } from '../../fixtures/programs-accounts.js';
import { untilDefined } from '../../fixtures/until.js';

/** The receiver listens on 127.0.0.1: the plant setting that allows private networks (loopback included) lets deliveries reach it. */
const RECEIVER_ON_LOOPBACK = { webhooks: { allowPrivateNetworks: true } };

interface Received {
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** A receiver that answers `status()` and keeps what it got. */
async function receiver(): Promise<{ url: string; got: Received[]; status: { code: number }; close(): Promise<void>; server: Server }> {
  const got: Received[] = [];
  const status = { code: 200 };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (status.code >= 200 && status.code < 300) got.push({ headers: req.headers, body: Buffer.concat(chunks).toString() });
      res.writeHead(status.code).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address() as { port: number };
  return { url: `http://127.0.0.1:${address.port}/hooks`, got, status, server, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

/** Verifies a Standard Webhooks signature as a receiver would. */
function verified(secret: string, r: Received): boolean {
  const id = String(r.headers['webhook-id']);
  const ts = String(r.headers['webhook-timestamp']);
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  const expected = Buffer.from(createHmac('sha256', key).update(`${id}.${ts}.${r.body}`).digest('base64'));
  return String(r.headers['webhook-signature']).split(' ').some((s) => {
    const given = Buffer.from(s.replace(/^v1,/, ''));
    return s.startsWith('v1,') && given.length === expected.length && timingSafeEqual(given, expected);
  });
}

describe('webhooks', () => {
  let gw: TestGateway;
  let svc: TestProgramService;
  let admin: Session;
  let hook: Awaited<ReturnType<typeof receiver>>;
  let secret: string;
  let webhookId: string;
  let versionId: string;
  let assignmentId: string;
  const plugins = () => [TEST_ACCOUNTS, vaultPlugin, gatewaysPlugin, assignmentsPlugin, deploymentsPlugin, createWebhooksPlugin({ retryDelaysMs: [100, 200, 300] })];

  const post = (path: string, body?: unknown) => svc.request('POST', path, { cookie: admin.cookie, headers: admin.headers, ...(body !== undefined ? { body } : {}) });
  const get = (path: string) => svc.request('GET', path, { cookie: admin.cookie });

  beforeAll(async () => {
    hook = await receiver();
    gw = await startTestGateway({ machines: [simMachine('M01')] });
    svc = await startTestProgramService({ plugins: plugins(), env: { PROGRAMS_ADMIN_PASSWORD: TEST_PROGRAMS_ADMIN_PASSWORD }, localGateway: new InProcessGatewayLink(gw.gateway.context.interfaces), dataDir: mkdtempSync(join(tmpdir(), 'programs-hooks-')), programs: RECEIVER_ON_LOOPBACK });
    admin = await login(svc, 'admin', TEST_PROGRAMS_ADMIN_PASSWORD);
    const created = await post('/api/v1/admin/webhooks', { url: hook.url, events: ['deployment.completed', 'deployment.failed', 'version.published'], description: 'MES' });
    expect(created.status).toBe(201);
    secret = created.body.secret;
    webhookId = created.body.id;
    const lib = await post('/api/v1/libraries', { name: 'Hooks', approvalPolicy: { mode: 'autoRelease' } });
    const prg = (await post('/api/v1/programs', { libraryId: lib.body.id, name: 'O5001 HOOKED', controller: 'fanuc' })).body.id;
    versionId = (await post(`/api/v1/programs/${prg}/versions`, { contentBase64: Buffer.from('%\nO5001\nM30\n%\n').toString('base64'), notes: '' })).body.id;
    await post(`/api/v1/versions/${versionId}/submit`);
    const machine = (await get('/api/v1/machines')).body.items[0].id;
    assignmentId = (await post('/api/v1/machine-assignments', { programId: prg, machineId: machine, dir: '//CNC_MEM/USER/PATH1/' })).body.id;
  });
  afterAll(async () => {
    await svc.stop();
    await gw.stop();
    await hook.close();
  });

  it('PV-60 webhooks are managed through /admin/webhooks; the whsec_ secret is shown once and stored sealed', async () => {
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
    const list = await get('/api/v1/admin/webhooks');
    expect(list.body.items).toEqual([expect.objectContaining({ id: webhookId, url: hook.url, enabled: true })]);
    expect(list.text).not.toContain(secret.slice(6));
    const bad = await post('/api/v1/admin/webhooks', { url: hook.url, events: ['deployment.exploded'] });
    expect(bad.status).toBe(400);
    expect(bad.body.errors[0]).toMatchObject({ field: 'body.events[0]', accepted: 'deployment.completed, deployment.failed, version.published, trial.started, trial.promoted, trial.pulled-back, drift.opened' });
  });

  it('PV-61 deployment.completed and deployment.failed fire when a deployment ends, signed as Standard Webhooks', async () => {
    const published = await untilDefined('version.published', () => hook.got.find((r) => JSON.parse(r.body).type === 'version.published'));
    expect(JSON.parse(published.body).data).toMatchObject({ versionId, number: 1 });
    const ok = await post('/api/v1/deployments', { versionId, assignmentIds: [assignmentId], isTrial: false, trialHours: null });
    const deploymentId = ok.body.deployments[0].id;
    const completed = await untilDefined('deployment.completed', () => hook.got.find((r) => JSON.parse(r.body).data?.deploymentId === deploymentId));
    const event = JSON.parse(completed.body);
    expect(event).toMatchObject({ type: 'deployment.completed', data: { deploymentId, status: 'Succeeded', versionId } });
    expect(event.data.readBackSha256).toBe(event.data.sha256);
    expect(completed.headers['webhook-id']).toMatch(/^msg_/);
    expect(Math.abs(Number(completed.headers['webhook-timestamp']) - Date.now() / 1000)).toBeLessThan(60);
    expect(verified(secret, completed)).toBe(true);
    expect(verified(secret, { ...completed, body: completed.body.replace('Succeeded', 'Failed') })).toBe(false);
    expect(sign(secret, 'msg_x', 1, '{}')).toMatch(/^v1,[A-Za-z0-9+/=]{44}$/);

    // A deployment that fails: a version of the vault's largest size, which the assignment's header makes larger than the gateway takes.
    const lib = (await get('/api/v1/libraries')).body.items[0].id;
    const prg = (await post('/api/v1/programs', { libraryId: lib, name: 'O5002 LARGE', controller: 'fanuc' })).body.id;
    const content = Buffer.alloc(4 * 1024 * 1024 - 4, 0x20);
    Buffer.from('%\nO5002\nM30\n%\n').copy(content);
    const v = (await post(`/api/v1/programs/${prg}/versions`, { contentBase64: content.toString('base64'), notes: '' })).body.id;
    await post(`/api/v1/versions/${v}/submit`);
    const machine = (await get('/api/v1/machines')).body.items[0].id;
    const a = (await post('/api/v1/machine-assignments', { programId: prg, machineId: machine, dir: '//CNC_MEM/USER/PATH1/', transform: { header: ['(V{version} {sha8} {machine})'] } })).body.id;
    const failedDeployment = (await post('/api/v1/deployments', { versionId: v, assignmentIds: [a], isTrial: false, trialHours: null })).body.deployments[0].id;
    const failed = await untilDefined('deployment.failed', () => hook.got.find((r) => JSON.parse(r.body).data?.deploymentId === failedDeployment));
    expect(JSON.parse(failed.body)).toMatchObject({ type: 'deployment.failed', data: { status: 'Failed', reason: expect.stringMatching(/accepted: at most 4194304 bytes/) } });
    const deliveries = await get(`/api/v1/admin/webhooks/deliveries?webhookId=${webhookId}&status=delivered`);
    expect(deliveries.body.items.map((d: { event: string }) => d.event)).toEqual(expect.arrayContaining(['deployment.completed', 'deployment.failed', 'version.published']));
  });

  it('PV-60 a receiver that is down gets the event once it is back; deliveries survive a restart', async () => {
    hook.status.code = 503;
    const before = hook.got.length;
    const res = await post('/api/v1/deployments', { versionId, assignmentIds: [assignmentId], isTrial: false, trialHours: null });
    const deploymentId = res.body.deployments[0].id;
    const pending = await untilDefined('a failed attempt', async () => {
      const items = (await get('/api/v1/admin/webhooks/deliveries?status=pending&event=deployment.completed')).body.items as { attempts: number; lastStatusCode: number }[];
      return items.find((d) => d.attempts >= 1);
    });
    expect(pending.lastStatusCode).toBe(503);
    // Stop the service with the delivery pending, bring the receiver back, start again: it is delivered.
    const dataDir = svc.dataDir;
    await svc.role.stop();
    hook.status.code = 204;
    svc = await startTestProgramService({ plugins: plugins(), localGateway: new InProcessGatewayLink(gw.gateway.context.interfaces), dataDir, programs: RECEIVER_ON_LOOPBACK });
    admin = await login(svc, 'admin', TEST_PROGRAMS_ADMIN_PASSWORD);
    const got = await untilDefined('the delivery after the restart', () => hook.got.slice(before).find((r) => JSON.parse(r.body).data?.deploymentId === deploymentId));
    expect(verified(secret, got)).toBe(true);
    expect(hook.got.slice(before).filter((r) => JSON.parse(r.body).data?.deploymentId === deploymentId)).toHaveLength(1);
  });

  it('PV-60 an endpoint that answers 410 Gone is disabled and its pending deliveries abandoned', async () => {
    hook.status.code = 410;
    await post('/api/v1/deployments', { versionId, assignmentIds: [assignmentId], isTrial: false, trialHours: null });
    const disabled = await untilDefined('the endpoint disabled', async () => {
      const w = (await get('/api/v1/admin/webhooks')).body.items[0];
      return w.enabled ? undefined : w;
    });
    expect(disabled.disabledReason).toMatch(/410 Gone/);
    const abandoned = await get(`/api/v1/admin/webhooks/deliveries?webhookId=${webhookId}&status=abandoned`);
    expect(abandoned.body.items.length).toBeGreaterThan(0);
    hook.status.code = 200;
  });
});

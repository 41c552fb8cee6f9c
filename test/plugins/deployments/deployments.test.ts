/**
 * Deployments against a real gateway with simulated machines, reached
 * in-process: transfer, SHA-256 read-back, statuses and timeline, the
 * lifecycle rules, idempotency, and a restart in the middle of a batch.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InProcessGatewayLink } from '../../../core/gateway-link/in-process.js';
import { assignmentsPlugin } from '../../../plugins/assignments/index.js';
import { deploymentsPlugin } from '../../../plugins/deployments/index.js';
import { gatewaysPlugin } from '../../../plugins/gateways/index.js';
import { vaultPlugin } from '../../../plugins/vault/index.js';
import { webhooksPlugin } from '../../../plugins/webhooks/index.js';
import { CountingLink } from '../../fixtures/counting-link.js';
import { simMachine, startTestGateway, type TestGateway } from '../../fixtures/gateway.js';
import { openProgramsDatabase, startTestProgramService, type TestProgramService } from '../../fixtures/programs.js';
import { login, TEST_ACCOUNTS, TEST_PROGRAMS_ADMIN_PASSWORD, userSession, type Session } from '../../fixtures/programs-accounts.js';

const DIR = '//CNC_MEM/USER/PATH1/';
const PLUGINS = [TEST_ACCOUNTS, vaultPlugin, gatewaysPlugin, assignmentsPlugin, deploymentsPlugin, webhooksPlugin];
const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');


describe('deployments', () => {
  let gw: TestGateway;
  let svc: TestProgramService;
  let link: CountingLink;
  let admin: Session;
  let programId: string;
  let published: { id: string; sha256: string };
  let draftId: string;
  let machines: Record<string, string>;
  let machineAssignment: string;
  let groupAssignment: string;
  let groupId: string;

  const post = (path: string, body?: unknown, s: Session = admin, headers: Record<string, string> = {}) =>
    svc.request('POST', path, { cookie: s.cookie, headers: { ...s.headers, ...headers }, ...(body !== undefined ? { body } : {}) });
  const get = (path: string, s: Session = admin) => svc.request('GET', path, { cookie: s.cookie });
  const settle = async (ids: string[], timeoutMs = 10_000) => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const rows = await Promise.all(ids.map(async (id) => (await get(`/api/v1/deployments/${id}`)).body));
      if (rows.every((r) => r.status === 'Succeeded' || r.status === 'Failed')) return rows;
      if (Date.now() > deadline) throw new Error(`not finished: ${rows.map((r) => `${r.id} ${r.status} ${r.reason ?? ''}`).join('; ')}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  };

  beforeAll(async () => {
    gw = await startTestGateway({ machines: ['M01', 'M02', 'M03', 'M04'].map((id) => simMachine(id)), groups: [{ groupID: 'cell', name: 'Cell', machineIDs: ['M02', 'M03'] }] });
    link = new CountingLink(new InProcessGatewayLink(gw.gateway.context.interfaces));
    svc = await startTestProgramService({ plugins: PLUGINS, env: { PROGRAMS_ADMIN_PASSWORD: TEST_PROGRAMS_ADMIN_PASSWORD }, localGateway: link, dataDir: mkdtempSync(join(tmpdir(), 'programs-deploy-')) });
    admin = await login(svc, 'admin', TEST_PROGRAMS_ADMIN_PASSWORD);
    const lib = await post('/api/v1/libraries', { name: 'Cells', approvalPolicy: { mode: 'autoRelease' } });
    programId = (await post('/api/v1/programs', { libraryId: lib.body.id, name: 'O3001 SHAFT', controller: 'fanuc' })).body.id;
    const v1 = await post(`/api/v1/programs/${programId}/versions`, { contentBase64: Buffer.from('%\nO3001 (SHAFT)\nG90 G54\nM30\n%\n').toString('base64'), notes: '' });
    published = (await post(`/api/v1/versions/${v1.body.id}/submit`)).body.version;
    draftId = (await post(`/api/v1/programs/${programId}/versions`, { contentBase64: Buffer.from('%\nO3001\nM30\n%\n').toString('base64'), notes: 'draft' })).body.id;
    machines = Object.fromEntries((await get('/api/v1/machines')).body.items.map((m: { id: string; machineId: string }) => [m.machineId, m.id]));
    groupId = (await get('/api/v1/machine-groups')).body.items[0].id;
    machineAssignment = (await post('/api/v1/machine-assignments', { programId, machineId: machines.M01, dir: DIR, transform: { header: ['(V{version} {sha8} {machine})'] } })).body.id;
    groupAssignment = (await post('/api/v1/machine-assignments', { programId, groupId, dir: DIR })).body.id;
  });
  afterAll(async () => {
    await svc.stop();
    await gw.stop();
  });

  it('PV-12 PV-13 PV-24 PV-35 a batch deploys to every machine, each verified by reading the file back, polled to Succeeded', async () => {
    const res = await post('/api/v1/deployments', { versionId: published.id, assignmentIds: [machineAssignment, groupAssignment], isTrial: false, trialHours: null });
    expect(res.status).toBe(201);
    expect(res.body.batchId).toMatch(/^bat_/);
    expect(res.body.deployments.map((d: { machineId: string }) => d.machineId).sort()).toEqual([machines.M01, machines.M02, machines.M03].sort());
    const done = await settle(res.body.deployments.map((d: { id: string }) => d.id));
    for (const d of done) {
      expect(d).toMatchObject({ status: 'Succeeded', reason: null, transfers: 1, batchId: res.body.batchId });
      expect(d.readBackSha256).toBe(d.sha256);
      expect(d.timeline.map((t: { status: string }) => t.status)).toEqual(['Queued', 'Transferring', 'Verifying', 'Succeeded']);
    }
    const m01 = done.find((d) => d.machineId === machines.M01);
    const onMachine = await gw.request('GET', `/api/file/program/download?machineID=M01&dir=${encodeURIComponent(DIR)}&name=O3001`);
    const content = Buffer.from((onMachine.body.data as { content: string }).content);
    expect(sha(content)).toBe(m01.sha256);
    expect(content.toString()).toContain(`(V1 ${published.sha256.slice(0, 8)} M01)`);
    const listed = await get(`/api/v1/deployments?batchId=${res.body.batchId}&status=Succeeded`);
    expect(listed.body.items).toHaveLength(3);
    const db = await openProgramsDatabase(svc.dataDir);
    try {
      const audited = await db.all<{ action: string }>("SELECT action FROM audit_log WHERE category = 'deployment' AND action = 'deployment.succeeded'");
      expect(audited.length).toBeGreaterThanOrEqual(3);
    } finally {
      await db.close();
    }
  });

  it('PV-35 a machine that has lost its program directory, under an assignment that names none, is refused at once (422), before anything is sent', async () => {
    const patch = (path: string, body: unknown) => svc.request('PATCH', path, { cookie: admin.cookie, headers: admin.headers, body });
    await patch(`/api/v1/machines/${machines.M04}`, { programDir: '//CNC_MEM/USER/PATH1/' });
    const onOwnDir = await post('/api/v1/machine-assignments', { programId, machineId: machines.M04 });
    expect(onOwnDir.status).toBe(201);
    await patch(`/api/v1/machines/${machines.M04}`, { programDir: '' });
    const uploads = link.uploads;
    const res = await post('/api/v1/deployments', { versionId: published.id, assignmentIds: [onOwnDir.body.id], isTrial: false, trialHours: null });
    expect(res.status).toBe(422);
    expect(res.body.errors[0]).toMatchObject({ field: 'body.assignmentIds[0]', message: expect.stringContaining('machine M04 has no program directory') });
    expect(link.uploads).toBe(uploads);
    expect((await svc.request('DELETE', `/api/v1/machine-assignments/${onOwnDir.body.id}`, { cookie: admin.cookie, headers: admin.headers })).status).toBe(204);
  });

  it('PV-23 a deployment naming a draft version is 409 and nothing is created', async () => {
    const before = (await get('/api/v1/deployments?limit=1000')).body.items.length;
    const res = await post('/api/v1/deployments', { versionId: draftId, assignmentIds: [machineAssignment], isTrial: false, trialHours: null });
    expect(res.status).toBe(409);
    expect(res.body.state).toBe('draft');
    expect((await get(`/api/v1/versions/${draftId}`)).body.state).toBe('draft');
    expect((await get('/api/v1/deployments?limit=1000')).body.items.length).toBe(before);
  });

  it('PV-35 an assignment of another program is 422, one out of scope is 404, and deploying needs its permission', async () => {
    const other = (await post('/api/v1/programs', { libraryId: (await get('/api/v1/libraries')).body.items[0].id, name: 'O3002 OTHER', controller: 'fanuc' })).body.id;
    const otherAssignment = (await post('/api/v1/machine-assignments', { programId: other, machineId: machines.M04, dir: DIR })).body.id;
    const wrong = await post('/api/v1/deployments', { versionId: published.id, assignmentIds: [machineAssignment, otherAssignment], isTrial: false, trialHours: null });
    expect(wrong.status).toBe(422);
    expect(wrong.body.errors[0].field).toBe('body.assignmentIds[1]');
    const scoped = await userSession(svc, admin, 'op.cell', 'operator', { libraries: '*', machineGroups: [groupId] });
    const hidden = await post('/api/v1/deployments', { versionId: published.id, assignmentIds: [machineAssignment], isTrial: false, trialHours: null }, scoped);
    expect(hidden.status).toBe(404);
    const auditor = await userSession(svc, admin, 'aud', 'auditor');
    expect((await post('/api/v1/deployments', { versionId: published.id, assignmentIds: [groupAssignment], isTrial: false, trialHours: null }, auditor)).status).toBe(403);
    const mine = await post('/api/v1/deployments', { versionId: published.id, assignmentIds: [groupAssignment], isTrial: false, trialHours: null }, scoped);
    expect(mine.status).toBe(201);
    await settle(mine.body.deployments.map((d: { id: string }) => d.id));
    expect((await get(`/api/v1/deployments/${mine.body.deployments[0].id}`, scoped)).status).toBe(200);
  });

  it('PV-35 Idempotency-Key: a retried request answers the first answer; the key with another body is 422', async () => {
    const body = { versionId: published.id, assignmentIds: [machineAssignment], isTrial: false, trialHours: null };
    const first = await post('/api/v1/deployments', body, admin, { 'idempotency-key': 'mes-order-4711' });
    const again = await post('/api/v1/deployments', body, admin, { 'idempotency-key': 'mes-order-4711' });
    expect(again.status).toBe(201);
    expect(again.body).toEqual(first.body);
    expect((await get(`/api/v1/deployments?batchId=${first.body.batchId}`)).body.items).toHaveLength(1);
    const other = await post('/api/v1/deployments', { ...body, assignmentIds: [groupAssignment] }, admin, { 'idempotency-key': 'mes-order-4711' });
    expect(other.status).toBe(422);
    expect(other.body.errors[0].field).toBe('header.idempotency-key');
    await settle(first.body.deployments.map((d: { id: string }) => d.id));
  });

  it('PV-35 Idempotency-Key: the same request sent twice at once (to one instance or two) answers one batch, stored once', async () => {
    const body = { versionId: published.id, assignmentIds: [groupAssignment], isTrial: false, trialHours: null };
    const both = await Promise.all([1, 2].map(() => post('/api/v1/deployments', body, admin, { 'idempotency-key': 'mes-order-race' })));
    expect(both.map((r) => r.status)).toEqual([201, 201]);
    expect(both[1]?.body).toEqual(both[0]?.body);
    const db = await openProgramsDatabase(svc.dataDir);
    try {
      expect(await db.all("SELECT id FROM deploy_batches WHERE idempotency_key LIKE '%:mes-order-race'")).toEqual([{ id: both[0]?.body.batchId }]);
    } finally {
      await db.close();
    }
    await settle(both[0]?.body.deployments.map((d: { id: string }) => d.id));
  });

  it('PV-24 a file the gateway refuses fails that deployment with a reason a person can act on, not the batch', async () => {
    // A version of the vault's largest size, which this assignment's header makes larger than the gateway takes.
    const body = Buffer.alloc(4 * 1024 * 1024 - 4, 0x20);
    Buffer.from('%\nO3001\nM30\n%\n').copy(body);
    const big = await post(`/api/v1/programs/${programId}/versions`, { contentBase64: body.toString('base64'), notes: 'all the room there is' });
    expect(big.status).toBe(201);
    await post(`/api/v1/versions/${big.body.id}/submit`);
    const res = await post('/api/v1/deployments', { versionId: big.body.id, assignmentIds: [machineAssignment], isTrial: false, trialHours: null });
    const [d] = await settle(res.body.deployments.map((x: { id: string }) => x.id));
    expect(d.status).toBe('Failed');
    expect(d.reason).toMatch(/transfer: .*content(Base64)?: found \d+ bytes; accepted: at most 4194304 bytes.*the gateway refused the file/);
    expect(d.timeline.at(-1)).toMatchObject({ status: 'Failed' });
  });

  it('PV-24 a transient failure is retried with backoff and the deployment still ends Succeeded, the retry in its timeline', async () => {
    link.failNext = 1;
    const res = await post('/api/v1/deployments', { versionId: published.id, assignmentIds: [machineAssignment], isTrial: false, trialHours: null });
    const [d] = await settle(res.body.deployments.map((x: { id: string }) => x.id));
    expect(d.status).toBe('Succeeded');
    expect(d.timeline.map((t: { status: string }) => t.status)).toEqual(['Queued', 'Transferring', 'Retrying', 'Transferring', 'Verifying', 'Succeeded']);
    expect(d.timeline.find((t: { status: string }) => t.status === 'Retrying').reason).toMatch(/did not answer \(simulated\).*retried until the deadline/);
  });

  it('PV-24 a restart in the middle of a batch: every deployment finishes exactly once, with no transfer repeated', async () => {
    // First run: two uploads reach the gateway but their answers never come back; the others wait before the gateway.
    link.hold = 'after';
    link.uploads = 0;
    const res = await post('/api/v1/deployments', { versionId: published.id, assignmentIds: [machineAssignment, groupAssignment], isTrial: false, trialHours: null });
    const ids = res.body.deployments.map((d: { id: string }) => d.id) as string[];
    const deadline = Date.now() + 5000;
    while (link.uploads < 3 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(link.uploads).toBe(3);
    // States are stored in rounds (at most 250 ms after they are reached): each shows Transferring, and stays there.
    const statuses = async () => Promise.all(ids.map(async (id) => (await get(`/api/v1/deployments/${id}`)).body.status as string));
    for (const until = Date.now() + 5000; (await statuses()).some((s) => s !== 'Transferring') && Date.now() < until;) await new Promise((r) => setTimeout(r, 20));
    expect(await statuses()).toEqual(ids.map(() => 'Transferring'));
    const dataDir = svc.dataDir;
    await svc.role.stop();

    link.hold = 'none';
    link.uploads = 0;
    svc = await startTestProgramService({ plugins: PLUGINS, localGateway: link, dataDir });
    admin = await login(svc, 'admin', TEST_PROGRAMS_ADMIN_PASSWORD);
    const done = await settle(ids);
    expect(done.map((d) => d.status)).toEqual(['Succeeded', 'Succeeded', 'Succeeded']);
    // The files were already on the machines: the resumed transfers read them back instead of sending them again.
    expect(link.uploads).toBe(0);
    expect(done.map((d) => d.transfers)).toEqual([1, 1, 1]);
    const db = await openProgramsDatabase(dataDir);
    try {
      for (const id of ids) {
        const finished = await db.all("SELECT seq FROM audit_log WHERE entity_id = ? AND action IN ('deployment.succeeded', 'deployment.failed')", [id]);
        expect(finished).toHaveLength(1);
      }
    } finally {
      await db.close();
    }
  });
  it('PV-24 a deployment stored but stopped before its first state change was starts from the beginning after a restart and succeeds', async () => {
    link.hold = 'before';
    const res = await post('/api/v1/deployments', { versionId: published.id, assignmentIds: [machineAssignment], isTrial: false, trialHours: null });
    const id = res.body.deployments[0].id as string;
    const deadline = Date.now() + 5000;
    while ((await get(`/api/v1/deployments/${id}`)).body.status !== 'Transferring' && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    const dataDir = svc.dataDir;
    await svc.role.stop();
    // As if the service had stopped right after storing the batch: no snapshot, still Queued.
    const db = await openProgramsDatabase(dataDir);
    try {
      await db.write((tx) => tx.run("UPDATE deploy_deployments SET snapshot = NULL, status = 'Queued', transfers = 0 WHERE id = ?", [id]));
    } finally {
      await db.close();
    }
    link.hold = 'none';
    svc = await startTestProgramService({ plugins: PLUGINS, localGateway: link, dataDir });
    admin = await login(svc, 'admin', TEST_PROGRAMS_ADMIN_PASSWORD);
    const [done] = await settle([id]);
    expect(done.status).toBe('Succeeded');
    expect(done.reason).toBeNull();
    expect(done.readBackSha256).toBe(done.sha256);
  });
});

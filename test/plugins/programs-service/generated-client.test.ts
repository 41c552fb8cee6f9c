/**
 * The OpenAPI document is enough to build a client: a client generated from
 * the served document with openapi-typescript and openapi-fetch walks a
 * plant's journey (upload, submit, approve as someone else, assign, deploy
 * with an idempotency key and an operator, poll, verify the audit), every
 * call and answer type-checked against the generated declarations; and
 * every request header a handler reads is declared in the document.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import createClient, { type Client } from 'openapi-fetch';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InProcessGatewayLink } from '../../../core/gateway-link/in-process.js';
import { PROGRAMS_PLUGINS } from '../../../core/roles/programs/compose.js';
import { accountsPlugin } from '../../../plugins/accounts/index.js';
import { simMachine, startTestGateway, type TestGateway } from '../../fixtures/gateway.js';
import type { paths } from '../../fixtures/programs-api.js';
import { PROGRAMS_API_TYPES_FILE, programsApiTypes } from '../../fixtures/programs-api-types.js';
import { startTestProgramService, type TestProgramService } from '../../fixtures/programs.js';
import { TEST_ACCOUNTS, TEST_PROGRAMS_ADMIN_PASSWORD } from '../../fixtures/programs-accounts.js';

type Api = Client<paths>;
const DIR = '//CNC_MEM/USER/PATH1/';
const PROGRAM = Buffer.from('%\r\nO4711 (FLANGE)\r\nG90 G54\r\nM30\r\n%\r\n', 'latin1');

/** What a response gave, or a test failure naming the status and the problem. */
function ok<T>(result: { data?: T; error?: unknown; response: Response }): T {
  if (result.data === undefined) throw new Error(`${result.response.status} ${JSON.stringify(result.error)}`);
  return result.data;
}

describe('a client generated from the OpenAPI document', () => {
  let gw: TestGateway;
  let svc: TestProgramService;
  let doc: Record<string, unknown>;

  beforeAll(async () => {
    gw = await startTestGateway({ machines: [simMachine('M01'), simMachine('M02')] });
    svc = await startTestProgramService({
      plugins: PROGRAMS_PLUGINS.map((p) => (p === accountsPlugin ? TEST_ACCOUNTS : p)),
      env: { PROGRAMS_ADMIN_PASSWORD: TEST_PROGRAMS_ADMIN_PASSWORD },
      localGateway: new InProcessGatewayLink(gw.gateway.context.interfaces),
    });
    doc = await svc.document();
  });
  afterAll(async () => {
    await svc.stop();
    await gw.stop();
  });

  it('PV-02 the committed client declarations are what openapi-typescript generates from the served document (npm run api:types)', async () => {
    expect(await programsApiTypes(doc)).toBe(readFileSync(PROGRAMS_API_TYPES_FILE, 'utf8'));
  });

  it('PV-02 every request header a handler or the surface reads is a declared header parameter of the operations that read it', () => {
    const operations = Object.values(doc.paths as Record<string, Record<string, { operationId: string; security: unknown[]; parameters?: { $ref?: string; name?: string; in?: string }[] }>>)
      .flatMap((item) => Object.entries(item).map(([method, op]) => ({ method, ...op })));
    type Parameter = { $ref?: string; name?: string; in?: string };
    const parameters = (doc.components as { parameters: Record<string, Parameter> }).parameters;
    const headersOf = (op: (typeof operations)[number]) => new Set((op.parameters ?? [])
      .map((p) => (p.$ref ? parameters[p.$ref.split('/').pop() as string] : p))
      .filter((p) => p?.in === 'header')
      .map((p) => String(p?.name).toLowerCase()));
    for (const op of operations.filter((o) => o.security.length > 0)) {
      expect(headersOf(op), op.operationId).toContain('x-on-behalf-of');
      if (op.method !== 'get') expect(headersOf(op), op.operationId).toContain('x-csrf-token');
    }
    // The headers a handler reads, found in the source of every plugin that defines operations, at any depth.
    const root = join(import.meta.dirname, '../../../plugins');
    const read = new Map<string, string>();
    for (const file of readdirSync(root, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.ts'))) {
      const source = readFileSync(join(root, file), 'utf8');
      if (!source.includes('defineOperation(')) continue;
      for (const m of source.matchAll(/request\.headers\[['"]([a-z0-9-]+)['"]\]/g)) read.set(m[1] as string, `plugins/${file}`);
    }
    expect([...read.keys()].sort()).toEqual(['idempotency-key', 'if-none-match']);
    const declared = new Set(operations.flatMap((op) => [...headersOf(op)]));
    for (const [header, file] of read) expect(declared.has(header), `${header} read in ${file}`).toBe(true);
    const byId = new Map(operations.map((op) => [op.operationId, op]));
    expect(headersOf(byId.get('createDeployment') as (typeof operations)[number])).toContain('idempotency-key');
    expect(headersOf(byId.get('getVersionContent') as (typeof operations)[number])).toContain('if-none-match');
  });

  it('PV-35 PV-12 a journey through the generated client: upload, submit, approve, assign, deploy with an idempotency key and an operator, poll, verify the audit', { timeout: 30_000 }, async () => {
    const anonymous: Api = createClient<paths>({ baseUrl: svc.url });
    const login = await anonymous.POST('/api/v1/auth/login', { body: { username: 'admin', password: TEST_PROGRAMS_ADMIN_PASSWORD } });
    const csrf = ok(login).csrfToken as string;
    const cookie = (login.response.headers.get('set-cookie') ?? '').split(';')[0] as string;
    const admin: Api = createClient<paths>({ baseUrl: svc.url, headers: { cookie } });
    const tokenFor = async (name: string, role: 'integration' | 'approver' | 'operator', requiresOperator = false): Promise<Api> => {
      const created = ok(await admin.POST('/api/v1/admin/service-tokens', { params: { header: { 'X-CSRF-Token': csrf } }, body: { name, role, requiresOperator } }));
      return createClient<paths>({ baseUrl: svc.url, headers: { authorization: `Bearer ${created.token}` } });
    };
    const cam = await tokenFor('cam-post', 'integration');
    const qa = await tokenFor('qa-station', 'approver');
    const mes = await tokenFor('mes', 'operator', true);

    const library = ok(await admin.POST('/api/v1/libraries', { params: { header: { 'X-CSRF-Token': csrf } }, body: { name: 'Flanges', approvalPolicy: { mode: 'approvals', required: 1 } } }));
    const program = ok(await cam.POST('/api/v1/programs', { body: { libraryId: library.id, name: 'O4711 FLANGE', controller: 'fanuc' } }));
    const version = ok(await cam.POST('/api/v1/programs/{id}/versions', {
      params: { path: { id: program.id }, header: { 'X-On-Behalf-Of': 'Ann Programmer' } },
      body: { contentBase64: PROGRAM.toString('base64'), notes: 'first cut' },
    }));
    const submitted = ok(await cam.POST('/api/v1/versions/{id}/submit', { params: { path: { id: version.id } } }));
    expect(submitted.version.state).toBe('submitted');
    const approval = submitted.approval;
    if (!approval) throw new Error('no approval opened');
    const decided = ok(await qa.POST('/api/v1/approvals/{id}/decide', { params: { path: { id: approval.id }, header: { 'X-On-Behalf-Of': 'Quinn Approver' } }, body: { decision: 'approve', comment: 'checked' } }));
    expect(decided.version.state).toBe('published');

    const machines = ok(await cam.GET('/api/v1/machines', { params: { query: { limit: 100 } } })).items;
    const m01 = machines.find((m) => m.machineId === 'M01');
    if (!m01) throw new Error('M01 not in the fleet');
    const assignment = ok(await cam.POST('/api/v1/machine-assignments', { body: { programId: program.id, machineId: m01.id, dir: DIR } }));

    const deployBody = { versionId: version.id, assignmentIds: [assignment.id], isTrial: false, trialHours: null };
    const refused = await mes.POST('/api/v1/deployments', { params: { header: { 'Idempotency-Key': 'order-4711' } }, body: deployBody });
    expect(refused.response.status).toBe(403);
    const headers = { 'Idempotency-Key': 'order-4711', 'X-On-Behalf-Of': 'Olga Operator' };
    const batch = ok(await mes.POST('/api/v1/deployments', { params: { header: headers }, body: deployBody }));
    const again = ok(await mes.POST('/api/v1/deployments', { params: { header: headers }, body: deployBody }));
    expect(again.batchId).toBe(batch.batchId);

    const id = batch.deployments[0]?.id as string;
    const deadline = Date.now() + 20_000;
    let deployment = ok(await mes.GET('/api/v1/deployments/{id}', { params: { path: { id } } }));
    while (deployment.status !== 'Succeeded' && deployment.status !== 'Failed' && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 50));
      deployment = ok(await mes.GET('/api/v1/deployments/{id}', { params: { path: { id } } }));
    }
    expect(deployment).toMatchObject({ status: 'Succeeded', sha256: version.sha256, readBackSha256: version.sha256 });

    const content = await mes.GET('/api/v1/versions/{id}/content', { params: { path: { id: version.id }, header: { 'If-None-Match': `"${version.sha256}"` } }, parseAs: 'arrayBuffer' });
    expect(content.response.status).toBe(304);
    const audit = ok(await admin.GET('/api/v1/audit', { params: { query: { entityId: id, limit: 10 } } }));
    expect(audit.items.length).toBeGreaterThan(0);
    const created = ok(await admin.GET('/api/v1/audit', { params: { query: { category: 'deployment', limit: 100 } } })).items.find((r) => r.action === 'deployment.create');
    expect(created).toMatchObject({ principalName: 'mes', onBehalfOf: 'Olga Operator' });
    expect(ok(await admin.GET('/api/v1/audit/verify'))).toMatchObject({ intact: true, firstBrokenSeq: null });
  });
});

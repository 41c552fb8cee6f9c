/**
 * The /api/v1 surface itself, with a small test-only plugin: routes from
 * operation definitions, authentication before the body, problem documents
 * for every failure, the generated OpenAPI 3.1 document and its reference page.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Validator } from '@seriousme/openapi-schema-validator';
import { z } from 'zod';
import { definePlugin } from '../../../core/runtime/plugin-host.js';
import type { ProgramsContext } from '../../../core/roles/programs/context.js';
import { defineOperation, type RestPrincipal } from '../../../core/rest/operation.js';
import { decodeCursor, encodeCursor, pageOf, pageQueryShape } from '../../../core/rest/paging.js';
import { ProblemError } from '../../../core/rest/problem.js';
import { startTestProgramService, type TestProgramService } from '../../fixtures/programs.js';

/** Test scaffolding: `x-test-role: <role>` (and `x-test-operator`) maps to a principal. */
function principalFor(headers: Record<string, string | string[] | undefined>): RestPrincipal | null {
  const role = headers['x-test-role'];
  if (typeof role !== 'string') return null;
  if (role === 'broken') throw new ProblemError('unauthenticated', 'the token is not valid');
  const permissions = role === 'writer' ? ['things.read', 'things.write', 'things.delete'] : ['things.read'];
  const operator = headers['x-on-behalf-of'];
  return {
    kind: 'serviceToken', id: 'tok_1', name: `test-${role}`, role, permissions: new Set(permissions), scopes: { libraries: '*' },
    authMethod: 'serviceToken', onBehalfOf: typeof operator === 'string' ? operator : null, requiresOperator: headers['x-test-requires-operator'] === 'yes',
  };
}

const thing = z.object({ id: z.string(), name: z.string(), state: z.enum(['draft', 'published']), size: z.number().int() });
type Thing = z.infer<typeof thing>;
const idParams = z.object({ id: z.string().regex(/^thg_[a-z0-9]{1,32}$/, 'a thing id such as thg_1') });

const thingsPlugin = definePlugin<ProgramsContext>({
  name: 'test-things',
  register(ctx) {
    const things = new Map<string, Thing>();
    let next = 1;
    ctx.rest.setAuthenticator({ authenticate: (request) => Promise.resolve(principalFor(request.headers)) });
    const find = (id: string): Thing => {
      const found = things.get(id);
      if (!found) throw new ProblemError('not-found', `no thing ${id}`);
      return found;
    };
    ctx.rest.define(defineOperation({
      operationId: 'createThing', method: 'POST', path: '/things', summary: 'Create a thing', tags: ['things'], permission: 'things.write',
      body: z.object({ name: z.string().min(1).max(40), state: z.enum(['draft', 'published']).default('draft'), padding: z.string().optional() }).strict(),
      bodyLimit: 4096,
      responses: { 201: { description: 'Created', schema: thing } },
      handler: ({ body }) => {
        const created: Thing = { id: `thg_${next++}`, name: body.name, state: body.state, size: body.name.length };
        things.set(created.id, created);
        return { status: 201, body: created, headers: { location: `/api/v1/things/${created.id}` } };
      },
    }));
    ctx.rest.define(defineOperation({
      operationId: 'listThings', method: 'GET', path: '/things', summary: 'List things', tags: ['things'], permission: 'things.read',
      query: z.object({ ...pageQueryShape, state: z.enum(['draft', 'published']).optional() }),
      responses: { 200: { description: 'A page', schema: pageOf(thing) } },
      handler: ({ query }) => {
        const after = query.cursor ? Number(decodeCursor(query.cursor, { n: 'number' }).n) : 0;
        const all = [...things.values()].filter((t) => (query.state ? t.state === query.state : true)).filter((t) => Number(t.id.slice(4)) > after);
        const items = all.slice(0, query.limit);
        const last = items[items.length - 1];
        return { status: 200, body: { items, nextCursor: all.length > items.length && last ? encodeCursor({ n: Number(last.id.slice(4)) }) : null } };
      },
    }));
    ctx.rest.define(defineOperation({
      operationId: 'patchThing', method: 'PATCH', path: '/things/{id}', summary: 'Rename a thing', tags: ['things'], permission: 'things.write',
      params: idParams, body: z.object({ name: z.string().min(1).max(40) }).strict(),
      responses: { 200: { description: 'Renamed', schema: thing } },
      handler: ({ params, body }) => {
        const t = find(params.id);
        if (t.state === 'published') throw new ProblemError('state-conflict', `thing ${t.id} is published and cannot be renamed`, { extensions: { state: t.state } });
        t.name = body.name;
        return { status: 200, body: t };
      },
    }));
    ctx.rest.define(defineOperation({
      operationId: 'deleteThing', method: 'DELETE', path: '/things/{id}', summary: 'Delete a thing', tags: ['things'], permission: 'things.delete', highRisk: true,
      params: idParams, responses: { 204: { description: 'Deleted' } },
      handler: ({ params }) => {
        find(params.id);
        things.delete(params.id);
        return { status: 204 };
      },
    }));
    ctx.rest.define(defineOperation({
      operationId: 'thingContent', method: 'GET', path: '/things/{id}/content', summary: 'Bytes of a thing', tags: ['things'], permission: 'things.read',
      params: idParams, responses: { 200: { description: 'Bytes', contentType: 'application/octet-stream', schema: z.string() } },
      handler: ({ params }) => ({ status: 200, body: Buffer.from(`${find(params.id).name}\r\n\u00ff`, 'latin1') }),
    }));
    ctx.rest.define(defineOperation({
      operationId: 'exportThings', method: 'GET', path: '/things-export', summary: 'Things as CSV', tags: ['things'], permission: 'things.read',
      responses: { 200: { description: 'CSV', contentType: 'text/csv', schema: z.string() } },
      handler: () => ({
        status: 200,
        body: (async function* () {
          yield 'id,name\r\n';
          for (const t of things.values()) yield `${t.id},${t.name}\r\n`;
        })(),
      }),
    }));
    ctx.rest.define(defineOperation({
      operationId: 'noteThing', method: 'POST', path: '/things/{id}/notes', summary: 'Record a note on a thing in the audit', tags: ['things'], permission: 'things.write',
      params: idParams, body: z.object({ note: z.string() }).strict(),
      responses: { 204: { description: 'Recorded' } },
      // The note's length is left to the audit chain, which refuses a field over its limit.
      handler: async ({ params, body }, { principal }) => {
        await ctx.db.write((tx) => ctx.audit.append(tx, { principalName: principal?.name ?? 'anonymous', authMethod: 'serviceToken', category: 'test', action: 'thing.note', entityType: 'thing', entityId: params.id, machine: body.note }), { transaction: true });
        return { status: 204 };
      },
    }));
    ctx.rest.define(defineOperation({
      operationId: 'ping', method: 'GET', path: '/ping', summary: 'Public', tags: ['misc'], permission: null,
      responses: { 200: { description: 'Pong', schema: z.object({ pong: z.literal(true), caller: z.string().nullable() }) } },
      handler: (_input, ctx2) => ({ status: 200, body: { pong: true as const, caller: ctx2.principal?.name ?? null } }),
    }));
  },
});

describe('the /api/v1 surface', () => {
  let svc: TestProgramService;
  const writer = { 'x-test-role': 'writer' };
  const reader = { 'x-test-role': 'reader' };

  beforeAll(async () => {
    svc = await startTestProgramService({ plugins: [thingsPlugin] });
  });
  afterAll(() => svc.stop());

  it('PV-02 serves the OpenAPI 3.1 document at /openapi/v1.json and the reference at /api/docs, on the role\'s listener', async () => {
    const doc = await svc.document();
    expect(doc.openapi).toBe('3.1.0');
    const result = await new Validator().validate(structuredClone(doc));
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    const paths = doc.paths as Record<string, Record<string, { responses: Record<string, unknown>; parameters?: { name: string; in: string }[] }>>;
    expect(Object.keys(paths).sort()).toEqual(['/api/v1/ping', '/api/v1/things', '/api/v1/things-export', '/api/v1/things/{id}', '/api/v1/things/{id}/content', '/api/v1/things/{id}/notes']);
    expect(Object.keys(paths['/api/v1/things/{id}'] ?? {}).sort()).toEqual(['delete', 'patch']);
    expect(paths['/api/v1/things/{id}']?.patch?.parameters).toEqual([
      expect.objectContaining({ name: 'id', in: 'path' }),
      { $ref: '#/components/parameters/OnBehalfOf' },
      { $ref: '#/components/parameters/CsrfToken' },
    ]);
    expect(Object.keys(paths['/api/v1/things']?.post?.responses ?? {})).toEqual(expect.arrayContaining(['201', '400', '401', '403', '413']));
    const page = await fetch(`${svc.url}/api/docs/`);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('swagger');
    const root = await fetch(`${svc.url}/`, { redirect: 'manual' });
    expect(root.status).toBe(302);
    expect(root.headers.get('location')).toBe('/api/docs');
  });

  it('PV-03 serves operations under /api/v1 with JSON bodies: 201 with Location, PATCH, 204 DELETE, path parameters', async () => {
    const created = await svc.request('POST', '/api/v1/things', { body: { name: 'bracket' }, headers: writer });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({ id: expect.stringMatching(/^thg_/), name: 'bracket', state: 'draft', size: 7 });
    expect(created.headers.get('location')).toBe(`/api/v1/things/${created.body.id}`);
    const renamed = await svc.request('PATCH', `/api/v1/things/${created.body.id}`, { body: { name: 'bracket-2' }, headers: writer });
    expect(renamed.body.name).toBe('bracket-2');
    const deleted = await svc.request('DELETE', `/api/v1/things/${created.body.id}`, { headers: writer });
    expect(deleted.status).toBe(204);
    expect(deleted.text).toBe('');
    const again = await svc.request('DELETE', `/api/v1/things/${created.body.id}`, { headers: writer });
    expect(again.status).toBe(404);
    expect(again.body.detail).toBe(`no thing ${created.body.id}`);
    const outside = await fetch(`${svc.url}/things`);
    expect(outside.status).toBe(404);
  });

  it('PV-70 failures are RFC 9457 problem documents with type, title, status, detail, instance and the bad fields', async () => {
    const res = await svc.request('POST', '/api/v1/things', { body: { name: '', state: 'lost', extra: 1 }, headers: writer });
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(res.body).toMatchObject({ type: expect.stringMatching(/\/invalid-request$/), title: expect.any(String), status: 400, instance: '/api/v1/things' });
    const fields = (res.body.errors as { field: string; accepted?: string }[]).map((e) => e.field).sort();
    expect(fields).toEqual(['body', 'body.name', 'body.state']);
    expect(res.body.errors.find((e: { field: string }) => e.field === 'body.state').accepted).toBe('draft, published');
    const badId = await svc.request('PATCH', '/api/v1/things/not-an-id', { body: { name: 'x' }, headers: writer });
    expect(badId.status).toBe(400);
    expect(badId.body.errors[0].field).toBe('path.id');
    const badLimit = await svc.request('GET', '/api/v1/things?limit=5000', { headers: reader });
    expect(badLimit.status).toBe(400);
    expect(badLimit.body.errors[0].field).toBe('query.limit');
  });

  it('PV-71 401 without credentials (before the body is read), 403 beyond the role, 403 operator-required, 409 with the state', async () => {
    const anonymous = await svc.request('POST', '/api/v1/things', { body: { name: 'x' } });
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get('www-authenticate')).toMatch(/^Bearer/);
    const broken = await svc.request('GET', '/api/v1/things', { headers: { 'x-test-role': 'broken' } });
    expect(broken.status).toBe(401);
    const beyond = await svc.request('POST', '/api/v1/things', { body: { name: 'x' }, headers: reader });
    expect(beyond.status).toBe(403);
    expect(beyond.body.type).toMatch(/\/forbidden$/);
    expect(beyond.body.requiredPermission).toBe('things.write');

    const made = await svc.request('POST', '/api/v1/things', { body: { name: 'plate', state: 'published' }, headers: writer });
    const conflict = await svc.request('PATCH', `/api/v1/things/${made.body.id}`, { body: { name: 'x' }, headers: writer });
    expect(conflict.status).toBe(409);
    expect(conflict.body.state).toBe('published');

    const needsOperator = { ...writer, 'x-test-requires-operator': 'yes' };
    const refused = await svc.request('DELETE', `/api/v1/things/${made.body.id}`, { headers: needsOperator });
    expect(refused.status).toBe(403);
    expect(refused.body.type).toMatch(/\/operator-required$/);
    expect(refused.body.errors[0].field).toBe('header.x-on-behalf-of');
    const allowed = await svc.request('DELETE', `/api/v1/things/${made.body.id}`, { headers: { ...needsOperator, 'x-on-behalf-of': 'j.doe' } });
    expect(allowed.status).toBe(204);
  });

  it('PV-71 an anonymous body is refused unread: 401 and the connection is closed', async () => {
    const res = await svc.request('POST', '/api/v1/things', { rawBody: 'x'.repeat(200_000), contentType: 'application/json' });
    expect(res.status).toBe(401);
    expect(res.headers.get('connection')).toBe('close');
  });

  it('PV-71 no input gives a 5xx: over-limit, deeply nested, malformed, wrong content type, unknown paths and methods', async () => {
    const big = await svc.request('POST', '/api/v1/things', { body: { name: 'x', padding: 'p'.repeat(10_000) }, headers: writer });
    expect(big.status).toBe(413);
    expect(big.body.type).toMatch(/\/payload-too-large$/);
    const deep = await svc.request('POST', '/api/v1/things', { rawBody: `${'['.repeat(1500)}${']'.repeat(1500)}`, contentType: 'application/json', headers: writer });
    expect(deep.status).toBe(400);
    expect(deep.body.errors[0].accepted).toMatch(/at most 64 levels/);
    const malformed = await svc.request('POST', '/api/v1/things', { rawBody: '{"name": "x"', contentType: 'application/json', headers: writer });
    expect(malformed.status).toBe(400);
    const notJson = await svc.request('POST', '/api/v1/things', { rawBody: 'name=x', contentType: 'application/x-www-form-urlencoded', headers: writer });
    expect(notJson.status).toBe(400);
    expect(notJson.body.errors[0].field).toBe('header.content-type');
    const badUtf8 = await svc.request('POST', '/api/v1/things', { rawBody: Buffer.from([0x7b, 0x22, 0x6e, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d]), contentType: 'application/json', headers: writer });
    expect(badUtf8.status).toBe(400);
    const longPath = await svc.request('GET', `/api/v1/${'a'.repeat(5000)}`, { headers: reader });
    expect(longPath.status).toBe(404);
    expect(longPath.text.length).toBeLessThan(2000);
    const wrongMethod = await svc.request('PUT', '/api/v1/things', { body: {}, headers: writer });
    expect(wrongMethod.status).toBe(404);
    const hugeId = await svc.request('PATCH', `/api/v1/things/thg_${'9'.repeat(3000)}`, { body: { name: 'x' }, headers: writer });
    expect(hugeId.status).toBe(400);
    expect(hugeId.text.length).toBeLessThan(2000);
  });

  it('PV-71 a failure the input causes deeper down (the audit chain refusing a field) is a 400 problem, not an internal error', async () => {
    const ok = await svc.request('POST', '/api/v1/things/thg_1/notes', { body: { note: 'checked' }, headers: writer });
    expect(ok.status).toBe(204);
    const refused = await svc.request('POST', '/api/v1/things/thg_1/notes', { body: { note: 'n'.repeat(5000) }, headers: writer });
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({ type: expect.stringMatching(/\/invalid-request$/), detail: expect.stringContaining('audit record machine') });
  });

  it('PV-03 pages a list with limit and cursor', async () => {
    for (let i = 0; i < 5; i++) await svc.request('POST', '/api/v1/things', { body: { name: `page-${i}` }, headers: writer });
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const res: Awaited<ReturnType<TestProgramService['request']>> = await svc.request('GET', `/api/v1/things?limit=2${cursor ? `&cursor=${cursor}` : ''}`, { headers: reader });
      expect(res.body.items.length).toBeLessThanOrEqual(2);
      seen.push(...res.body.items.map((t: Thing) => t.id));
      cursor = res.body.nextCursor;
      pages++;
    } while (cursor);
    expect(new Set(seen).size).toBe(seen.length);
    expect(pages).toBeGreaterThanOrEqual(3);
    const bogus = await svc.request('GET', '/api/v1/things?cursor=bm90LWEtY3Vyc29y', { headers: reader });
    expect(bogus.status).toBe(400);
    expect(bogus.body.errors[0].field).toBe('query.cursor');
  });

  it('PV-03 sends raw bytes and streamed text as the operation documents them', async () => {
    const made = await svc.request('POST', '/api/v1/things', { body: { name: 'raw' }, headers: writer });
    const bytes = await svc.request('GET', `/api/v1/things/${made.body.id}/content`, { headers: reader });
    expect(bytes.headers.get('content-type')).toBe('application/octet-stream');
    expect([...bytes.raw]).toEqual([...Buffer.from('raw\r\n\u00ff', 'latin1')]);
    const csv = await svc.request('GET', '/api/v1/things-export', { headers: reader });
    expect(csv.headers.get('content-type')).toMatch(/^text\/csv/);
    expect(csv.text.startsWith('id,name\r\n')).toBe(true);
    expect(csv.text).toContain(`${made.body.id},raw\r\n`);
    // A client that sends the JSON content type with no body: fine where the operation takes none, a named error where it needs one.
    const noBody = await svc.request('DELETE', `/api/v1/things/${made.body.id}`, { rawBody: '', contentType: 'application/json', headers: writer });
    expect(noBody.status).toBe(204);
    const missing = await svc.request('POST', '/api/v1/things', { rawBody: '', contentType: 'application/json', headers: writer });
    expect(missing.status).toBe(400);
    expect(missing.body.errors[0].field).toBe('body');
    const pub = await svc.request('GET', '/api/v1/ping');
    expect(pub.body).toEqual({ pong: true, caller: null });
  });

  it('PV-70 the response checker refuses a body that does not match the document', async () => {
    const { OpenApiResponseChecker } = await import('../../fixtures/openapi-responses.js');
    const checker = new OpenApiResponseChecker(await svc.document());
    expect(() => checker.check({ method: 'GET', path: '/api/v1/ping', status: 200, contentType: 'application/json', body: { pong: false } })).toThrow(/does not match/);
    expect(() => checker.check({ method: 'GET', path: '/api/v1/ping', status: 418, contentType: 'application/json', body: {} })).toThrow(/not documented/);
    expect(checker.check({ method: 'GET', path: '/api/v1/ping', status: 200, contentType: 'application/json', body: { pong: true, caller: null } })).toBe('ping');
  });
});

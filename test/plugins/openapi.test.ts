import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { z } from 'zod';
import { Validator } from '@seriousme/openapi-schema-validator';
import { afterEach, describe, expect, it } from 'vitest';
import { MACHINE_TASK_CLASSES } from '../../core/roles/gateway/machine-config.js';
import { parseConfig } from '../../core/roles/index.js';
import type { GatewayContext } from '../../core/roles/gateway/context.js';
import { Gateway } from '../../core/roles/gateway/gateway.js';
import { defineEntry, queryBool, queryInt, queryList, type InterfaceDefinition } from '../../core/interfaces/registry.js';
import { toJsonSchema, type JsonSchema } from '../../core/http/json-schema.js';
import { buildOpenApiDocument, type OpenApiDocument, type Operation } from '../../core/roles/gateway/openapi.js';
import { definePlugin, type Plugin } from '../../core/runtime/plugin-host.js';
import { DRIVERS } from '../../drivers/registry.js';
import { TEST_PLUGINS } from '../fixtures/gateway.js';
import { openapiPlugin } from '../../plugins/openapi/index.js';

let gateway: Gateway | undefined;
afterEach(async () => {
  await gateway?.stop();
  gateway = undefined;
});

/** A real gateway with the openapi plugin (and any extra plugins) booted. */
async function startDocsGateway(extra: Plugin<GatewayContext>[] = []): Promise<Gateway> {
  const dataDir = mkdtempSync(join(tmpdir(), 'gw-openapi-'));
  const config = parseConfig({ logLevel: 'silent', gateway: { dataDir, timeZone: 'UTC' } });
  // Works before and after the openapi plugin joins GATEWAY_PLUGINS.
  const plugins = [...TEST_PLUGINS.filter((p) => p.name !== openapiPlugin.name), openapiPlugin, ...extra];
  gateway = await Gateway.create({ config, drivers: DRIVERS, plugins, logger: pino({ level: 'silent' }) });
  return gateway;
}

async function servedDocument(g: Gateway): Promise<OpenApiDocument> {
  const res = await g.http.inject({ method: 'GET', url: '/api/openapi.json' });
  expect(res.statusCode).toBe(200);
  expect(res.headers['content-type']).toMatch(/^application\/json/);
  return res.json() as OpenApiDocument;
}

function operationOf(doc: OpenApiDocument, path: string, method: 'get' | 'post'): Operation {
  const operation = doc.paths[path]?.[method];
  if (!operation) throw new Error(`no ${method} ${path} in the document`);
  return operation;
}

/** Every `$ref` in the tree, with the JSON pointer it names. */
function refsIn(node: unknown, out: string[] = []): string[] {
  if (Array.isArray(node)) for (const item of node) refsIn(item, out);
  else if (node && typeof node === 'object') {
    for (const [key, value] of Object.entries(node)) {
      if (key === '$ref' && typeof value === 'string') out.push(value);
      else refsIn(value, out);
    }
  }
  return out;
}

function resolvePointer(doc: unknown, ref: string): unknown {
  return ref
    .slice(2)
    .split('/')
    .reduce<unknown>((node, key) => (node && typeof node === 'object' ? (node as Record<string, unknown>)[key] : undefined), doc);
}

/** A plugin booting after `openapi`, so its interfaces prove the document is built from the registry on demand. */
const widgetPlugin = definePlugin<GatewayContext>({
  name: 'widgets',
  dependsOn: ['openapi'],
  register(ctx) {
    ctx.interfaces.implement(
      defineEntry({
        path: '/api/widget/search',
        method: 'GET',
        summary: 'Finds widgets.',
        tags: ['widgets'],
        input: z
          .object({
            colour: z.enum(['red', 'blue']).describe('widget colour'),
            ids: queryList(z.string()).optional(),
            active: queryBool().optional(),
            limit: queryInt().min(1).max(100).default(10),
            name: z.string().transform((s) => s.trim()).optional(),
            since: z.date().optional(),
          })
          .strict(),
        output: z.array(z.object({ id: z.string(), colour: z.enum(['red', 'blue']) })),
        errors: [],
      }),
      { handler: () => [] },
    );
    ctx.interfaces.implement(
      defineEntry({
        path: '/api/widget/add',
        method: 'POST',
        summary: 'Adds a widget.',
        tags: ['widgets'],
        permission: null,
        input: z.object({ id: z.string().min(1).describe('the widget id'), size: z.coerce.number().positive() }).strict(),
        output: z.object({ id: z.string() }),
        errors: [],
      }),
      { handler: ({ id }) => ({ id }) },
    );
  },
});

describe('OpenAPI document of the interface registry', () => {
  it('validates against the official OpenAPI 3.1 schema, and the validator rejects a broken copy', async () => {
    const doc = await servedDocument(await startDocsGateway());
    const validator = new Validator();
    const result = await validator.validate(structuredClone(doc) as unknown as Record<string, unknown>);
    expect(result.errors).toBeUndefined();
    expect(result.valid).toBe(true);
    expect(validator.version).toBe('3.1');

    // Swagger 2's `in: body` is not an OpenAPI 3.1 parameter location.
    const broken = structuredClone(doc);
    const parameter = broken.paths['/api/task/batchReadTaskData']?.get?.parameters?.[0] as unknown as { in: string };
    parameter.in = 'body';
    expect((await new Validator().validate(broken as unknown as Record<string, unknown>)).valid).toBe(false);
  });

  it('lists every registered interface once, with its method, summary, tags and a unique operationId', async () => {
    const g = await startDocsGateway();
    const doc = await servedDocument(g);
    const defs = g.context.interfaces.list();
    expect(defs.length).toBeGreaterThanOrEqual(13);
    expect(Object.keys(doc.paths).sort()).toEqual(defs.map((d) => d.path).sort());
    for (const def of defs) {
      const item = doc.paths[def.path] ?? {};
      expect(Object.keys(item), def.path).toEqual([def.method.toLowerCase()]);
      const op = operationOf(doc, def.path, def.method === 'GET' ? 'get' : 'post');
      expect(op.summary).toBe(def.summary);
      expect(op.tags ?? []).toEqual([...(def.tags ?? [])]);
    }
    const ids = Object.values(doc.paths).flatMap((item) => [item.get, item.post]).filter(Boolean).map((op) => op?.operationId);
    expect(new Set(ids).size).toBe(defs.length);
    expect(operationOf(doc, '/api/config/machine/add', 'post').operationId).toBe('configMachineAdd');
  });

  it('converts the input (and output) schema of every interface of a fully built gateway', async () => {
    const g = await startDocsGateway([widgetPlugin]);
    for (const def of g.context.interfaces.list()) {
      expect(() => toJsonSchema(def.input, 'input'), def.path).not.toThrow();
      if (def.output) expect(() => toJsonSchema(def.output as z.ZodType, 'output'), def.path).not.toThrow();
    }
    const doc = await servedDocument(g);
    const flagged = Object.entries(doc.paths).filter(([, item]) => (item.get ?? item.post)?.['x-schema-error']);
    expect(flagged).toEqual([]);
    for (const ref of refsIn(doc)) expect(resolvePointer(doc, ref), ref).toBeDefined();
  });

  it('GET inputs are query parameters: batchReadTaskData type lists the task classes; machineIDs is a comma-separated list', async () => {
    const doc = await servedDocument(await startDocsGateway());
    const op = operationOf(doc, '/api/task/batchReadTaskData', 'get');
    expect(op.requestBody).toBeUndefined();
    const byName = Object.fromEntries((op.parameters ?? []).map((p) => [p.name, p]));
    expect(byName.type).toMatchObject({ in: 'query', required: true, schema: { type: 'string', enum: [...MACHINE_TASK_CLASSES] } });
    expect(byName.type?.schema.enum).toEqual(['CNCStatus', 'Count', 'Cycle', 'TimeData', 'ToolLife', 'OEE']);
    expect(byName.machineIDs).toMatchObject({ in: 'query', required: false, style: 'form', explode: false, schema: { type: 'array', items: { type: 'string' } } });
    expect(byName.machineIDs?.description).toMatch(/comma-separated/);
    expect(operationOf(doc, '/api/config/machine', 'get').parameters).toEqual([
      expect.objectContaining({ name: 'machineID', in: 'query', required: true, schema: { type: 'string', maxLength: 64, pattern: '^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$' } }),
    ]);
    expect(operationOf(doc, '/api/config/machines', 'get').parameters).toBeUndefined();
  });

  it('POST inputs are JSON request bodies', async () => {
    const doc = await servedDocument(await startDocsGateway());
    const op = operationOf(doc, '/api/config/machine/delete', 'post');
    expect(op.parameters).toBeUndefined();
    expect(op.requestBody).toMatchObject({
      required: true,
      content: { 'application/json': { schema: { type: 'object', properties: { machineID: { type: 'string' } }, required: ['machineID'] } } },
    });
    const update = operationOf(doc, '/api/config/group/update', 'post');
    expect(update.requestBody?.content['application/json'].schema).toMatchObject({ required: ['groupID'], additionalProperties: {} });
  });

  it('public interfaces have `security: []`; the others require the bearer scheme and may answer 403', async () => {
    const doc = await servedDocument(await startDocsGateway());
    expect(doc.components.securitySchemes.bearerAuth).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(doc.components.securitySchemes.bearerAuth?.description).toMatch(/Authorization: Bearer <JWT or secret key>/);
    const health = operationOf(doc, '/api/health', 'get');
    expect(health.security).toEqual([]);
    expect(health.responses['403']).toBeUndefined();
    const machines = operationOf(doc, '/api/config/machines', 'get');
    expect(machines.security).toEqual([{ bearerAuth: [] }]);
    expect(machines.responses['403']).toEqual({ $ref: '#/components/responses/Forbidden' });
  });

  it('answers 200 with the success envelope and every error status with the error envelope of the error table', async () => {
    const doc = await servedDocument(await startDocsGateway());
    // Every interface declares its output, so its 200 answer is the envelope with its data typed.
    const op = operationOf(doc, '/api/config/machine', 'get');
    expect(op.responses['200']).toMatchObject({ content: { 'application/json': { schema: { required: ['errorCode', 'errorMsg', 'data'], properties: { data: { type: 'object' } } } } } });
    expect(doc.components.schemas.SuccessEnvelope).toMatchObject({ required: ['errorCode', 'errorMsg', 'data'], properties: { errorCode: { const: 0 }, errorMsg: { const: 'OK' } } });
    expect(doc.components.schemas.ErrorEnvelope).toMatchObject({ required: ['errorCode', 'errorMsg'], properties: { hint: { type: 'string' } } });
    for (const status of ['400', '401', '403', '404', '409', '429', '500']) {
      const ref = (op.responses[status] as { $ref: string } | undefined)?.$ref;
      expect(ref, status).toMatch(/^#\/components\/responses\//);
      expect(resolvePointer(doc, ref as string)).toMatchObject({ content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorEnvelope' } } } });
    }
    expect((resolvePointer(doc, '#/components/responses/NotFound') as JsonSchema).description).toMatch(/10003 GENERAL_MACHINE_ID_NOT_EXISTED/);
  });

  it('every operation of the gateway\'s document has a response schema: its data as its interface\'s entry declares it', async () => {
    const doc = await servedDocument(await startDocsGateway());
    const untyped: string[] = [];
    for (const [path, item] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(item as Record<string, { responses: Record<string, { content?: Record<string, { schema: Record<string, unknown> }> }> }>)) {
        const schema = op.responses['200']?.content?.['application/json']?.schema ?? {};
        if (!(schema.properties as Record<string, unknown> | undefined)?.data) untyped.push(`${method} ${path}`);
      }
    }
    expect(Object.keys(doc.paths).length).toBeGreaterThan(50);
    expect(untyped).toEqual([]);
  });

  it('is generated from the registry: an interface defined by a plugin booting later appears, with its query types and output', async () => {
    const doc = await servedDocument(await startDocsGateway([widgetPlugin]));
    const search = operationOf(doc, '/api/widget/search', 'get');
    const byName = Object.fromEntries((search.parameters ?? []).map((p) => [p.name, p]));
    expect(Object.keys(byName)).toEqual(['colour', 'ids', 'active', 'limit', 'name', 'since']);
    expect(byName.colour).toMatchObject({ required: true, description: 'widget colour', schema: { enum: ['red', 'blue'] } });
    expect(byName.ids).toMatchObject({ style: 'form', explode: false, schema: { type: 'array' } });
    expect(byName.ids?.description).toMatch(/comma-separated/);
    expect(byName.active).toMatchObject({ required: false, schema: { type: 'boolean' } });
    expect(byName.limit).toMatchObject({ required: false, schema: { type: 'integer', minimum: 1, maximum: 100, default: 10 } });
    expect(byName.name).toMatchObject({ schema: { type: 'string' } });
    expect(byName.since?.schema).toEqual({});
    expect(search.responses['200']).toMatchObject({
      content: { 'application/json': { schema: { properties: { data: { type: 'array', items: { properties: { colour: { enum: ['red', 'blue'] } } } } } } } },
    });
    const add = operationOf(doc, '/api/widget/add', 'post');
    expect(add.security).toEqual([]);
    expect(add.requestBody?.content['application/json'].schema).toMatchObject({ properties: { id: { description: 'the widget id' }, size: { type: 'number' } } });
    expect(doc.tags).toContainEqual({ name: 'widgets' });
  });

  it('the fleet batch reads document sinceRevision and answer either the array or the changes since it', async () => {
    const doc = await servedDocument(await startDocsGateway());
    for (const path of ['/api/task/batchReadTaskData', '/api/task/batchReadErrors']) {
      const op = operationOf(doc, path, 'get');
      const since = (op.parameters ?? []).find((p) => p.name === 'sinceRevision');
      expect(since, path).toMatchObject({ in: 'query', required: false, schema: { type: 'integer', minimum: 0 } });
      expect(since?.description, path).toMatch(/docs\/api\.md/);
      const data = (op.responses['200'] as { content: { 'application/json': { schema: { properties: { data: { anyOf: JsonSchema[] } } } } } }).content['application/json'].schema.properties.data;
      expect(data.anyOf, path).toHaveLength(2);
      expect(data.anyOf[0], path).toMatchObject({ type: 'array' });
      expect(data.anyOf[1], path).toMatchObject({ type: 'object', required: ['revision', 'full', 'entries', 'removed'] });
    }
  });

  it('serves the interactive reference page at /api/docs, reading the same document', async () => {
    const g = await startDocsGateway();
    const page = await g.http.inject({ method: 'GET', url: '/api/docs' });
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    expect(page.body).toMatch(/swagger-ui/i);
    const initializer = await g.http.inject({ method: 'GET', url: '/api/docs/static/swagger-initializer.js' });
    expect(initializer.statusCode).toBe(200);
    const pageDoc = await g.http.inject({ method: 'GET', url: '/api/docs/json' });
    expect(pageDoc.json()).toEqual(await servedDocument(g));
  });
});

describe('documentation routes and access control', () => {
  it('the document and the page need no credentials while security control guards the interfaces', async () => {
    const g = await startDocsGateway();
    expect((await g.http.inject({ method: 'GET', url: '/api/config/machines' })).statusCode).toBe(401);
    for (const url of ['/api/openapi.json', '/api/docs', '/api/docs/json']) {
      expect((await g.http.inject({ method: 'GET', url })).statusCode, url).toBe(200);
    }
  });
});

describe('buildOpenApiDocument', () => {
  const def = (extra: Partial<InterfaceDefinition>): InterfaceDefinition => ({
    path: '/api/tree/node',
    method: 'POST',
    summary: 'A node.',
    input: z.object({}).strict(),
    output: z.null(),
    errors: [],
    handler: () => null,
    ...extra,
  });
  const info = { title: 't', version: '1', description: 'd' };

  it('moves recursive and named schemas into components, so every $ref resolves', async () => {
    type Node = { name: string; children: Node[] };
    const node: z.ZodType<Node> = z.object({ name: z.string(), get children() { return z.array(node); } });
    const doc = buildOpenApiDocument([def({ input: node }), def({ path: '/api/tree/nodes', method: 'GET', input: z.object({ root: node.optional() }) })], info);
    const refs = refsIn(doc);
    expect(refs.length).toBeGreaterThan(0);
    for (const ref of refs) {
      expect(ref, ref).toMatch(/^#\/components\//);
      expect(resolvePointer(doc, ref), ref).toBeDefined();
    }
    expect((await new Validator().validate(structuredClone(doc) as unknown as Record<string, unknown>)).valid).toBe(true);
  });

  it('an input schema that cannot be converted shows as any and is flagged, without failing the document', () => {
    const broken = z.lazy((): z.ZodType => {
      throw new Error('schema getter failed');
    });
    const doc = buildOpenApiDocument([def({ input: broken }), def({ path: '/api/tree/ok' })], info);
    const op = operationOf(doc, '/api/tree/node', 'post');
    expect(op['x-schema-error']).toMatch(/input: schema getter failed/);
    expect(op.requestBody?.content['application/json'].schema).toEqual({});
    expect(operationOf(doc, '/api/tree/ok', 'post')['x-schema-error']).toBeUndefined();
  });
});

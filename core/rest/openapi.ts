/**
 * The OpenAPI 3.1 document of a REST surface, generated from the same
 * operation definitions the routes are: path and query parameters, request
 * body, every success response with its schema and content type, the
 * problem responses the surface can give, and the two ways to authenticate
 * (session cookie, service token). Served at /openapi/v1.json with the
 * interactive reference at /api/docs (PV-02).
 */
import fastifySwagger from '@fastify/swagger';
import fastifySwaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { hoistDefinitions, toJsonSchema, type JsonSchema, type OpenApiInfo } from '../http/json-schema.js';
import type { AnyRestOperation, RestRegistry } from './operation.js';
import { PROBLEM_TYPES } from './problem.js';
import { PROBLEM_CONTENT_TYPE, PROBLEM_TYPE_BASE, REST_PREFIX } from './serve.js';

export const REST_OPENAPI_PATH = '/openapi/v1.json';
export const REST_DOCS_PATH = '/api/docs';
export const SESSION_SCHEME = 'sessionCookie';
export const TOKEN_SCHEME = 'serviceToken';

export interface RestOpenApiDocument {
  openapi: '3.1.0';
  info: OpenApiInfo;
  servers: { url: string }[];
  tags: { name: string }[];
  paths: Record<string, Record<string, JsonSchema>>;
  components: {
    schemas: Record<string, JsonSchema>;
    responses: Record<string, JsonSchema>;
    parameters: Record<string, JsonSchema>;
    securitySchemes: Record<string, JsonSchema>;
  };
}

const PROBLEM_SCHEMA: JsonSchema = {
  type: 'object',
  description: 'An RFC 9457 problem document. `errors` names each bad field; some types add members (e.g. `state` for a lifecycle conflict).',
  required: ['type', 'title', 'status', 'detail', 'instance'],
  properties: {
    type: { type: 'string', description: `${PROBLEM_TYPE_BASE}<slug>; the slugs are listed in docs/rest-surface.md.` },
    title: { type: 'string' },
    status: { type: 'integer' },
    detail: { type: 'string' },
    instance: { type: 'string', description: 'The request path.' },
    errors: {
      type: 'array',
      items: {
        type: 'object',
        required: ['field', 'message'],
        properties: { field: { type: 'string' }, message: { type: 'string' }, accepted: { type: 'string' } },
      },
    },
  },
};

const STATUS_NAMES: Record<number, string> = {
  400: 'BadRequest', 401: 'Unauthorized', 403: 'Forbidden', 404: 'NotFound', 409: 'Conflict', 413: 'PayloadTooLarge',
  422: 'Unprocessable', 429: 'TooManyRequests', 503: 'ServiceUnavailable',
};

function problemResponses(): Record<string, JsonSchema> {
  const out: Record<string, JsonSchema> = {};
  for (const [status, name] of Object.entries(STATUS_NAMES)) {
    const slugs = Object.entries(PROBLEM_TYPES).filter(([, t]) => t.status === Number(status)).map(([slug]) => slug);
    out[name] = {
      description: `Problem types: ${slugs.join(', ')}.`,
      content: { [PROBLEM_CONTENT_TYPE]: { schema: { $ref: '#/components/schemas/Problem' } } },
      ...(status === '429' || status === '503' ? { headers: { 'Retry-After': { description: 'Seconds to wait.', schema: { type: 'integer' } } } } : {}),
    };
  }
  return out;
}

/**
 * The headers the surface reads on every authenticated operation, declared
 * once and referenced, so a generated client offers them: the operator a
 * service token acts for, and the CSRF token a session sends with unsafe methods.
 */
const SURFACE_HEADERS: Record<string, JsonSchema> = {
  OnBehalfOf: {
    name: 'X-On-Behalf-Of',
    in: 'header',
    required: false,
    description: 'The human operator a service token acts for; recorded in the audit and counted for separation of duties. '
      + 'Required on high-risk operations (x-high-risk) for a token that requires an operator.',
    schema: { type: 'string', minLength: 1, maxLength: 128 },
  },
  CsrfToken: {
    name: 'X-CSRF-Token',
    in: 'header',
    required: false,
    description: 'With the session cookie: the csrfToken from POST /api/v1/auth/login or GET /api/v1/auth/me. Not needed with a service token.',
    schema: { type: 'string', maxLength: 256 },
  },
};

/** The header parameters of an operation: the surface's for an authenticated one, then its own. */
function headerParameters(op: AnyRestOperation): JsonSchema[] {
  const out: JsonSchema[] = [];
  if (op.permission !== null) {
    out.push({ $ref: '#/components/parameters/OnBehalfOf' });
    if (op.method !== 'GET') out.push({ $ref: '#/components/parameters/CsrfToken' });
  }
  for (const h of op.headers ?? []) {
    out.push({ name: h.name, in: 'header', required: false, description: h.description, schema: { type: 'string', ...(h.maxLength ? { maxLength: h.maxLength } : {}) } });
  }
  return out;
}

function pathParameterNames(path: string): string[] {
  return [...path.matchAll(/\{([A-Za-z0-9_]+)\}/g)].map((m) => m[1] as string);
}

/** Builds the document for every operation of `registry`. */
export function buildRestOpenApi(registry: RestRegistry, info: OpenApiInfo, prefix: string = REST_PREFIX): RestOpenApiDocument {
  const doc: RestOpenApiDocument = {
    openapi: '3.1.0',
    info: { ...info },
    servers: [{ url: '/' }],
    tags: [],
    paths: {},
    components: {
      schemas: { Problem: PROBLEM_SCHEMA },
      responses: problemResponses(),
      parameters: { ...SURFACE_HEADERS },
      securitySchemes: {
        [SESSION_SCHEME]: { type: 'apiKey', in: 'cookie', name: 'pvs_session', description: 'Set by POST /api/v1/auth/login (`__Host-pvs_session` over TLS). Unsafe methods also need the X-CSRF-Token header.' },
        [TOKEN_SCHEME]: { type: 'http', scheme: 'bearer', description: 'A service token `pvs_<id>_<secret>` from /api/v1/admin/service-tokens.' },
        ...Object.fromEntries(registry.securitySchemes()),
      },
    },
  };
  const tags = new Set<string>();
  for (const op of registry.list()) {
    const convert = (schema: NonNullable<AnyRestOperation['body']>, io: 'input' | 'output', owner: string): JsonSchema =>
      hoistDefinitions(toJsonSchema(schema, io), owner, doc.components.schemas);
    const parameters: JsonSchema[] = [];
    const params = op.params ? convert(op.params, 'input', `${op.operationId}.params`) : { properties: {} };
    const paramProps = (params.properties ?? {}) as Record<string, JsonSchema>;
    for (const name of pathParameterNames(op.path)) {
      const { description, ...schema } = paramProps[name] ?? { type: 'string' };
      parameters.push({ name, in: 'path', required: true, schema, ...(typeof description === 'string' ? { description } : {}) });
    }
    if (op.query) {
      const query = convert(op.query, 'input', `${op.operationId}.query`);
      for (const p of queryParametersOf(query)) parameters.push(p);
    }
    parameters.push(...headerParameters(op));
    const responses: Record<string, JsonSchema> = {};
    for (const [status, spec] of Object.entries(op.responses)) {
      const contentType = spec.contentType ?? 'application/json';
      const content: Record<string, JsonSchema> = {};
      if (spec.schema) content[contentType] = { schema: convert(spec.schema, 'output', `${op.operationId}.${status}`) };
      for (const [i, alt] of (spec.also ?? []).entries()) {
        content[alt.contentType] = alt.schema ? { schema: convert(alt.schema, 'output', `${op.operationId}.${status}.${i + 2}`) } : {};
      }
      responses[status] = {
        description: spec.description,
        ...(Object.keys(content).length ? { content } : {}),
        ...(spec.headers ? { headers: Object.fromEntries(Object.entries(spec.headers).map(([h, d]) => [h, { description: d, schema: { type: 'string' } }])) } : {}),
      };
    }
    for (const status of problemStatuses(op)) {
      const name = STATUS_NAMES[status];
      if (name) responses[String(status)] = { $ref: `#/components/responses/${name}` };
    }
    const operation: JsonSchema = {
      operationId: op.operationId,
      summary: op.summary,
      ...(op.description ? { description: op.description } : {}),
      tags: [...op.tags],
      security: op.permission === null ? [] : [SESSION_SCHEME, TOKEN_SCHEME, ...registry.securitySchemes().keys()].map((scheme) => ({ [scheme]: [] })),
      ...(op.permission ? { 'x-permission': op.permission } : {}),
      ...(op.highRisk ? { 'x-high-risk': true } : {}),
      ...(parameters.length ? { parameters } : {}),
      ...(op.body ? { requestBody: { required: true, content: { 'application/json': { schema: convert(op.body, 'input', `${op.operationId}.body`) } } } } : {}),
      responses,
    };
    for (const tag of op.tags) tags.add(tag);
    const path = `${prefix}${op.path}`;
    doc.paths[path] = { ...doc.paths[path], [op.method.toLowerCase()]: operation };
  }
  doc.tags = [...tags].map((name) => ({ name }));
  return doc;
}

/** One query parameter per property of the query schema. */
function queryParametersOf(query: JsonSchema): JsonSchema[] {
  const properties = (query.properties ?? {}) as Record<string, JsonSchema>;
  const required = Array.isArray(query.required) ? (query.required as string[]) : [];
  return Object.entries(properties).map(([name, property]) => {
    const { description, ...schema } = property;
    return { name, in: 'query', required: required.includes(name), schema, ...(typeof description === 'string' ? { description } : {}) };
  });
}

/**
 * Serves the document and the interactive reference, both public. The
 * document is built on first request, when every plugin has defined its operations.
 */
export async function serveRestDocs(app: FastifyInstance, registry: RestRegistry, info: OpenApiInfo, logger: Logger): Promise<void> {
  let cached: RestOpenApiDocument | undefined;
  const document = (): RestOpenApiDocument => {
    if (!cached) {
      cached = buildRestOpenApi(registry, info);
      logger.debug({ operations: registry.list().length }, 'OpenAPI document built');
    }
    return cached;
  };
  await app.register(async (scope) => {
    scope.get(REST_OPENAPI_PATH, (_request, reply) => reply.type('application/json; charset=utf-8').send(document()));
    await scope.register(fastifySwagger, {
      mode: 'static',
      specification: { document: { openapi: '3.0.3', info: { title: info.title, version: info.version }, paths: {} } },
    });
    await scope.register(fastifySwaggerUi, {
      routePrefix: REST_DOCS_PATH,
      transformSpecification: () => document(),
      transformSpecificationClone: false,
      // No validator badge: it is an image from validator.swagger.io, which the page policy does not load (core/http/response-headers.ts).
      uiConfig: { deepLinking: true, docExpansion: 'list', tryItOutEnabled: true, withCredentials: true, validatorUrl: null },
    });
  });
  // Without a console plugin at `/`, a person opening the address lands on the API reference.
  if (!app.hasRoute({ method: 'GET', url: '/' })) app.get('/', (_request, reply) => reply.redirect(REST_DOCS_PATH, 302));
}

/** The statuses of the problems an operation can answer, for its documentation. */
export function problemStatuses(op: AnyRestOperation): number[] {
  const statuses = new Set<number>([400, 404, 409, 422, 503]);
  if (op.permission !== null) {
    statuses.add(401);
    statuses.add(403);
  }
  if (op.body || op.method !== 'GET') statuses.add(413);
  for (const extra of op.problems ?? []) statuses.add(extra);
  return [...statuses].filter((s) => Object.values(PROBLEM_TYPES).some((t) => t.status === s)).sort((a, b) => a - b);
}

/**
 * The OpenAPI 3.1 document, generated from the interface registry: one
 * operation per interface, inputs from its zod schema (GET as query
 * parameters, POST as a JSON body), the response envelopes of
 * core/http/http-server.ts and the error responses of the one error table.
 */
import type { z } from 'zod';
import { ERRORS } from '../../interfaces/errors.js';
import type { InterfaceDefinition } from '../../interfaces/registry.js';
import { hoistDefinitions, isSchema, toJsonSchema, type JsonSchema, type OpenApiInfo } from '../../http/json-schema.js';

export type QueryParameter = {
  name: string;
  in: 'query';
  required: boolean;
  description?: string;
  schema: JsonSchema;
  style?: 'form';
  explode?: boolean;
};

export type Operation = {
  operationId: string;
  summary: string;
  tags?: string[];
  security: { [scheme: string]: string[] }[];
  parameters?: QueryParameter[];
  requestBody?: { required: boolean; content: { 'application/json': { schema: JsonSchema } } };
  responses: { [status: string]: JsonSchema };
  /** Why an input or output schema could not be converted; its place holds `{}` (any). */
  'x-schema-error'?: string;
};

export type OpenApiDocument = {
  openapi: '3.1.0';
  info: OpenApiInfo;
  tags: { name: string }[];
  security: { [scheme: string]: string[] }[];
  paths: { [path: string]: { get?: Operation; post?: Operation } };
  components: {
    schemas: { [name: string]: JsonSchema };
    responses: { [name: string]: JsonSchema };
    securitySchemes: { [name: string]: JsonSchema };
  };
};

export const BEARER_SCHEME = 'bearerAuth';

/** Status → component name of the error responses; statuses not named here get `Status<n>`. */
const ERROR_RESPONSE_NAMES: { [status: number]: string } = {
  400: 'BadRequest',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'NotFound',
  409: 'Conflict',
  429: 'TooManyRequests',
  500: 'InternalError',
  503: 'ServiceUnavailable',
};

/** `/api/config/machine/add` → `configMachineAdd`. */
function operationIdFor(path: string): string {
  const words = path.replace(/^\/api\//, '').split(/[^A-Za-z0-9]+/).filter(Boolean);
  return words.map((w, i) => (i === 0 ? w : w.charAt(0).toUpperCase() + w.slice(1))).join('') || 'api';
}

/** One query parameter per property of a GET input; lists are comma-separated (see `queryList`). */
export function queryParameters(input: JsonSchema): QueryParameter[] {
  const properties = isSchema(input.properties) ? input.properties : undefined;
  if (!properties) {
    // Not a plain object (a record, a union, anything): the whole query string is the input.
    if (Object.keys(input).length === 0 || (input.type === 'object' && input.additionalProperties === false)) return [];
    return [{ name: 'query', in: 'query', required: false, description: 'The query parameters, as an object.', schema: input, style: 'form', explode: true }];
  }
  const required = Array.isArray(input.required) ? input.required : [];
  const parameters = Object.entries(properties).map(([name, property]): QueryParameter => {
    const { description, ...schema } = isSchema(property) ? property : {};
    const notes = typeof description === 'string' ? [description] : [];
    const list = schema.type === 'array';
    if (list && !notes.some((n) => /comma/i.test(n))) notes.push('A comma-separated list.');
    if (schema.type === 'boolean') notes.push('`true` or `false`.');
    return {
      name,
      in: 'query',
      required: required.includes(name),
      ...(notes.length ? { description: notes.join(' ') } : {}),
      schema,
      ...(list ? { style: 'form' as const, explode: false } : {}),
    };
  });
  if (isSchema(input.additionalProperties)) {
    parameters.push({
      name: 'additional',
      in: 'query',
      required: false,
      description: 'Further query parameters this interface accepts.',
      schema: { type: 'object', additionalProperties: input.additionalProperties },
      style: 'form',
      explode: true,
    });
  }
  return parameters;
}

/** Component responses for every error status of the error table, each naming its codes. */
function errorResponses(): { responses: OpenApiDocument['components']['responses']; refs: Map<number, string> } {
  const byStatus = new Map<number, string[]>();
  for (const [name, entry] of Object.entries(ERRORS)) {
    if (entry.http < 400) continue;
    byStatus.set(entry.http, [...(byStatus.get(entry.http) ?? []), `${entry.code} ${name} (${entry.description})`]);
  }
  const responses: OpenApiDocument['components']['responses'] = {};
  const refs = new Map<number, string>();
  for (const status of [...byStatus.keys()].sort((a, b) => a - b)) {
    const component = ERROR_RESPONSE_NAMES[status] ?? `Status${status}`;
    responses[component] = {
      description: `errorCode: ${(byStatus.get(status) ?? []).join('; ')}.`,
      content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorEnvelope' } } },
      ...(status === 429 ? { headers: { 'Retry-After': { description: 'Seconds to wait before retrying.', schema: { type: 'integer' } } } } : {}),
    };
    refs.set(status, `#/components/responses/${component}`);
  }
  return { responses, refs };
}

const ERROR_ENVELOPE: JsonSchema = {
  type: 'object',
  description: 'A failed call. errorMsg names the field, what was found and what is accepted; hint says how to recover.',
  required: ['errorCode', 'errorMsg'],
  properties: {
    errorCode: { type: 'integer', description: 'Non-zero code from the error table (docs/api.md).' },
    errorMsg: { type: 'string' },
    hint: { type: 'string' },
  },
};

function successEnvelope(data: JsonSchema, topLevel: readonly string[] = []): JsonSchema {
  const dataProps = (data.properties ?? {}) as Record<string, JsonSchema>;
  const lifted = Object.fromEntries(topLevel.filter((k) => k in dataProps).map((k) => [k, dataProps[k] as JsonSchema]));
  return {
    type: 'object',
    required: ['errorCode', 'errorMsg', ...Object.keys(lifted), 'data'],
    properties: { errorCode: { const: 0 }, errorMsg: { const: 'OK' }, ...lifted, data },
  };
}

/** Information-level errors (HTTP 200, non-zero errorCode), named in every 200 response. */
const INFO_LEVEL_ERRORS = Object.entries(ERRORS)
  .filter(([, e]) => e.http === 200 && e.code !== 0)
  .map(([name, e]) => `${e.code} ${name}`)
  .join(', ');

/** Builds the OpenAPI 3.1 document for the given interfaces. Never throws on a schema: see `x-schema-error`. */
export function buildOpenApiDocument(interfaces: readonly InterfaceDefinition[], info: OpenApiInfo): OpenApiDocument {
  const { responses: errorComponents, refs: errorRefs } = errorResponses();
  const doc: OpenApiDocument = {
    openapi: '3.1.0',
    info: { ...info },
    tags: [],
    security: [{ [BEARER_SCHEME]: [] }],
    paths: {},
    components: {
      // The envelope of any success, whatever its data: each operation's own 200 answer types its data (successEnvelope below).
      schemas: { ErrorEnvelope: ERROR_ENVELOPE, SuccessEnvelope: successEnvelope({ description: 'Any JSON value.' }) },
      responses: errorComponents,
      securitySchemes: {
        [BEARER_SCHEME]: { type: 'http', scheme: 'bearer', description: ERRORS.UNAUTHORIZED.hint },
      },
    },
  };
  const usedIds = new Set<string>();
  const tags = new Set<string>();

  for (const def of interfaces) {
    const base = operationIdFor(def.path);
    let operationId = base;
    for (let n = 2; usedIds.has(operationId); n++) operationId = `${base}${n}`;
    usedIds.add(operationId);
    const isPublic = def.permission === null;
    const problems: string[] = [];
    const convert = (schema: z.ZodType, io: 'input' | 'output', owner: string): JsonSchema => {
      try {
        return hoistDefinitions(toJsonSchema(schema, io), owner, doc.components.schemas);
      } catch (err) {
        problems.push(`${io}: ${(err as Error).message}`);
        return {};
      }
    };

    const input = convert(def.input, 'input', `${operationId}.input`);
    const data = convert(def.output, 'output', `${operationId}.output`);
    const responses: Operation['responses'] = {
      '200': {
        description: `Success: errorCode 0 with the data. Information-level errors (${INFO_LEVEL_ERRORS}) also answer 200, with the error envelope.`,
        content: { 'application/json': { schema: successEnvelope(data, def.topLevel) } },
      },
    };
    for (const [status, ref] of errorRefs) {
      if (status === 403 && isPublic) continue;
      responses[String(status)] = { $ref: ref };
    }

    const parameters = def.method === 'GET' ? queryParameters(input) : [];
    const operation: Operation = {
      operationId,
      summary: def.summary,
      ...(def.tags?.length ? { tags: [...def.tags] } : {}),
      security: isPublic ? [] : [{ [BEARER_SCHEME]: [] }],
      ...(parameters.length ? { parameters } : {}),
      ...(def.method === 'POST'
        ? { requestBody: { required: Array.isArray(input.required) && input.required.length > 0, content: { 'application/json': { schema: input } } } }
        : {}),
      responses,
    };
    if (problems.length) operation['x-schema-error'] = problems.join('; ');
    for (const tag of def.tags ?? []) tags.add(tag);
    doc.paths[def.path] = { ...doc.paths[def.path], [def.method === 'GET' ? 'get' : 'post']: operation };
  }
  doc.tags = [...tags].map((name) => ({ name }));
  return doc;
}

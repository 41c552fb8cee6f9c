/**
 * Serves a RestRegistry under a prefix (`/api/v1`) on a role's own fastify
 * app: one route per operation.
 *
 * Per request: the caller is authenticated in `onRequest`, before the body
 * is read (a refused client with a body on its way gets `connection:
 * close`); an operation that needs a permission answers 401 to an anonymous
 * caller, 403 `forbidden` to a role without it, 403 `operator-required` to a
 * token that needs an operator for a high-risk operation and sent none; the
 * body is read up to the operation's limit (413), its nesting checked on the
 * raw text, and once parsed every string checked to be well-formed Unicode
 * (core/http/json-body.ts), then path parameters, query and body are validated
 * (400 with one `errors` entry per bad field, said in sentences: core/rest/plain-words.ts) and the handler runs. Every
 * failure is an RFC 9457 problem document; a GatewayError of the input from a
 * shared component is the problem of its status; a database that does not
 * answer is 503 with Retry-After (logged as a warning); an unexpected exception is
 * a 500 that says nothing about its cause (logged), and no input reaches one
 * by design.
 */
import { Readable } from 'node:stream';
import Fastify, { LogController, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import type { z } from 'zod';
import { DEPTH_ACCEPTED, installJsonBodyParser, JsonBodyError } from '../http/json-body.js';
import { MAX_JSON_DEPTH } from '../http/json-depth.js';
import { findIllFormed, illFormedField, notTextAccepted, notTextMessage, type IllFormedAt } from '../values/well-formed.js';
import { GatewayError, quote } from '../interfaces/errors.js';
import { DatabaseUnavailableError } from '../store/database-unavailable.js';
import { formatPath } from '../interfaces/field-path.js';
import { foundValue } from '../interfaces/schema-errors.js';
import { detailInWords, issueInWords } from './plain-words.js';
import type { AnyRestOperation, RestPrincipal, RestRegistry, RestRequestInfo, RestResult } from './operation.js';
import type { RefuseRequest } from '../http/rate-limit.js';
import { drainsRefusedBody } from '../http/refused-body.js';
import type {} from '../http/request-callers.js';
import { ProblemError, type ProblemDocument, type ProblemFieldError, type ProblemTypeSlug } from './problem.js';

export const REST_PREFIX = '/api/v1';
/** The body limit of an operation that does not set its own. */
export const DEFAULT_REST_BODY_LIMIT = 64 * 1024;
export const PROBLEM_CONTENT_TYPE = 'application/problem+json';
/** Problem type URIs are this base plus the slug; docs/rest-surface.md describes each. */
export const PROBLEM_TYPE_BASE = 'https://cnc-gateway.dev/problems/';
/** Longest path parameter the router reads; ids are far shorter, their schemas say how much. */
export const MAX_PATH_PARAMETER_LENGTH = 256;
/** Field errors listed in one problem; the rest are counted in `detail`. */
export const MAX_FIELD_ERRORS = 20;
/** Characters of a framework message kept in a problem. */
const FRAMEWORK_MESSAGE_MAX_CHARS = 200;
const UNSAFE_RESULT = 'the operation answered a status it does not declare';

/** The document for a problem raised while serving `instance`. */
export function problemDocument(problem: ProblemError, instance: string): ProblemDocument {
  return {
    type: `${PROBLEM_TYPE_BASE}${problem.slug}`,
    title: problem.title,
    status: problem.status,
    detail: problem.detail,
    instance,
    ...(problem.errors?.length ? { errors: problem.errors } : {}),
    ...problem.extensions,
  };
}

function pathOf(request: FastifyRequest): string {
  const path = request.url.split('?')[0] ?? request.url;
  return path.length > 512 ? `${path.slice(0, 512)}…` : path;
}

export function sendProblem(request: FastifyRequest, reply: FastifyReply, problem: ProblemError): FastifyReply {
  if (problem.retryAfterSec !== undefined) reply.header('retry-after', String(problem.retryAfterSec));
  if (problem.status === 401) reply.header('www-authenticate', 'Bearer realm="program-service"');
  return reply.code(problem.status).type(PROBLEM_CONTENT_TYPE).send(problemDocument(problem, pathOf(request)));
}

/** Answers a request over a rate limit (core/http/rate-limit.ts): the 429 problem `too-many-requests` with Retry-After. */
export const refuseRateLimitedProblem: RefuseRequest = (request, reply, refusal) =>
  sendProblem(request, reply, new ProblemError('too-many-requests', refusal.message, { retryAfterSec: refusal.retryAfterSec }));

/** The problem for a string that is not text (a lone surrogate, U+0000) at `at` of the request's `location` (`body`, `query`, `path`). */
function notTextProblem(location: string, at: IllFormedAt, what: string): ProblemError {
  const field = at.path.length ? `${location}.${illFormedField(at)}` : location;
  const message = notTextMessage(at);
  const detail = at.reason === 'nul' ? `${what}: ${field} ${message}` : `${what}: ${field} is ${message}`;
  return new ProblemError('invalid-request', detail, { errors: [{ field, message, accepted: notTextAccepted(at) }] });
}

/**
 * The query string and path parameters refused before any schema sees them
 * when a value (or a query key) is not text: `%00` decodes to U+0000, which
 * no text column of either engine takes (core/values/well-formed.ts).
 */
function urlProblem(request: FastifyRequest): ProblemError | undefined {
  // Copied into plain objects: the router's and the query parser's objects have prototypes of their own, which the walk does not enter.
  const inPath = findIllFormed({ ...(request.params as object) });
  if (inPath) return notTextProblem('path', inPath, 'request path');
  const inQuery = findIllFormed({ ...(request.query as object) });
  return inQuery ? notTextProblem('query', inQuery, 'request query') : undefined;
}

/** Seconds a client is told to wait when the database does not answer. */
export const DATABASE_RETRY_AFTER_SEC = 5;

/**
 * A database that does not answer (a PostgreSQL server away,
 * core/store/database-unavailable.ts): 503 `service-unavailable` with
 * Retry-After, as the cloud answers, not a 500; undefined for anything else.
 */
function databaseProblem(err: unknown): ProblemError | undefined {
  if (!(err instanceof DatabaseUnavailableError)) return undefined;
  return new ProblemError('service-unavailable', `the service cannot reach its database now (${err.reason}); retry in a moment`, { retryAfterSec: DATABASE_RETRY_AFTER_SEC });
}

/** The problem for a body the JSON parser refused (core/http/json-body.ts). */
function bodyProblem(err: JsonBodyError): ProblemError {
  if (err.problem === 'depth') {
    return new ProblemError('invalid-request', `request body: JSON nested deeper than ${MAX_JSON_DEPTH} levels`, { errors: [{ field: 'body', message: 'nested too deep', accepted: DEPTH_ACCEPTED }] });
  }
  if (err.problem === 'ill-formed' && err.at) return notTextProblem('body', err.at, 'request body');
  return new ProblemError('invalid-request', 'request body: not valid JSON', { errors: [{ field: 'body', message: 'not valid JSON', accepted: 'a JSON document' }] });
}

/** The ProblemError for anything that failed while a request was read or routed. */
function requestProblem(err: Error & { statusCode?: number; code?: string }, request: FastifyRequest): ProblemError {
  if (err instanceof ProblemError) return err;
  if (err instanceof JsonBodyError) return bodyProblem(err);
  const unavailable = databaseProblem(err);
  if (unavailable) return unavailable;
  if (err.statusCode === 413) {
    const limit = request.routeOptions.bodyLimit ?? DEFAULT_REST_BODY_LIMIT;
    return new ProblemError('payload-too-large', `request body: larger than the ${limit}-byte limit of ${request.method} ${quote(pathOf(request))}`, {
      errors: [{ field: 'body', message: `larger than ${limit} bytes`, accepted: `at most ${limit} bytes` }],
    });
  }
  if (err.statusCode === 415) {
    return new ProblemError('invalid-request', 'request body: unsupported content type; send application/json', {
      errors: [{ field: 'header.content-type', message: 'unsupported content type', accepted: 'application/json' }],
    });
  }
  if (err.statusCode !== undefined && err.statusCode >= 400 && err.statusCode < 500) {
    const message = err.message.length > FRAMEWORK_MESSAGE_MAX_CHARS ? `${err.message.slice(0, FRAMEWORK_MESSAGE_MAX_CHARS)}…` : err.message;
    return new ProblemError('invalid-request', `request: ${message}`, { errors: [{ field: 'body', message }] });
  }
  return new ProblemError('internal-error', 'the request failed unexpectedly; the failure is logged');
}

/**
 * Builds a role's fastify app (not yet listening): depth-checked JSON,
 * problem documents for every failure; HTTPS with `options.https` (the role
 * runtime's TLS pair, RoleRuntime.serverOptions).
 */
export function createRestApp(logger: Logger, options: { trustProxy?: false | string[]; https?: { cert: Buffer; key: Buffer } } = {}): FastifyInstance {
  const app = Fastify({
    ...(options.https ? { https: options.https } : {}),
    loggerInstance: logger,
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: DEFAULT_REST_BODY_LIMIT,
    trustProxy: options.trustProxy ?? false,
    // A path that the router cannot read (bad percent-encoding, a parameter over its length limit) is a bad request.
    frameworkErrors: (err, request, reply) => {
      const tooLong = err.code === 'FST_ERR_MAX_PARAM_LENGTH';
      const message = tooLong ? `a path parameter is longer than ${MAX_PATH_PARAMETER_LENGTH} characters` : 'the path is not a valid URL';
      const accepted = tooLong ? `at most ${MAX_PATH_PARAMETER_LENGTH} characters` : 'a percent-encoded URL path';
      return sendProblem(request, reply, new ProblemError('invalid-request', message, { errors: [{ field: 'path', message, accepted }] }));
    },
    routerOptions: { maxParamLength: MAX_PATH_PARAMETER_LENGTH },
  }) as unknown as FastifyInstance;
  app.decorateRequest('restPrincipal', null);
  installJsonBodyParser(app, { emptyBody: 'undefined' });
  app.setErrorHandler((err: Error & { statusCode?: number }, request, reply) => {
    const problem = requestProblem(err, request);
    if (problem.status >= 500 && !(err instanceof DatabaseUnavailableError)) request.log.error({ err, url: pathOf(request) }, 'request failed');
    return sendProblem(request, reply, problem);
  });
  app.setNotFoundHandler((request, reply) =>
    sendProblem(request, reply, new ProblemError('not-found', `no operation at ${request.method} ${quote(pathOf(request))}`)),
  );
  return app;
}

/** `/programs/{id}/versions` → `/programs/:id/versions`. */
export function routePath(path: string): string {
  return path.replace(/\{([A-Za-z0-9_]+)\}/g, ':$1');
}

function requestInfo(request: FastifyRequest): RestRequestInfo {
  return { method: request.method, path: pathOf(request), headers: request.headers, sourceIp: request.ip, secure: request.protocol === 'https' };
}


/** Field errors for zod issues at `location` (`path`, `query`, `body`): the field's path, a sentence, and the accepted values where the schema lists them. */
function fieldErrors(location: string, issues: readonly z.core.$ZodIssue[], raw: unknown): ProblemFieldError[] {
  return issues.slice(0, MAX_FIELD_ERRORS).map((issue) => {
    const field = issue.path.length ? `${location}.${formatPath(issue.path)}` : location;
    const message = issueInWords(location, issue, foundValue(issue, raw));
    const values = 'values' in issue && Array.isArray(issue.values) ? issue.values.slice(0, 20).map(String) : undefined;
    return { field, message, ...(values?.length ? { accepted: values.join(', ') } : {}) };
  });
}

function parseInput<S extends z.ZodType | undefined>(schema: S, raw: unknown, location: string, errors: ProblemFieldError[], count: { issues: number }): unknown {
  if (!schema) return location === 'body' ? raw : {};
  const parsed = schema.safeParse(raw ?? (location === 'body' ? undefined : {}), { reportInput: true });
  if (parsed.success) return parsed.data;
  count.issues += parsed.error.issues.length;
  errors.push(...fieldErrors(location, parsed.error.issues, raw));
  return undefined;
}

/** Adds one route per operation of `registry` under `prefix`. */
export function serveRest(app: FastifyInstance, registry: RestRegistry, options: { prefix?: string } = {}): void {
  const prefix = options.prefix ?? REST_PREFIX;
  for (const op of registry.list()) {
    app.route({
      method: op.method,
      url: `${prefix}${routePath(op.path)}`,
      bodyLimit: op.bodyLimit ?? DEFAULT_REST_BODY_LIMIT,
      onRequest: async (request, reply) => {
        const refused = await admit(registry, op, request);
        if (refused) {
          if (!drainsRefusedBody(request)) reply.header('connection', 'close');
          return sendProblem(request, reply, refused);
        }
      },
      handler: (request, reply) => handle(op, request, reply),
    });
  }
}

/** Authenticates and authorises the caller; returns the refusal, or null to go on. */
async function admit(registry: RestRegistry, op: AnyRestOperation, request: FastifyRequest): Promise<ProblemError | null> {
  let principal: RestPrincipal | null;
  try {
    principal = await registry.access.authenticate(requestInfo(request));
  } catch (err) {
    // A public operation (login) is served whatever stale or refused credentials come with it.
    if (op.permission === null && err instanceof ProblemError) principal = null;
    else if (err instanceof ProblemError) return err;
    else if (err instanceof DatabaseUnavailableError) {
      request.log.warn({ reason: err.reason }, 'authentication: the database does not answer');
      return databaseProblem(err) as ProblemError;
    } else {
      request.log.error({ err }, 'authentication failed unexpectedly');
      return new ProblemError('internal-error', 'authentication failed unexpectedly; the failure is logged');
    }
  }
  request.restPrincipal = principal;
  if (op.permission === null) return null;
  if (!principal) return new ProblemError('unauthenticated', 'sign in (POST /api/v1/auth/login) or send a service token as Authorization: Bearer');
  if (!principal.permissions.has(op.permission)) {
    await registry.reportRefusal({ principal, operation: op, slug: 'forbidden', request: requestInfo(request) });
    return new ProblemError('forbidden', `role '${principal.role}' does not permit ${op.method} ${op.path} (needs ${op.permission})`, {
      extensions: { requiredPermission: op.permission, role: principal.role },
    });
  }
  if (op.highRisk && principal.requiresOperator && !principal.onBehalfOf) {
    await registry.reportRefusal({ principal, operation: op, slug: 'operator-required', request: requestInfo(request) });
    return new ProblemError('operator-required', `${op.method} ${op.path} is a high-risk operation and this token requires an operator: send X-On-Behalf-Of: <operator name>`, {
      errors: [{ field: 'header.x-on-behalf-of', message: 'missing', accepted: 'the name of the human operator, 1..128 printable characters' }],
    });
  }
  return null;
}

/** The problem slug of each client-error status a shared component's GatewayError can carry. */
const SLUG_OF_STATUS: Readonly<Record<number, ProblemTypeSlug>> = {
  400: 'invalid-request', 401: 'unauthenticated', 403: 'forbidden', 404: 'not-found', 409: 'conflict', 413: 'payload-too-large', 429: 'too-many-requests', 503: 'service-unavailable',
};

/**
 * A handler's failure that the input caused deeper down, in a component
 * shared with the gateway that speaks its error table (the audit chain
 * refusing a field, a time filter): a GatewayError with a client-error
 * status is that status's problem, not an internal error. Undefined for
 * anything else, which is a fault.
 */
function inputProblem(err: unknown): ProblemError | undefined {
  if (!(err instanceof GatewayError)) return undefined;
  const slug = SLUG_OF_STATUS[err.httpStatus];
  if (!slug) return undefined;
  return new ProblemError(slug, err.message, err.retryAfterSec !== undefined ? { retryAfterSec: err.retryAfterSec } : {});
}

async function handle(op: AnyRestOperation, request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
  const notText = urlProblem(request);
  if (notText) return sendProblem(request, reply, notText);
  const errors: ProblemFieldError[] = [];
  const count = { issues: 0 };
  const params = parseInput(op.params, request.params, 'path', errors, count);
  const query = parseInput(op.query, request.query, 'query', errors, count);
  const body = parseInput(op.body, request.body, 'body', errors, count);
  if (count.issues > 0) {
    return sendProblem(request, reply, new ProblemError('invalid-request', detailInWords(errors.map((e) => e.message), count.issues), { errors }));
  }
  let result: RestResult;
  try {
    result = await op.handler(
      { params: params as never, query: query as never, body: body as never },
      { principal: request.restPrincipal, request: requestInfo(request), logger: request.log as unknown as Logger },
    );
  } catch (err) {
    const problem = err instanceof ProblemError ? err : (inputProblem(err) ?? databaseProblem(err));
    if (problem) {
      if (problem.status === 503 && err instanceof DatabaseUnavailableError) request.log.warn({ operation: op.operationId, reason: err.reason }, 'the database does not answer');
      return sendProblem(request, reply, problem);
    }
    request.log.error({ err, operation: op.operationId }, 'operation failed unexpectedly');
    return sendProblem(request, reply, new ProblemError('internal-error', `${op.operationId} failed unexpectedly; the failure is logged`));
  }
  return sendResult(op, request, reply, result);
}

function isAsyncIterable(value: unknown): value is AsyncIterable<string> {
  return typeof value === 'object' && value !== null && Symbol.asyncIterator in value;
}

function sendResult(op: AnyRestOperation, request: FastifyRequest, reply: FastifyReply, result: RestResult): FastifyReply {
  const spec = op.responses[result.status];
  if (!spec) {
    request.log.error({ operation: op.operationId, status: result.status }, UNSAFE_RESULT);
    return sendProblem(request, reply, new ProblemError('internal-error', `${op.operationId} failed unexpectedly; the failure is logged`));
  }
  let chosenType: string | undefined;
  for (const [name, value] of Object.entries(result.headers ?? {})) {
    if (value === undefined) continue;
    if (name.toLowerCase() === 'content-type') chosenType = String(value);
    else reply.header(name, value);
  }
  reply.code(result.status);
  if (result.body === undefined || result.status === 204 || result.status === 304) return reply.send();
  const contentType = chosenType ?? spec.contentType ?? 'application/json';
  if (Buffer.isBuffer(result.body)) return reply.type(contentType).send(result.body);
  if (isAsyncIterable(result.body)) return reply.type(contentType).send(Readable.from(result.body));
  return reply.type(contentType === 'application/json' ? 'application/json; charset=utf-8' : contentType).send(contentType.startsWith('application/json') ? JSON.stringify(result.body) : result.body);
}

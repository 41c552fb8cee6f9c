/**
 * Serves the interface registry over HTTP: one fastify route per interface.
 * GET interfaces take their input from the query string, POST interfaces
 * from the JSON body. Success is `{errorCode: 0, errorMsg: 'OK', data}`;
 * failure is `{errorCode, errorMsg, hint}` with the status from the error table.
 *
 * The caller is known before the body is read: every interface route
 * authenticates (credentials, IP white list) in its `onRequest` hook, so an
 * anonymous body is refused unread. A body is read up to the interface's
 * `bodyLimit`, its nesting depth is checked on the raw text, and only then is
 * it parsed; a string that is not well-formed Unicode is refused there too
 * (core/http/json-body.ts; docs/api.md, "Request pipeline and limits").
 */
import Fastify, { LogController, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import { GatewayError, quote, toGatewayError } from '../interfaces/errors.js';
import { drainsRefusedBody } from './refused-body.js';
import { ANONYMOUS, DEFAULT_BODY_LIMIT, type InterfaceDefinition, type InterfaceRegistry } from '../interfaces/registry.js';
import { installJsonBodyParser } from './json-body.js';
import type { RefuseRequest } from './rate-limit.js';
import type {} from './request-callers.js';

/** Characters of a framework's error message kept in an answer. */
const FRAMEWORK_MESSAGE_MAX_CHARS = 200;

function sendError(reply: FastifyReply, error: GatewayError): FastifyReply {
  if (error.retryAfterSec !== undefined) reply.header('retry-after', String(error.retryAfterSec));
  return reply.code(error.httpStatus).send({ ...error.toBody(), hint: error.hint });
}

/** Answers a request over a rate limit (core/http/rate-limit.ts): 429 TOO_MANY_REQUESTS with Retry-After. */
export const refuseRateLimited: RefuseRequest = (_request, reply, refusal) =>
  sendError(reply, new GatewayError('TOO_MANY_REQUESTS', refusal.message, { retryAfterSec: refusal.retryAfterSec }));

/**
 * The GatewayError for anything that failed while a request was read or
 * routed: a body over the route's limit (413), bad JSON, a body nested too
 * deep or holding an ill-formed string (core/http/json-body.ts), a wrong content
 * type (400), or an unexpected failure (500).
 */
export function requestError(err: Error & { statusCode?: number }, request: FastifyRequest): GatewayError {
  if (err instanceof GatewayError) return err;
  if (err.statusCode === 413) {
    return new GatewayError('BODY_TOO_LARGE', `request body: larger than the ${request.routeOptions.bodyLimit ?? DEFAULT_BODY_LIMIT}-byte limit of ${quote(request.url.split('?')[0] ?? '')}`);
  }
  if (err.statusCode !== undefined && err.statusCode >= 400 && err.statusCode < 500) {
    const message = err.message.length > FRAMEWORK_MESSAGE_MAX_CHARS ? `${err.message.slice(0, FRAMEWORK_MESSAGE_MAX_CHARS)}…` : err.message;
    return new GatewayError('INVALID_PARAMETER', `request body: ${message}`);
  }
  return toGatewayError(err);
}

/**
 * Builds the fastify app (not yet listening); with `options.https` (the role
 * runtime's TLS pair, RoleRuntime.serverOptions) it serves HTTPS.
 */
export function createHttpApp(logger: Logger, trustProxy: false | string[] = false, options: { https?: { cert: Buffer; key: Buffer } } = {}): FastifyInstance {
  const app = Fastify({
    ...(options.https ? { https: options.https } : {}),
    loggerInstance: logger,
    // Per-request logs would dominate at fleet scale; failures are logged where they are handled.
    logController: new LogController({ disableRequestLogging: true }),
    // Routes that read a larger body say so themselves (interfaces with bodyLimit, /mcp).
    bodyLimit: DEFAULT_BODY_LIMIT,
    // Proxies are not trusted by default; see docs/security.md.
    trustProxy,
  }) as unknown as FastifyInstance;
  app.decorateRequest('principal', null);
  installJsonBodyParser(app);
  app.setErrorHandler((err: Error & { statusCode?: number }, request, reply) => {
    const error = requestError(err, request);
    if (error.errorName === 'UNKNOWN_ERROR') request.log.error({ err, url: request.url }, 'request failed');
    return sendError(reply, error);
  });
  app.setNotFoundHandler((request, reply) =>
    sendError(reply, new GatewayError('NOT_FOUND', `no interface at ${request.method} ${quote(request.url.split('?')[0] ?? '')}`)),
  );
  return app;
}

/**
 * Authenticates the caller of `path` from the request's headers and source
 * address (no body needed) and puts the principal on the request. A refusal
 * goes to the error log and is returned for the caller to answer in its own
 * format; if a body is on its way, the connection is closed after that
 * answer, so the refused client stops sending instead of the gateway reading
 * the body only to drop it.
 */
export async function authenticateRequest(
  registry: InterfaceRegistry,
  request: FastifyRequest,
  reply: FastifyReply,
  path: string,
  def: InterfaceDefinition | undefined,
): Promise<GatewayError | null> {
  try {
    request.principal = await registry.accessPolicy.authenticate({ headers: request.headers, sourceIp: request.ip, path }, def);
    return null;
  } catch (err) {
    const error = toGatewayError(err);
    if (error.errorName === 'UNKNOWN_ERROR') request.log.error({ err, path }, 'authentication failed unexpectedly');
    registry.reportError(path, error, { principal: ANONYMOUS, sourceIp: request.ip, logger: request.log as unknown as Logger });
    if (!drainsRefusedBody(request)) reply.header('connection', 'close');
    return error;
  }
}


/** Adds one route per registered interface. */
export function serveInterfaces(app: FastifyInstance, registry: InterfaceRegistry): void {
  for (const def of registry.list()) {
    app.route({
      method: def.method,
      url: def.path,
      bodyLimit: def.bodyLimit ?? DEFAULT_BODY_LIMIT,
      onRequest: async (request, reply) => {
        const refused = await authenticateRequest(registry, request, reply, def.path, def);
        if (refused) return sendError(reply, refused);
      },
      handler: (request, reply) => handle(registry, def, request, reply),
    });
  }
}

async function handle(
  registry: InterfaceRegistry,
  def: InterfaceDefinition,
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<FastifyReply> {
  // The query as a plain object: the parser's has a prototype of its own, which the check for text that is not (core/values/well-formed.ts) does not enter.
  const input = def.method === 'GET' ? { ...(request.query as object) } : (request.body ?? {});
  const principal = request.principal ?? ANONYMOUS;
  const result = await registry.call(def, input, { principal, sourceIp: request.ip, logger: request.log as unknown as Logger });
  if (!result.ok) return sendError(reply, result.error);
  return reply.code(200).send({ errorCode: 0, errorMsg: 'OK', ...liftedFields(def, result.data), data: result.data });
}

/** The fields `def.topLevel` names, taken from the data. */
function liftedFields(def: InterfaceDefinition, data: unknown): Record<string, unknown> {
  if (!def.topLevel || data === null || typeof data !== 'object') return {};
  const out: Record<string, unknown> = {};
  for (const key of def.topLevel) if (key in data) out[key] = (data as Record<string, unknown>)[key];
  return out;
}

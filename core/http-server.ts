/**
 * Serves the interface registry over HTTP: one fastify route per interface.
 * GET interfaces take their input from the query string, POST interfaces
 * from the JSON body. Success is `{errorCode: 0, errorMsg: 'OK', data}`;
 * failure is `{errorCode, errorMsg, hint}` with the status from the error table.
 */
import Fastify, { LogController, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import { GatewayError, toGatewayError } from './errors.js';
import type { InterfaceDefinition, InterfaceRegistry } from './interfaces.js';

function sendError(reply: FastifyReply, error: GatewayError): FastifyReply {
  if (error.retryAfterSec !== undefined) reply.header('retry-after', String(error.retryAfterSec));
  return reply.code(error.httpStatus).send({ ...error.toBody(), hint: error.hint });
}

/** Builds the fastify app (not yet listening). */
export function createHttpApp(logger: Logger, trustProxy: false | string[] = false): FastifyInstance {
  const app = Fastify({
    loggerInstance: logger,
    // Per-request logs would dominate at fleet scale; failures are logged where they are handled.
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: 8 * 1024 * 1024,
    // Proxies are not trusted by default; see docs/security.md.
    trustProxy,
  }) as unknown as FastifyInstance;
  app.setErrorHandler((err: Error & { statusCode?: number; validation?: unknown }, request, reply) => {
    // fastify's own errors: bad JSON, wrong content type, body too large.
    if (err.statusCode && err.statusCode >= 400 && err.statusCode < 500) {
      return sendError(reply, new GatewayError('INVALID_PARAMETER', `request body: ${err.message}`));
    }
    request.log.error({ err, url: request.url }, 'request failed');
    return sendError(reply, toGatewayError(err));
  });
  app.setNotFoundHandler((request, reply) =>
    sendError(reply, new GatewayError('NOT_FOUND', `no interface at ${request.method} ${request.url.split('?')[0]}`)),
  );
  return app;
}

/** Adds one route per registered interface. */
export function serveInterfaces(app: FastifyInstance, registry: InterfaceRegistry): void {
  for (const def of registry.list()) {
    app.route({
      method: def.method,
      url: def.path,
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
  const ctxBase = { sourceIp: request.ip, logger: request.log as unknown as Logger };
  let principal;
  try {
    principal = await registry.accessPolicy.authenticate({ headers: request.headers, sourceIp: request.ip, path: def.path }, def);
  } catch (err) {
    const error = toGatewayError(err);
    registry.reportError(def.path, error, { ...ctxBase, principal: { username: null, isAdmin: false, method: 'none' } });
    return sendError(reply, error);
  }
  const input = def.method === 'GET' ? request.query : (request.body ?? {});
  const result = await registry.call(def.path, input, { ...ctxBase, principal });
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

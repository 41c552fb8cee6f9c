/**
 * A body an `/mcp` endpoint (the gateway's and the cloud's) could not take,
 * answered as JSON-RPC: with the codes the MCP SDK's transport uses for a
 * body too large (413, -32000), of another content type (415, -32000), not
 * JSON or nested too deep (400, -32700 parse error); and for a string that
 * is not well-formed Unicode (core/http/json-body.ts), 400 with -32602 (invalid
 * params) when it is in `params`, else -32600 (invalid request), naming the
 * field, with the request's id when it has a usable one.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { requestError } from '../http/http-server.js';
import { JsonBodyError } from '../http/json-body.js';
import { illFormedLine, isWellFormedText } from '../values/well-formed.js';

type JsonRpcId = string | number | null;

/** The id of a single JSON-RPC request, when it is one a response may repeat. */
function requestId(body: unknown): JsonRpcId {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return null;
  const id = (body as { id?: unknown }).id;
  if (typeof id === 'number' && Number.isFinite(id)) return id;
  return typeof id === 'string' && isWellFormedText(id) ? id : null;
}

/** Status, JSON-RPC code, message and id of the answer to a refused body. */
function answerFor(err: Error & { statusCode?: number }, request: FastifyRequest): [number, number, string, JsonRpcId] {
  if (err instanceof JsonBodyError && err.problem === 'ill-formed' && err.at) {
    const path = err.at.path;
    // A batch names its element first: [2].params.arguments.x
    const inParams = path[0] === 'params' || (typeof path[0] === 'number' && path[1] === 'params');
    return [400, inParams ? -32602 : -32600, `${inParams ? 'Invalid params' : 'Invalid Request'}: ${illFormedLine(err.at)}`, requestId(err.body)];
  }
  const error = requestError(err, request);
  if (error.errorName === 'BODY_TOO_LARGE') return [413, -32000, `Payload Too Large: ${error.message}`, null];
  if (err.statusCode === 415) return [415, -32000, 'Unsupported Media Type: Content-Type must be application/json', null];
  if (error.errorName === 'INVALID_PARAMETER') return [400, -32700, `Parse error: ${error.message}`, null];
  return [500, -32603, 'Internal error', null];
}

/** The route error handler of an `/mcp` endpoint: failures before the JSON-RPC is handled. */
export function sendMcpBodyError(err: Error & { statusCode?: number }, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const [status, code, message, id] = answerFor(err, request);
  if (status === 500) request.log.error({ err, url: request.url }, 'mcp request failed');
  return reply.code(status).send({ jsonrpc: '2.0', error: { code, message }, id });
}

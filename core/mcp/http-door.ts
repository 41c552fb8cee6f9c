/**
 * The one HTTP door of an MCP endpoint, for the gateway's /mcp (the mcp
 * plugin) and the cloud's (the cloud-mcp plugin). Stateless Streamable HTTP:
 * every POST gets a new SDK server and transport, closed when the response
 * is written; GET and DELETE answer 405 (no stream to open, no session to
 * end).
 *
 * What the door does the same for both, in this order:
 * - Origin and Host allow-lists, from the headers, before a byte of the
 *   body is read: a browser page of another origin must not drive the tools
 *   (DNS rebinding); refused with 403 and the gateway's error body;
 * - the surface's own admission (`admit`, e.g. the gateway's credentials),
 *   also before the body;
 * - the body, up to `bodyLimit` (MCP_BODY_LIMIT), read as every surface
 *   reads JSON; a body that cannot be taken is answered as JSON-RPC
 *   (core/mcp/body-errors.ts);
 * - the surface's fast path, if any (the cloud answers a plain tools/call
 *   itself), else the SDK's web-standard transport with the parsed body;
 * - the answer completed with the serialised answers it holds
 *   (core/mcp/frozen-answers.ts) and written as one buffer or in parts.
 */
import { Readable } from 'node:stream';
import type { ReadableStream as NodeReadableStream } from 'node:stream/web';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import { GatewayError, quote } from '../interfaces/errors.js';
import { sendMcpBodyError } from './body-errors.js';
import { splice, type Splices } from './frozen-answers.js';

/** Largest JSON-RPC request body an /mcp reads, in bytes: tool calls are small; this is generous (docs/api.md). */
export const MCP_BODY_LIMIT = 256 * 1024;

/** Above this many parts an answer is joined into one buffer before it is written. */
const MAX_WRITTEN_PARTS = 16;

/** A server for one request, and the serialised answers its response is completed with. */
export interface McpRequestServer {
  server: Server;
  splices: Splices;
}

/** A refusal with its own status and `WWW-Authenticate` challenge (an OAuth resource's RFC 6750 answer). */
export interface DoorRefusal {
  error: GatewayError;
  status: number;
  challenge: string;
}

export interface McpDoorOptions {
  path: string;
  /** MCP_BODY_LIMIT unless told. */
  bodyLimit?: number;
  /** Browser origins allowed; a request without Origin is allowed. */
  allowedOrigins: readonly string[];
  /** Host header values allowed; empty allows any. */
  allowedHosts: readonly string[];
  /** What the Origin refusal names as accepted when no origin is: e.g. `no browser origins (configure mcp.allowedOrigins)`. */
  noOriginsText: string;
  /** The surface's own check from the headers, after Origin and Host and before the body: an error refuses the request with its status. */
  admit?(request: FastifyRequest, reply: FastifyReply): Promise<GatewayError | DoorRefusal | null | undefined>;
  /**
   * Answers the request without an SDK server when it can: true when it sent
   * the answer. (Not the reply itself: a FastifyReply is thenable, and
   * awaiting it waits for the response and yields undefined.)
   */
  fastPath?(request: FastifyRequest, reply: FastifyReply): Promise<boolean>;
  /** The SDK server for one request, built with the door's one JSON Schema validator. */
  server(request: FastifyRequest, shared: { jsonSchemaValidator: AjvJsonSchemaValidator }): McpRequestServer | Promise<McpRequestServer>;
}

/** The refusal of a request: the gateway's error body with its hint; a 401 asks for a bearer token. */
function refuse(reply: FastifyReply, error: GatewayError, status = error.httpStatus, challenge = 'Bearer'): FastifyReply {
  if (status === 401 || challenge !== 'Bearer') reply.header('www-authenticate', challenge);
  return reply.code(status).send({ ...error.toBody(), hint: error.hint });
}

/** The request's headers as web `Headers`, which the SDK's web-standard transport reads. */
function webHeaders(request: FastifyRequest): Headers {
  const out = new Headers();
  for (const [name, value] of Object.entries(request.headers)) {
    if (value === undefined) continue;
    if (Array.isArray(value)) for (const v of value) out.append(name, v);
    else out.set(name, value);
  }
  return out;
}

/**
 * Writes the transport's web `Response` through fastify. JSON answers (the
 * only kind a stateless server gives) are read whole, completed with the
 * serialised answers they hold and sent as one buffer, or as its parts
 * around a large stored answer; anything else is streamed.
 */
async function sendResponse(reply: FastifyReply, response: Response, splices: Splices): Promise<FastifyReply> {
  reply.code(response.status);
  response.headers.forEach((value, name) => void (name === 'content-length' ? undefined : reply.header(name, value)));
  if (!response.body) return reply.send();
  // An SSE answer holding a stored answer is completed the same way (a JSON literal holds no line break).
  if (splices.size > 0 || response.headers.get('content-type')?.startsWith('application/json')) {
    const parts = splice(Buffer.from(await response.arrayBuffer()), splices);
    if (parts.length === 1) return reply.send(parts[0]);
    // Many small parts (an answer built of per-machine entries) are joined: one copy costs less than a write each.
    if (parts.length > MAX_WRITTEN_PARTS) return reply.send(Buffer.concat(parts));
    // Written part by part: a large stored literal goes to the socket as it is, without a copy per call.
    reply.header('content-length', parts.reduce((n, p) => n + p.length, 0));
    return reply.send(Readable.from(parts, { objectMode: false }));
  }
  return reply.send(Readable.fromWeb(response.body as NodeReadableStream<Uint8Array>));
}

/** Origin and Host against the allow-lists: the refusal, or null. */
function checkOrigin(request: FastifyRequest, o: McpDoorOptions): GatewayError | null {
  const origin = request.headers.origin;
  if (origin !== undefined && !o.allowedOrigins.includes(origin)) {
    return new GatewayError('FORBIDDEN', `Origin ${quote(origin)} is not allowed for ${o.path}; accepted: ${o.allowedOrigins.length ? o.allowedOrigins.join(', ') : o.noOriginsText}`);
  }
  const host = request.headers.host;
  if (o.allowedHosts.length && (host === undefined || !o.allowedHosts.includes(host))) {
    return new GatewayError('FORBIDDEN', `Host ${quote(host ?? '')} is not allowed for ${o.path}; accepted: ${o.allowedHosts.join(', ')}`);
  }
  return null;
}

/** Serves an MCP endpoint at `o.path` of `http`: POST through the door, GET and DELETE 405. */
export function serveMcpDoor(http: FastifyInstance, o: McpDoorOptions): void {
  // One validator for every per-request server: the SDK otherwise builds a new Ajv (with formats) per request.
  const shared = { jsonSchemaValidator: new AjvJsonSchemaValidator() };

  const admit = async (request: FastifyRequest, reply: FastifyReply) => {
    const refused = checkOrigin(request, o);
    if (refused) return refuse(reply, refused, 403);
    const unadmitted = await o.admit?.(request, reply);
    if (unadmitted) return unadmitted instanceof GatewayError ? refuse(reply, unadmitted) : refuse(reply, unadmitted.error, unadmitted.status, unadmitted.challenge);
  };

  const handle = async (request: FastifyRequest, reply: FastifyReply) => {
    if (await o.fastPath?.(request, reply)) return reply;
    const { server, splices } = await o.server(request, shared);
    // The web-standard transport with the already parsed body: the Node adapter would re-wrap
    // request and response in web streams, which costs more than the tool call for large results.
    const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    try {
      await server.connect(transport);
      const url = `http://${request.headers.host ?? 'localhost'}${request.url}`;
      const response = await transport.handleRequest(new Request(url, { method: request.method, headers: webHeaders(request) }), { parsedBody: request.body });
      return await sendResponse(reply, response, splices);
    } finally {
      void transport.close();
      void server.close();
    }
  };

  http.post(o.path, { bodyLimit: o.bodyLimit ?? MCP_BODY_LIMIT, onRequest: admit, errorHandler: sendMcpBodyError }, handle);
  const notAllowed = (_request: FastifyRequest, reply: FastifyReply) =>
    reply.code(405).header('allow', 'POST').send({ jsonrpc: '2.0', error: { code: -32000, message: 'Method not allowed: this MCP server is stateless; use POST.' }, id: null });
  http.get(o.path, notAllowed);
  http.delete(o.path, notAllowed);
}

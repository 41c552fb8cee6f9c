/**
 * The MCP server at POST /mcp, on the gateway's own port. Stateless: every
 * request gets a new server and transport, closed when the response closes.
 * Before any JSON-RPC is read, the request passes the same access policy as
 * /api (credentials, security control, IP white list) and the Origin/Host
 * allow-lists (DNS-rebinding protection).
 *
 * The tools served are those of the gateway's tool registry (`ctx.tools`,
 * core/mcp/tools.ts), read at request time: this plugin declares its 13
 * built-in tools (`tools: TOOLS`), and any other plugin may declare its own.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { Readable } from 'node:stream';
import type { ReadableStream as NodeReadableStream } from 'node:stream/web';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { definePlugin } from '../../core/plugin-host.js';
import type { GatewayContext } from '../../core/roles/gateway/context.js';
import { GatewayError, quote } from '../../core/errors.js';
import { authenticateRequest } from '../../core/http-server.js';
import { sendMcpBodyError } from '../../core/mcp/body-errors.js';
import { ANONYMOUS } from '../../core/interfaces.js';
import { FrozenAnswers, splice, type Splices } from '../../core/mcp/frozen-answers.js';
import { serverInstructions } from '../../core/mcp/instructions.js';
import { createToolDispatcher } from '../../core/mcp/dispatch.js';
import { TOOLS } from './tools.js';

export const MCP_PATH = '/mcp';

/** Largest JSON-RPC request body /mcp reads, in bytes: tool calls are small; this is generous (docs/api.md). */
export const MCP_BODY_LIMIT = 256 * 1024;

function sendError(reply: FastifyReply, error: GatewayError, status = error.httpStatus): FastifyReply {
  if (status === 401) reply.header('www-authenticate', 'Bearer');
  return reply.code(status).send({ ...error.toBody(), hint: error.hint });
}

/** The request's headers as web `Headers`, which the SDK's web-standard transport reads. */
function webHeaders(headers: IncomingHttpHeaders): Headers {
  const out = new Headers();
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    if (Array.isArray(value)) for (const v of value) out.append(name, v);
    else out.set(name, value);
  }
  return out;
}

/** Above this many parts an answer is joined into one buffer before it is written. */
const MAX_WRITTEN_PARTS = 16;

/**
 * Writes the transport's web `Response` through fastify. JSON answers (the
 * only kind this stateless server gives) are read whole, completed with the
 * serialised answers they hold (core/mcp/frozen-answers.ts: frozen ones and ones kept
 * in parts) and sent as one buffer, or as its parts around a large stored
 * answer; anything else is streamed.
 */
async function sendResponse(reply: FastifyReply, response: Response, splices: Splices): Promise<FastifyReply> {
  reply.code(response.status);
  response.headers.forEach((value, name) => void (name === 'content-length' ? undefined : reply.header(name, value)));
  if (!response.body) return reply.send();
  // An SSE answer holding a frozen answer is completed the same way (a JSON literal holds no line break).
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

/** Frozen answers of every request, serialised once. */
const frozenAnswers = new FrozenAnswers();

export const mcpPlugin = definePlugin<GatewayContext>({
  name: 'mcp',
  dependsOn: ['gateway-api', 'system', 'error-log'],
  tools: TOOLS,
  register(ctx) {
    // The same dispatch for every transport (core/mcp/dispatch.ts).
    const dispatcher = createToolDispatcher(ctx);
    // One validator for every per-request server: the SDK otherwise builds a new Ajv (with formats) per request.
    const jsonSchemaValidator = new AjvJsonSchemaValidator();
    const { allowedOrigins, allowedHosts } = ctx.config.mcp;

    /** Origin and Host allow-lists; a browser page on another origin must not drive the tools (DNS rebinding). */
    const checkOrigin = (request: FastifyRequest): GatewayError | null => {
      const origin = request.headers.origin;
      if (origin !== undefined && !allowedOrigins.includes(origin)) {
        return new GatewayError('FORBIDDEN', `Origin ${quote(origin)} is not allowed for ${MCP_PATH}; accepted: ${allowedOrigins.length ? allowedOrigins.join(', ') : 'no browser origins (configure mcp.allowedOrigins)'}`);
      }
      const host = request.headers.host;
      if (allowedHosts.length && (host === undefined || !allowedHosts.includes(host))) {
        return new GatewayError('FORBIDDEN', `Host ${quote(host ?? '')} is not allowed for ${MCP_PATH}; accepted: ${allowedHosts.join(', ')}`);
      }
      return null;
    };

    /** Origin and Host, then credentials: all from the headers, before a byte of the body is read. */
    const admit = async (request: FastifyRequest, reply: FastifyReply) => {
      const refused = checkOrigin(request);
      if (refused) return sendError(reply, refused, 403);
      const unauthenticated = await authenticateRequest(ctx.interfaces, request, reply, MCP_PATH, undefined);
      if (unauthenticated) return sendError(reply, unauthenticated);
    };

    const handle = async (request: FastifyRequest, reply: FastifyReply) => {
      const principal = request.principal ?? ANONYMOUS;
      const server = new Server(
        { name: 'cnc-machine-gateway', version: ctx.version },
        { capabilities: { tools: {} }, instructions: serverInstructions(`http://${request.headers.host ?? 'localhost'}/api/docs`), jsonSchemaValidator },
      );
      server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: dispatcher.list() }));
      const splices: Splices = new Map();
      server.setRequestHandler(CallToolRequestSchema, (req) =>
        dispatcher.call(req.params, principal, request.ip, { render: (result) => frozenAnswers.textOrPlaceholder(result, splices) }),
      );
      // The web-standard transport with the already parsed body: the Node adapter would re-wrap
      // request and response in web streams, which costs more than the tool call for large results.
      const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
      try {
        await server.connect(transport);
        const url = `http://${request.headers.host ?? 'localhost'}${request.url}`;
        const response = await transport.handleRequest(new Request(url, { method: request.method, headers: webHeaders(request.headers) }), { parsedBody: request.body });
        return await sendResponse(reply, response, splices);
      } finally {
        void transport.close();
        void server.close();
      }
    };

    ctx.http.post(MCP_PATH, { bodyLimit: MCP_BODY_LIMIT, onRequest: admit, errorHandler: sendMcpBodyError }, handle);
    // Stateless: there is no stream to open and no session to end.
    const notAllowed = (_request: FastifyRequest, reply: FastifyReply) =>
      reply
        .code(405)
        .header('allow', 'POST')
        .send({ jsonrpc: '2.0', error: { code: -32000, message: 'Method not allowed: this MCP server is stateless; use POST.' }, id: null });
    ctx.http.get(MCP_PATH, notAllowed);
    ctx.http.delete(MCP_PATH, notAllowed);
  },
});

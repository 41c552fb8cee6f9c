/**
 * The MCP server at POST /mcp, on the gateway's own port. Stateless: every
 * request gets a new server and transport, closed when the response closes.
 * Before any JSON-RPC is read, the request passes the same access policy as
 * /api (credentials, security control, IP white list) and the Origin/Host
 * allow-lists (DNS-rebinding protection).
 */
import type { IncomingHttpHeaders } from 'node:http';
import { Readable } from 'node:stream';
import type { ReadableStream as NodeReadableStream } from 'node:stream/web';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import { CallToolRequestSchema, ListToolsRequestSchema, type CallToolResult, type Tool } from '@modelcontextprotocol/sdk/types.js';
import { definePlugin } from '../../core/plugin-host.js';
import type { GatewayContext } from '../../core/context.js';
import { GatewayError, toGatewayError } from '../../core/errors.js';
import type { Principal } from '../../core/interfaces.js';
import { parseOrThrow } from '../../core/schema-errors.js';
import { toJsonSchema } from '../../core/openapi.js';
import { FrozenAnswers, splice, type Splices } from './frozen-answers.js';
import { serverInstructions } from './instructions.js';
import { createToolCaller, ToolFailure, type ToolDefinition } from './tool-runtime.js';
import { TOOLS } from './tools.js';

export const MCP_PATH = '/mcp';

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
 * serialised answers they hold (frozen-answers.ts: frozen ones and ones kept
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

/** Tool listings are the same for every request; they are computed once. */
function listing(tools: readonly ToolDefinition[]): Tool[] {
  return tools.map((t) => ({
    name: t.name,
    title: t.title,
    description: t.description,
    inputSchema: toJsonSchema(t.input, 'input') as Tool['inputSchema'],
    annotations: { title: t.title, readOnlyHint: true, idempotentHint: true, destructiveHint: false, openWorldHint: false },
  }));
}

/** Frozen answers of every request, serialised once. */
const frozenAnswers = new FrozenAnswers();

async function runTool(
  ctx: GatewayContext & { logger: Logger },
  tool: ToolDefinition,
  args: unknown,
  principal: Principal,
  sourceIp: string,
  splices: Splices,
): Promise<CallToolResult> {
  try {
    let input: unknown;
    try {
      input = parseOrThrow(tool.input, args ?? {});
    } catch (err) {
      throw new ToolFailure(tool.primaryPath, toGatewayError(err));
    }
    const result = await tool.run(input, createToolCaller(ctx, principal, sourceIp));
    return { content: [{ type: 'text', text: frozenAnswers.textOrPlaceholder(result, splices) }] };
  } catch (err) {
    const message = err instanceof ToolFailure ? err.message : toGatewayError(err).toToolMessage(tool.primaryPath);
    if (!(err instanceof ToolFailure)) ctx.logger.error({ err, tool: tool.name }, 'tool failed unexpectedly');
    return { content: [{ type: 'text', text: message }], isError: true };
  }
}

export const mcpPlugin = definePlugin<GatewayContext>({
  name: 'mcp',
  dependsOn: ['gateway-api', 'system', 'error-log'],
  register(ctx) {
    const tools = new Map(TOOLS.map((t) => [t.name, t]));
    // One validator for every per-request server: the SDK otherwise builds a new Ajv (with formats) per request.
    const jsonSchemaValidator = new AjvJsonSchemaValidator();
    const tools_list = listing(TOOLS);
    const { allowedOrigins, allowedHosts } = ctx.config.mcp;

    /** Origin and Host allow-lists; a browser page on another origin must not drive the tools (DNS rebinding). */
    const checkOrigin = (request: FastifyRequest): GatewayError | null => {
      const origin = request.headers.origin;
      if (origin !== undefined && !allowedOrigins.includes(origin)) {
        return new GatewayError('FORBIDDEN', `Origin '${origin}' is not allowed for ${MCP_PATH}; accepted: ${allowedOrigins.length ? allowedOrigins.join(', ') : 'no browser origins (configure mcp.allowedOrigins)'}`);
      }
      const host = request.headers.host;
      if (allowedHosts.length && (host === undefined || !allowedHosts.includes(host))) {
        return new GatewayError('FORBIDDEN', `Host '${host ?? ''}' is not allowed for ${MCP_PATH}; accepted: ${allowedHosts.join(', ')}`);
      }
      return null;
    };

    const handle = async (request: FastifyRequest, reply: FastifyReply) => {
      const refused = checkOrigin(request);
      if (refused) return sendError(reply, refused, 403);
      let principal: Principal;
      try {
        principal = await ctx.interfaces.accessPolicy.authenticate({ headers: request.headers, sourceIp: request.ip, path: MCP_PATH }, undefined);
      } catch (err) {
        const error = toGatewayError(err);
        ctx.interfaces.reportError(MCP_PATH, error, { principal: { username: null, isAdmin: false, method: 'none' }, sourceIp: request.ip, logger: ctx.logger });
        return sendError(reply, error);
      }
      const server = new Server(
        { name: 'cnc-machine-gateway', version: ctx.version },
        { capabilities: { tools: {} }, instructions: serverInstructions(`http://${request.headers.host ?? 'localhost'}/api/docs`), jsonSchemaValidator },
      );
      server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: tools_list }));
      const splices: Splices = new Map();
      server.setRequestHandler(CallToolRequestSchema, async (req) => {
        const tool = tools.get(req.params.name);
        if (!tool) {
          return { content: [{ type: 'text', text: `Unknown tool '${req.params.name}'; accepted: ${[...tools.keys()].join(', ')}` }], isError: true };
        }
        return runTool(ctx, tool, req.params.arguments, principal, request.ip, splices);
      });
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

    ctx.http.post(MCP_PATH, handle);
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

/**
 * The `cloud` role: one MCP endpoint for many gateways. `POST /mcp` serves
 * the gateways' tool catalogue (the same tools, schemas, annotations and
 * instructions as a gateway's /mcp: one catalogue, handed in by the
 * composition root); a tool call is relayed to the gateway selected by the
 * `accessToken` header (GW-85) through an MQTT broker the gateways dial out
 * to — embedded (aedes) by default, or an external one. Tokens live in
 * `cloud.db` in the data directory. docs/cloud-relay.md.
 *
 * Without a token, `initialize` and `tools/list` answer (they reveal no
 * gateway's data); a tool call answers the GW-86 text.
 *
 * `/admin/gateway-tokens` manages the tokens over HTTP (core/roles/cloud/admin-http.ts).
 * On the embedded broker a revoked token's gateway is disconnected: at once
 * when revoked through that interface, within `revocationSweepMs` when
 * revoked by the CLI (another process).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { CallToolRequestSchema, ListToolsRequestSchema, SUPPORTED_PROTOCOL_VERSIONS, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { ToolCatalogue } from '../../mcp/dispatch.js';
import { GatewayError, quote } from '../../errors.js';
import { isRecord } from '../../json-value.js';
import { InProcessBroker } from '../../mqtt/broker.js';
import { splice, type Splices } from '../../mcp/frozen-answers.js';
import { installJsonBodyParser } from '../../json-body.js';
import { sendMcpBodyError } from '../../mcp/body-errors.js';
import { RoleRuntime } from '../../runtime.js';
import { DEFAULT_CALL_DEADLINE_MS, DEFAULT_TOPIC_PREFIX, gatewayClientId, isJsonStringLiteral, joinedLiteral, topics } from '../../cloud-wire/protocol.js';
import { CloudRelay, type RelayConnection } from './relay.js';
import { AdminKeys, CLOUD_MIGRATIONS, GatewayTokens } from './tokens.js';
import { serveAdmin } from './admin-http.js';

export const CLOUD_DATABASE_FILE = 'cloud.db';
export const UNAUTHORIZED_TEXT = 'Unauthorized: missing or unknown accessToken header.';
const MCP_BODY_LIMIT = 256 * 1024;

export interface CloudRoleOptions {
  dataDir: string;
  logger: Logger;
  version: string;
  catalogue: ToolCatalogue;
  /** An external broker; without it the role embeds one on `embeddedBroker` (127.0.0.1:1883 unless told). */
  broker?: { url: string; username?: string; password?: string; protocolVersion?: 4 | 5; reconnectMaxMs?: number };
  embeddedBroker?: { host?: string; port?: number; tls?: { key: string | Buffer; cert: string | Buffer } };
  topicPrefix?: string;
  callDeadlineMs?: number;
  /** Origins and Hosts /mcp accepts (as on a gateway); an empty Host list accepts any Host. */
  allowedOrigins?: readonly string[];
  allowedHosts?: readonly string[];
  now?: () => number;
  /** How often the embedded broker's connected gateways are checked against revoked tokens (10 s unless told). */
  revocationSweepMs?: number;
}

export const DEFAULT_REVOCATION_SWEEP_MS = 10_000;

function webHeaders(request: FastifyRequest): Headers {
  const out = new Headers();
  for (const [name, value] of Object.entries(request.headers)) {
    if (value === undefined) continue;
    if (Array.isArray(value)) for (const v of value) out.append(name, v);
    else out.set(name, value);
  }
  return out;
}

const toolError = (text: string): CallToolResult => ({ content: [{ type: 'text', text }], isError: true });

/**
 * What a relayed tool call answers: the gateway's text as a JSON string
 * literal in parts (with the text to answer instead if they do not make one),
 * or a text of the cloud's own.
 */
type ToolAnswer = { parts: readonly Buffer[]; size: number; isError: boolean; ifMalformed: string } | { text: string; isError: true };

const hasOnlyKeys = (o: Record<string, unknown>, keys: readonly string[]) => Object.keys(o).every((k) => keys.includes(k));

/**
 * The request when it is one plain tools/call that the SDK would take as is:
 * both media types accepted, a JSON body, a supported (or no) protocol
 * version header, one JSON-RPC request with a string or integer id, params
 * of a tool name and an arguments object, nothing else. Otherwise undefined.
 */
export function plainToolCall(request: Pick<FastifyRequest, 'headers' | 'body'>): { id: string | number; name: string; arguments?: Record<string, unknown> } | undefined {
  const { headers, body } = request;
  const accept = headers.accept;
  if (typeof accept !== 'string' || !accept.includes('application/json') || !accept.includes('text/event-stream')) return undefined;
  if (headers['content-type'] !== 'application/json') return undefined;
  const version = headers['mcp-protocol-version'];
  if (version !== undefined && (typeof version !== 'string' || !SUPPORTED_PROTOCOL_VERSIONS.includes(version))) return undefined;
  if (!isRecord(body) || !hasOnlyKeys(body, ['jsonrpc', 'id', 'method', 'params']) || body.jsonrpc !== '2.0' || body.method !== 'tools/call') return undefined;
  const id = body.id;
  if (typeof id !== 'string' && !(typeof id === 'number' && Number.isSafeInteger(id))) return undefined;
  const params = body.params;
  if (!isRecord(params) || !hasOnlyKeys(params, ['name', 'arguments']) || typeof params.name !== 'string') return undefined;
  if (params.arguments !== undefined && !isRecord(params.arguments)) return undefined;
  return { id, name: params.name, ...(params.arguments !== undefined ? { arguments: params.arguments } : {}) };
}

const RESULT_HEAD = Buffer.from('{"result":{"content":[{"type":"text","text":');
const RESULT_TAIL = Buffer.from('}]},"jsonrpc":"2.0","id":');
const ERROR_RESULT_TAIL = Buffer.from('}],"isError":true},"jsonrpc":"2.0","id":');

/**
 * Buffers for large responses, used again once a response has been written:
 * an answer of some hundred kilobytes otherwise costs a fresh allocation per
 * call, which the C library maps and unmaps from the system each time (its
 * mmap threshold is 128 KiB), with the page faults that go with it. Answers
 * larger than a slab get a buffer of their own.
 */
export class ResponseBuffers {
  private readonly free: Buffer[] = [];

  constructor(
    /** Bytes per slab; a smaller need takes a slab only from `min` bytes on. */
    readonly slab = 512 * 1024,
    readonly min = 32 * 1024,
    /** Idle slabs kept. */
    readonly keep = 8,
  ) {}

  /** A buffer of at least `size` bytes, and whether it is a slab to give back. */
  take(size: number): { buffer: Buffer; pooled: boolean } {
    if (size < this.min || size > this.slab) return { buffer: Buffer.allocUnsafe(size), pooled: false };
    return { buffer: this.free.pop() ?? Buffer.allocUnsafeSlow(this.slab), pooled: true };
  }

  /** Gives back a slab that is no longer read. */
  give(buffer: Buffer): void {
    if (buffer.length === this.slab && this.free.length < this.keep) this.free.push(buffer);
  }
}

/**
 * The JSON-RPC response to a tool call, as the SDK writes it (JSON.stringify
 * of result, jsonrpc, id), the gateway's literal copied in unparsed, once,
 * and checked there; `malformed` is told when it is not one literal, and the
 * response then carries the answer's ifMalformed text.
 */
export function toolCallResponse(id: string | number, answer: ToolAnswer, malformed: () => void = () => undefined, alloc: (size: number) => Buffer = Buffer.allocUnsafe): Buffer {
  const end = Buffer.from(`${JSON.stringify(id)}}`);
  if ('text' in answer) return Buffer.concat([RESULT_HEAD, Buffer.from(JSON.stringify(answer.text)), ERROR_RESULT_TAIL, end]);
  const tail = answer.isError ? ERROR_RESULT_TAIL : RESULT_TAIL;
  const size = RESULT_HEAD.length + answer.size + tail.length + end.length;
  const out = alloc(size).subarray(0, size);
  let at = RESULT_HEAD.copy(out, 0);
  for (const part of answer.parts) at += part.copy(out, at);
  if (!isJsonStringLiteral(out.subarray(RESULT_HEAD.length, at))) {
    malformed();
    return toolCallResponse(id, { text: answer.ifMalformed, isError: true });
  }
  at += tail.copy(out, at);
  end.copy(out, at);
  return out;
}

export class CloudRole {
  private constructor(
    readonly runtime: RoleRuntime,
    readonly tokens: GatewayTokens,
    readonly adminKeys: AdminKeys,
    readonly relay: CloudRelay,
    readonly broker: InProcessBroker | undefined,
    private readonly http: FastifyInstance,
  ) {}

  /** The embedded broker's URL, for gateways to dial (undefined with an external broker). */
  get brokerUrl(): string | undefined {
    return this.broker?.url;
  }

  static async create(options: CloudRoleOptions): Promise<CloudRole> {
    const now = options.now ?? Date.now;
    const logger = options.logger;
    const prefix = options.topicPrefix ?? DEFAULT_TOPIC_PREFIX;
    const t = topics(prefix);
    const runtime = await RoleRuntime.open({ role: 'cloud', dataDir: options.dataDir, databaseFile: CLOUD_DATABASE_FILE, logger, now, baseMigrations: CLOUD_MIGRATIONS });
    let broker: InProcessBroker | undefined;
    let relay: CloudRelay | undefined;
    try {
      const tokens = await GatewayTokens.open(runtime.db, now);
      const adminKeys = await AdminKeys.open(runtime.db, now);
      if (options.broker) {
        const { url, username, password, protocolVersion, reconnectMaxMs } = options.broker;
        const connection: RelayConnection = {
          url, protocolVersion: protocolVersion ?? 5, topicPrefix: prefix,
          ...(username !== undefined ? { username } : {}), ...(password !== undefined ? { password } : {}), ...(reconnectMaxMs !== undefined ? { reconnectMaxMs } : {}),
        };
        relay = await CloudRelay.connect(connection, logger.child({ component: 'relay' }));
      } else {
        broker = new InProcessBroker({
          host: options.embeddedBroker?.host ?? '127.0.0.1',
          port: options.embeddedBroker?.port ?? 1883,
          ...(options.embeddedBroker?.tls ? { tls: options.embeddedBroker.tls } : {}),
          // Only gateways connect (the relay works inside the broker): user name = its token id, password = its token,
          // client id = gateway-<token id> and no other, so no gateway can take over another's session.
          authenticate: async (username, password) => username !== undefined && (await tokens.verify(password)) === username,
          clientIdOf: gatewayClientId,
          // A gateway may only announce its own presence, read its own requests and answer on its own response topic of a cloud.
          authorizePublish: (username, topic) => username !== undefined && (topic === t.presence(username) || t.isAnswerTopicOf(username, topic)),
          authorizeSubscribe: (username, topic) => topic === t.requests(username ?? ''),
        });
        await broker.start();
        runtime.onStop('embedded MQTT broker', () => broker!.stop());
        const embedded = broker;
        // Tokens revoked by the CLI (another process): their gateways are disconnected at the next sweep.
        const sweep = setInterval(() => {
          void (async () => {
            for (const user of embedded.connectedUsers()) {
              if (!(await tokens.isValid(user)) && embedded.disconnectUser(user) > 0) logger.info({ tokenId: user }, 'cloud: a gateway whose token was revoked was disconnected');
            }
          })().catch((err: Error) => logger.warn({ err: err.message }, 'cloud: the revoked-token sweep failed'));
        }, options.revocationSweepMs ?? DEFAULT_REVOCATION_SWEEP_MS);
        sweep.unref();
        runtime.onStop('revoked-token sweep', async () => clearInterval(sweep));
        relay = await CloudRelay.attach(broker, prefix, logger.child({ component: 'relay' }));
      }
      const connected = relay;
      runtime.onStop('cloud relay', () => connected.close());
      const http = Fastify({ logger: false, bodyLimit: MCP_BODY_LIMIT });
      // Bodies as on every surface: depth-checked, securely parsed, every string well-formed Unicode (core/json-body.ts).
      installJsonBodyParser(http);
      CloudRole.serveMcp(http, { ...options, tokens, relay, deadlineMs: options.callDeadlineMs ?? DEFAULT_CALL_DEADLINE_MS, logger });
      const revokedNow = broker;
      serveAdmin(http, {
        tokens, adminKeys, allowedOrigins: options.allowedOrigins ?? [], logger: logger.child({ component: 'cloud-admin' }),
        onRevoked: (id) => void (revokedNow?.disconnectUser(id)),
      });
      await runtime.startPlugins([], {}, http);
      await http.ready();
      return new CloudRole(runtime, tokens, adminKeys, relay, broker, http);
    } catch (err) {
      await runtime.stop().catch(() => undefined);
      throw err;
    }
  }

  private static serveMcp(
    http: FastifyInstance,
    o: CloudRoleOptions & { tokens: GatewayTokens; relay: CloudRelay; deadlineMs: number; logger: Logger },
  ): void {
    const allowedOrigins = o.allowedOrigins ?? [];
    const allowedHosts = o.allowedHosts ?? [];
    // One validator for every per-request server: the SDK otherwise builds a new Ajv (with formats) per request.
    const jsonSchemaValidator = new AjvJsonSchemaValidator();
    // Unique to this process, so no tool text can hold one by chance.
    const answerPrefix = `relay-answer-${randomUUID()}-`;
    let answerCount = 0;
    const refuse = (reply: FastifyReply, error: GatewayError) => reply.code(403).send({ ...error.toBody(), hint: error.hint });
    const buffers = new ResponseBuffers();
    const malformed = (tokenId: string | undefined) => o.logger.warn({ gateway: tokenId }, 'cloud: a gateway\'s answer is not one JSON string literal; it was not passed on');
    /** Relays one tool call to the token's gateway: its answer (a JSON string literal, checked), or a text of the cloud's own saying why there is none. */
    const callTool = async (tokenId: string | undefined, name: string, args: Record<string, unknown> | undefined, correlation: string | string[] | undefined): Promise<ToolAnswer> => {
      if (!tokenId) return { text: UNAUTHORIZED_TEXT, isError: true };
      const path = o.catalogue.primaryPath(name);
      if (!path) return { text: `Unknown tool ${quote(name)}; accepted: ${o.catalogue.list().map((x) => x.name).join(', ')}`, isError: true };
      // Always unique on the wire (concurrent calls may carry the same client header); a client's own id leads it, so it can be found in both sides' logs.
      const unique = randomBytes(8).toString('hex');
      const correlationId = typeof correlation === 'string' && /^[\w.-]{1,64}$/.test(correlation) ? `${correlation}.${unique}` : unique;
      const started = Date.now();
      const outcome = await o.relay.call(tokenId, { name, ...(args ? { arguments: args } : {}) }, o.deadlineMs, correlationId);
      o.logger.info({ correlationId, gateway: tokenId, tool: name, ms: Date.now() - started, outcome: outcome.ok ? 'answered' : outcome.reason }, 'cloud tool call');
      const unreadable = `${path} failed: the gateway's answer could not be read (correlation id ${correlationId})`;
      if (outcome.ok) return { parts: outcome.parts, size: outcome.size, isError: outcome.isError, ifMalformed: unreadable };
      if (outcome.reason === 'malformed') return { text: unreadable, isError: true };
      if (outcome.reason === 'offline') {
        return { text: new GatewayError('GATEWAY_SERVICE_UNAVAILABLE', 'The accessToken is valid, but its gateway is offline on the broker (or never connected)').toToolMessage(path), isError: true };
      }
      const late = new GatewayError('GATEWAY_SERVICE_UNAVAILABLE', `It is connected but did not answer within ${o.deadlineMs} ms (correlation id ${correlationId})`);
      return { text: `${path} failed: ${late.errorName}(${late.errorCode}) ${late.message}. Hint: the gateway is connected but slow or busy; retry, or ask for less (a smaller window or limit).`, isError: true };
    };
    http.post('/mcp', {
      errorHandler: sendMcpBodyError,
      onRequest: async (request, reply) => {
        const origin = request.headers.origin;
        if (origin !== undefined && !allowedOrigins.includes(origin)) {
          return refuse(reply, new GatewayError('FORBIDDEN', `Origin ${quote(origin)} is not allowed for /mcp; accepted: ${allowedOrigins.length ? allowedOrigins.join(', ') : 'no browser origins'}`));
        }
        const host = request.headers.host;
        if (allowedHosts.length && (host === undefined || !allowedHosts.includes(host))) {
          return refuse(reply, new GatewayError('FORBIDDEN', `Host ${quote(host ?? '')} is not allowed for /mcp; accepted: ${allowedHosts.join(', ')}`));
        }
      },
    }, async (request, reply) => {
      const header = request.headers.accesstoken;
      const tokenId = await o.tokens.verify(typeof header === 'string' ? header : undefined);
      const correlation = request.headers['x-correlation-id'];
      // A plain tools/call is answered here, in the bytes the SDK would write (test/cloud/fast-call.test.ts holds them
      // to it); anything else (initialize, tools/list, batches, notifications, unusual headers or fields) goes to the SDK.
      const fast = plainToolCall(request);
      if (fast) {
        const answer = await callTool(tokenId, fast.name, fast.arguments, correlation);
        let slab: Buffer | undefined;
        const body = toolCallResponse(fast.id, answer, () => malformed(tokenId), (size) => {
          const { buffer, pooled } = buffers.take(size);
          if (pooled) slab = buffer;
          return buffer;
        });
        // The slab is used again once the response is written (or its connection gone).
        if (slab) reply.raw.once('close', () => buffers.give(slab as Buffer));
        return reply.code(200).header('content-type', 'application/json').send(body);
      }
      // Answers go into the response as the gateway sent them (a JSON string literal, checked): the SDK sees a placeholder.
      const splices: Splices = new Map();
      const server = new Server(
        { name: 'cnc-machine-gateway-cloud', version: o.version },
        { capabilities: { tools: {} }, instructions: o.catalogue.instructions(`http://${request.headers.host ?? 'localhost'}/mcp`), jsonSchemaValidator },
      );
      server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: o.catalogue.list() }));
      server.setRequestHandler(CallToolRequestSchema, async (req) => {
        const answer = await callTool(tokenId, req.params.name, req.params.arguments, correlation);
        if ('text' in answer) return toolError(answer.text);
        const literal = joinedLiteral(answer);
        if (!literal) {
          malformed(tokenId);
          return toolError(answer.ifMalformed);
        }
        const placeholder = `${answerPrefix}${++answerCount}`;
        splices.set(placeholder, [literal]);
        return { content: [{ type: 'text', text: placeholder }], ...(answer.isError ? { isError: true } : {}) };
      });
      const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
      try {
        await server.connect(transport);
        const response = await transport.handleRequest(new Request(`http://${request.headers.host ?? 'localhost'}${request.url}`, { method: 'POST', headers: webHeaders(request) }), { parsedBody: request.body });
        reply.code(response.status);
        response.headers.forEach((value, name) => void (name === 'content-length' ? undefined : reply.header(name, value)));
        const body = Buffer.from(await response.arrayBuffer());
        return reply.send(splices.size ? Buffer.concat(splice(body, splices)) : body);
      } finally {
        void transport.close();
        void server.close();
      }
    });
    const notAllowed = (_request: FastifyRequest, reply: FastifyReply) =>
      reply.code(405).header('allow', 'POST').send({ jsonrpc: '2.0', error: { code: -32000, message: 'Method not allowed: this MCP server is stateless; use POST.' }, id: null });
    http.get('/mcp', notAllowed);
    http.delete('/mcp', notAllowed);
  }

  listen(host: string, port: number): Promise<string> {
    return this.runtime.listen(host, port);
  }

  stop(): Promise<void> {
    return this.runtime.stop();
  }
}

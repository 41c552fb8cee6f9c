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
 * `/admin/gateway-tokens` manages the tokens over HTTP (core/cloud/admin-http.ts).
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
import { CallToolRequestSchema, ListToolsRequestSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { ToolCatalogue } from '../mcp-dispatch.js';
import { GatewayError, quote } from '../errors.js';
import { InProcessBroker } from '../mqtt/broker.js';
import { splice, type Splices } from '../mcp-frozen-answers.js';
import { RoleRuntime } from '../runtime.js';
import { DEFAULT_CALL_DEADLINE_MS, DEFAULT_TOPIC_PREFIX, topics } from '../cloud/protocol.js';
import { CloudRelay, type RelayConnection } from '../cloud/relay.js';
import { AdminKeys, CLOUD_MIGRATIONS, GatewayTokens } from '../cloud/tokens.js';
import { serveAdmin } from '../cloud/admin-http.js';

export const CLOUD_DATABASE_FILE = 'cloud.db';
export const UNAUTHORIZED_TEXT = 'Unauthorized: missing or unknown accessToken header.';
const MCP_BODY_LIMIT = 256 * 1024;

export interface CloudRoleOptions {
  dataDir: string;
  logger: Logger;
  version: string;
  catalogue: ToolCatalogue;
  /** An external broker; without it the role embeds one on `embeddedBroker` (127.0.0.1:1883 unless told). */
  broker?: { url: string; username?: string; password?: string; protocolVersion?: 4 | 5 };
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
        const connection: RelayConnection = { url: options.broker.url, protocolVersion: options.broker.protocolVersion ?? 5, topicPrefix: prefix, ...(options.broker.username !== undefined ? { username: options.broker.username } : {}), ...(options.broker.password !== undefined ? { password: options.broker.password } : {}) };
        relay = await CloudRelay.connect(connection, logger.child({ component: 'relay' }));
      } else {
        broker = new InProcessBroker({
          host: options.embeddedBroker?.host ?? '127.0.0.1',
          port: options.embeddedBroker?.port ?? 1883,
          ...(options.embeddedBroker?.tls ? { tls: options.embeddedBroker.tls } : {}),
          // A gateway connects with user name = its token id and password = its token.
          // Only gateways connect (the relay works inside the broker): user name = its token id, password = its token.
          authenticate: async (username, password) => username !== undefined && (await tokens.verify(password)) === username,
          // A gateway may only announce its own presence, read its own requests and answer on a cloud's response topic.
          authorizePublish: (username, topic) => topic === t.presence(username ?? '') || topic.startsWith(`${prefix}/clouds/`),
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
    http.post('/mcp', {
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
      // Answers go into the response as the gateway sent them (a JSON string literal, checked): the SDK sees a placeholder.
      const splices: Splices = new Map();
      const server = new Server(
        { name: 'cnc-machine-gateway-cloud', version: o.version },
        { capabilities: { tools: {} }, instructions: o.catalogue.instructions(`http://${request.headers.host ?? 'localhost'}/mcp`), jsonSchemaValidator },
      );
      server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: o.catalogue.list() }));
      server.setRequestHandler(CallToolRequestSchema, async (req) => {
        if (!tokenId) return toolError(UNAUTHORIZED_TEXT);
        const path = o.catalogue.primaryPath(req.params.name);
        if (!path) return toolError(`Unknown tool ${quote(req.params.name)}; accepted: ${o.catalogue.list().map((x) => x.name).join(', ')}`);
        // Always unique on the wire (concurrent calls may carry the same client header); a client's own id leads it, so it can be found in both sides' logs.
        const unique = randomBytes(8).toString('hex');
        const correlationId = typeof correlation === 'string' && /^[\w.-]{1,64}$/.test(correlation) ? `${correlation}.${unique}` : unique;
        const started = Date.now();
        const outcome = await o.relay.call(tokenId, { name: req.params.name, ...(req.params.arguments ? { arguments: req.params.arguments } : {}) }, o.deadlineMs, correlationId);
        o.logger.info({ correlationId, gateway: tokenId, tool: req.params.name, ms: Date.now() - started, outcome: outcome.ok ? 'answered' : outcome.reason }, 'cloud tool call');
        if (outcome.ok) {
          const placeholder = `${answerPrefix}${++answerCount}`;
          splices.set(placeholder, [outcome.literal]);
          return { content: [{ type: 'text', text: placeholder }], ...(outcome.isError ? { isError: true } : {}) };
        }
        if (outcome.reason === 'malformed') return toolError(`${path} failed: the gateway's answer could not be read (correlation id ${correlationId})`);
        if (outcome.reason === 'offline') {
          return toolError(new GatewayError('GATEWAY_SERVICE_UNAVAILABLE', 'The accessToken is valid, but its gateway is offline on the broker (or never connected)').toToolMessage(path));
        }
        const late = new GatewayError('GATEWAY_SERVICE_UNAVAILABLE', `It is connected but did not answer within ${o.deadlineMs} ms (correlation id ${correlationId})`);
        return toolError(`${path} failed: ${late.errorName}(${late.errorCode}) ${late.message}. Hint: the gateway is connected but slow or busy; retry, or ask for less (a smaller window or limit).`);
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

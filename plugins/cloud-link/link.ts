/**
 * The gateway's link to a cloud relay: one MQTT connection to the broker at
 * a time, authenticated with the gateway's token (user name = the token's
 * id, password = the token, client id gateway-<token id>). It keeps a
 * retained presence (`online`, and a last will saying `offline`), takes tool
 * calls from its request topic and answers each on its own answer topic of
 * the cloud, in parts, with its correlation id. Calls run through the same
 * dispatch as the gateway's own /mcp (core/mcp/dispatch.ts), as the link's
 * user. A call past its deadline is dropped. Refused by the broker, unable
 * to reach it or cut off, it keeps trying with backoff
 * (core/mqtt/reconnect.ts).
 */
import { connect, type IClientOptions, type MqttClient } from 'mqtt';
import type { Logger } from 'pino';
import { parseBearerToken } from '../../core/auth/bearer-tokens.js';
import { answerPayloads, GATEWAY_TOKEN_PREFIX, gatewayClientId, readRequest, textLiteral, topics, type Presence, type RelayRequest } from '../../core/cloud-wire/protocol.js';
import { messageParent } from '../../core/telemetry/messaging.js';
import { injectTrace, inSpan, tracingEnabled, type SpanNote } from '../../core/telemetry/tracing.js';
import type { Principal } from '../../core/interfaces/registry.js';
import type { ToolDispatcher } from '../../core/mcp/dispatch.js';
import { FrozenAnswers, type Splices } from '../../core/mcp/frozen-answers.js';
import { Backoff, DEFAULT_RETRY_CAP_MS } from '../../core/mqtt/backoff.js';
import { keepNoDelay } from '../../core/mqtt/no-delay.js';
import { Reconnector } from '../../core/mqtt/reconnect.js';
import type { CloudLinkStatus } from '../../core/roles/gateway/cloud-link-status.js';
import type { GatewayIdentity } from '../../core/roles/gateway/context.js';
import { shownUrl, TOKEN_HINT, type LinkSettings } from './settings.js';

export interface CloudLinkOptions {
  dispatcher: ToolDispatcher;
  /** The principal of a user of this gateway, or undefined when there is none of that name. */
  principalFor(user: string): Principal | undefined;
  identity: GatewayIdentity;
  version: string;
  logger: Logger;
  now: () => number;
  /** MQTT keepalive (15 s unless told) and the longest wait between two attempts to connect (DEFAULT_RETRY_CAP_MS unless told). */
  keepaliveSeconds?: number;
  reconnectCapMs?: number;
  /** A private CA for an mqtts broker. */
  ca?: Buffer;
  /** The gateway's client certificate and key (PEM), for a broker that asks for one. */
  cert?: Buffer;
  key?: Buffer;
}

/** One connection's state; a new one for every start. */
interface Connection {
  settings: LinkSettings;
  tokenId: string;
  topics: ReturnType<typeof topics>;
  /** One backoff for the connection: a refused attempt waits longer each time, whatever protocol version it spoke. */
  backoff: Backoff;
  protocolVersion: 4 | 5;
  client?: MqttClient;
  retry?: Reconnector;
  connectedAt?: number;
  lastError?: string;
  lastErrorAt?: number;
  closed: boolean;
}

/** An answer's MQTT properties: where to answer and the correlation data (MQTT 5). */
type RequestProperties = { responseTopic?: string; correlationData?: Buffer; userProperties?: Record<string, string | string[]> } | undefined;

const presence = (p: Presence) => JSON.stringify(p);

export class CloudLink {
  private current: Connection | undefined;
  private readonly counters = { callsAnswered: 0, callsFailed: 0, callsDropped: 0 };
  /** Large answers keep their serialised text between calls (the same path as the gateway's own /mcp). */
  private readonly frozenAnswers = new FrozenAnswers();
  private readonly since: number;
  private changing: Promise<unknown> = Promise.resolve();

  constructor(private readonly o: CloudLinkOptions) {
    this.since = o.now();
  }

  /** Runs `work` once the changes before it are done: one change of the link at a time. */
  serially<T>(work: () => Promise<T>): Promise<T> {
    const next = this.changing.then(work, work);
    this.changing = next.catch(() => undefined);
    return next;
  }

  /** Stops the link once the changes under way are done. */
  close(): Promise<void> {
    return this.serially(() => this.stop());
  }

  /** Opens a connection with `settings`; a token that is not a gateway token is refused. */
  start(settings: LinkSettings): void {
    const parsed = parseBearerToken(GATEWAY_TOKEN_PREFIX, settings.accessToken);
    if (!parsed) throw new Error(`cloudLink.accessToken: ${TOKEN_HINT}`);
    const current: Connection = {
      settings, tokenId: parsed.id, topics: topics(settings.topicPrefix), backoff: new Backoff({ capMs: this.o.reconnectCapMs ?? DEFAULT_RETRY_CAP_MS }), protocolVersion: settings.protocolVersion, closed: false,
    };
    this.current = current;
    this.open(current);
  }

  /** Closes the connection, saying offline first when it is connected. */
  async stop(): Promise<void> {
    const current = this.current;
    this.current = undefined;
    if (!current) return;
    current.closed = true;
    current.retry?.stop();
    const c = current.client;
    if (!c) return;
    if (c.connected) await c.publishAsync(current.topics.presence(current.tokenId), presence({ state: 'offline' }), { qos: 1, retain: true }).catch(() => undefined);
    await c.endAsync(true).catch(() => undefined);
  }

  /** Closes the connection and opens one with `next`, if any. */
  async replace(next: LinkSettings | undefined): Promise<void> {
    await this.stop();
    if (next) this.start(next);
  }

  /** The link's state as gateway-info shows it: never the token. */
  status(): CloudLinkStatus {
    const link = this.current;
    if (!link) return { configured: false, connected: false };
    const r = link.retry?.status();
    return {
      configured: true,
      source: link.settings.source,
      brokerUrl: shownUrl(link.settings.brokerUrl),
      tokenId: link.tokenId,
      user: link.settings.user,
      connected: link.client?.connected === true,
      // A retry stopped while the link opens again (in another protocol version) is connecting.
      ...(!r || r.state === 'closed' ? { state: 'connecting' as const, failedAttempts: r?.failedAttempts ?? 0 } : { ...r, state: r.state }),
      protocolVersion: link.protocolVersion,
      ...(link.connectedAt !== undefined ? { connectedAt: link.connectedAt } : {}),
      ...(link.lastError !== undefined ? { lastError: link.lastError, lastErrorAt: link.lastErrorAt } : {}),
      ...this.counters,
    };
  }

  private noteError(message: string): void {
    if (!this.current) return;
    this.current.lastError = message.slice(0, 300);
    this.current.lastErrorAt = this.o.now();
  }

  /** Dials the broker for `current`, in its protocol version, and wires the client's events. */
  private open(current: Connection): void {
    const { tokenId, settings, topics: t } = current;
    const options: IClientOptions = {
      protocolVersion: current.protocolVersion,
      clientId: gatewayClientId(tokenId),
      username: tokenId,
      password: settings.accessToken,
      // Reconnecting is the Reconnector's: with backoff, and after a refusal too.
      reconnectPeriod: 0,
      connectTimeout: 10_000,
      // A link cut without a TCP close (power, network) is seen by the broker after 1.5 keepalives.
      keepalive: this.o.keepaliveSeconds ?? 15,
      will: { topic: t.presence(tokenId), payload: Buffer.from(presence({ state: 'offline' })), qos: 1, retain: true },
      ...(this.o.ca ? { ca: this.o.ca } : {}),
      ...(this.o.cert && this.o.key ? { cert: this.o.cert, key: this.o.key } : {}),
    };
    const c = keepNoDelay(connect(settings.brokerUrl, options));
    current.client = c;
    current.retry = new Reconnector(c, { name: 'cloud link', logger: this.o.logger, backoff: current.backoff, now: this.o.now, onFailure: (message) => this.noteError(message) });
    c.on('connect', () => this.connected(current, c));
    c.on('message', (_topic, payload, packet) => {
      void this.answer(current, c, payload, packet.properties as RequestProperties).catch((err: Error) => {
        this.counters.callsDropped++;
        this.o.logger.error({ err: err.message }, 'cloud link: a call could not be answered');
      });
    });
    c.on('error', (err: Error & { code?: number }) => {
      // A broker without MQTT 5 (the embedded aedes) refuses it: speak 3.1.1 to it instead.
      if (current.protocolVersion === 5 && (err.code === 1 || /protocol version/i.test(err.message))) {
        current.protocolVersion = 4;
        current.retry?.stop();
        this.o.logger.info('cloud link: the broker does not take MQTT 5; using MQTT 3.1.1');
        void c.endAsync(true).then(() => (current.closed ? undefined : this.open(current)));
        return;
      }
      // The Reconnector logs the cause of a failed attempt or lost connection, once per change.
      this.o.logger.debug({ err: err.message }, 'cloud link: broker connection error');
    });
  }

  /** Subscribes to the request topic, then says online: a request the cloud sends on seeing the presence must find the subscription. */
  private connected(current: Connection, c: MqttClient): void {
    const { tokenId, topics: t } = current;
    current.connectedAt = this.o.now();
    this.o.logger.info({ broker: shownUrl(current.settings.brokerUrl), protocolVersion: current.protocolVersion }, 'cloud link connected');
    void c.subscribeAsync(t.requests(tokenId), { qos: 1 })
      .then(() => c.publishAsync(t.presence(tokenId), presence({ state: 'online', gateway: this.o.identity.name, version: this.o.version, since: this.since }), { qos: 1, retain: true }))
      .catch((err: Error) => {
        this.noteError(`presence or subscription failed: ${err.message}`);
        this.o.logger.error({ err: err.message }, 'cloud link: presence or subscription failed');
      });
  }

  /** Drops a call, counted and logged. */
  private drop(log: Record<string, unknown>, message: string): void {
    this.counters.callsDropped++;
    this.o.logger.warn(log, message);
  }

  /** Runs one request from the cloud and answers it in parts on its answer topic; drops what is not a request, late or bound elsewhere. */
  private async answer(current: Connection, c: MqttClient, payload: Buffer, properties: RequestProperties): Promise<void> {
    const request = readRequest(payload);
    if (!request) return this.drop({ bytes: payload.length }, 'cloud link: a message on the request topic that is not a request was dropped');
    const correlationId = request.id;
    const tool = request.params.name;
    if (Date.now() > request.deadline) return this.drop({ correlationId, tool }, 'cloud link: a call past its deadline was dropped');
    if (!tracingEnabled()) return this.run(current, c, request, properties, undefined);
    // The consumer span continues the cloud's relay span (MQTT 5 user properties, else the envelope).
    const parent = messageParent(properties?.userProperties, request.trace);
    const attributes = { 'messaging.system': 'mqtt', 'messaging.operation.type': 'process', 'messaging.operation.name': 'process', 'messaging.message.id': correlationId, 'gen_ai.tool.name': tool };
    return inSpan(`process tools/call ${tool}`, { kind: 'consumer', attributes, ...(parent ? { parent } : {}) }, (note) => this.run(current, c, request, properties, note));
  }

  /** Runs a request that is due and answers it; `span` is its consumer span's note while tracing is on. */
  private async run(current: Connection, c: MqttClient, request: RelayRequest, properties: RequestProperties, span: SpanNote | undefined): Promise<void> {
    const correlationId = request.id;
    const tool = request.params.name;
    const { user } = current.settings;
    const principal = this.o.principalFor(user);
    const started = Date.now();
    const splices: Splices = new Map();
    const result = principal
      ? await this.o.dispatcher.call(request.params, principal, 'cloud', { correlationId, render: (r) => this.frozenAnswers.textOrPlaceholder(r, splices) })
      : { content: [{ type: 'text' as const, text: `cloud calls run as user '${user}' (cloudLink.runAs), who does not exist on this gateway` }], isError: true };
    if (Date.now() > request.deadline) return this.drop({ correlationId, tool, ms: Date.now() - started }, 'cloud link: the answer came after the deadline and was dropped');
    const replyTo = properties?.responseTopic ?? request.replyTo;
    // Its own answer topic of a cloud (or a cloud's bare response topic, which clouds before per-gateway answer topics ask for).
    if (!current.topics.isAnswerTopicOf(current.tokenId, replyTo, true)) return this.drop({ correlationId }, 'cloud link: a response topic other than this gateway\'s answer topic of a cloud was refused');
    const first = result.content[0];
    const text = first?.type === 'text' ? first.text : JSON.stringify(result.content);
    span?.set({ 'cncgw.outcome': result.isError ? 'tool_error' : 'ok' });
    // On MQTT 5 the answer's parts carry the consumer span's context as well.
    const trace = span ? injectTrace({}) : {};
    const userProperties = trace.traceparent ? { userProperties: trace } : {};
    const options = { qos: 1 as const, ...(current.protocolVersion === 5 ? { properties: { correlationData: properties?.correlationData ?? Buffer.from(correlationId), ...userProperties } } : {}) };
    // All parts go out at once (TCP keeps their order); waiting for each PUBACK would add a round trip per part.
    await Promise.all(answerPayloads(correlationId, splices.get(text) ?? textLiteral(text), result.isError === true).map((part) => c.publishAsync(replyTo, part, options)));
    const log = { correlationId, tool, ms: Date.now() - started, isError: result.isError === true };
    if (result.isError) {
      this.counters.callsFailed++;
      this.o.logger.warn(log, 'cloud tool call answered with a tool error');
    } else {
      this.counters.callsAnswered++;
      this.o.logger.info(log, 'cloud tool call answered');
    }
  }
}

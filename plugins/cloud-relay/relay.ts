/**
 * The cloud side of the relay: one MQTT connection of a cloud instance. It
 * follows the gateways' retained presence (so it knows at once which are
 * connected), sends tool calls to a gateway's request topic with its own
 * response topic, and joins the answer's parts by correlation id. A call
 * whose gateway goes offline, or whose deadline passes, ends at once; a late
 * answer is dropped.
 *
 * On an external broker it is an MQTT client (MQTT 5 request/response
 * properties); on the cloud's embedded broker it subscribes and publishes
 * inside the broker (`CloudRelay.attach`), without a socket or MQTT encoding
 * between the two: answers of some hundred kilobytes cross one connection
 * (the gateway's) instead of two.
 */
import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import { connect, type IClientOptions } from 'mqtt';
import { PartJoiner, readPart, topics, type JoinedAnswer, type Presence, type RelayRequest } from '../../core/cloud-wire/protocol.js';
import type { InProcessBroker } from '../../core/mqtt/broker.js';
import { Backoff } from '../../core/mqtt/backoff.js';
import { keepNoDelay } from '../../core/mqtt/no-delay.js';
import { Reconnector, type RetryStatus } from '../../core/mqtt/reconnect.js';
import type { BrokerConnection, CloudRelayService, RelayOutcome } from '../../core/roles/cloud/context.js';
import { targetAttributes } from '../../core/telemetry/calls.js';
import { carrierOf, type TraceCarrier } from '../../core/telemetry/messaging.js';
import { startSpan, tracingEnabled, type OpenSpan } from '../../core/telemetry/tracing.js';

/** How the relay sends a request: through its MQTT client, or inside the embedded broker. */
interface RequestSender {
  send(topic: string, payload: string, replyTo: string, correlationId: string, trace?: TraceCarrier): Promise<void>;
  /** Removes the retained message of `topic` (an empty retained publish). */
  clearRetained(topic: string): Promise<void>;
  close(): Promise<void>;
}

interface Pending {
  tokenId: string;
  joiner: PartJoiner | undefined;
  /** An answer from another gateway has been logged for this call (once). */
  misdirected?: true;
  done: (outcome: RelayOutcome) => void;
  timer: NodeJS.Timeout;
}

export class CloudRelay implements CloudRelayService {
  /** This instance's id: its response topic is its own, so several cloud instances can share one broker. */
  readonly instanceId = randomBytes(8).toString('hex');
  private readonly online = new Map<string, Presence>();
  private readonly pending = new Map<string, Pending>();
  private readonly t: ReturnType<typeof topics>;

  private sender: RequestSender | undefined;
  private retry: Reconnector | undefined;

  private constructor(
    topicPrefix: string,
    private readonly logger: Logger,
  ) {
    this.t = topics(topicPrefix);
  }

  /** The relay inside the embedded broker: it sees presence and answers as they are published, and publishes requests there. */
  static async attach(broker: InProcessBroker, topicPrefix: string, logger: Logger): Promise<CloudRelay> {
    const relay = new CloudRelay(topicPrefix, logger);
    // Presence seen live since subscribing is newer than anything retained.
    const live = new Set<string>();
    const unsubscribe = await Promise.all([relay.t.presenceAll(), relay.t.responsesAll(relay.instanceId)].map((filter) => broker.subscribeInProcess(filter, (topic, payload) => {
      live.add(topic);
      relay.onMessage(topic, payload);
    })));
    // Gateways that connected before the subscription: their retained presence.
    for (const m of await broker.retainedInProcess(relay.t.presenceAll())) if (!live.has(m.topic)) relay.onMessage(m.topic, m.payload);
    live.clear();
    relay.sender = {
      send: (topic, payload) => broker.publishInProcess(topic, payload, 1),
      clearRetained: (topic) => broker.publishInProcess(topic, '', 1, true),
      close: async () => {
        for (const u of unsubscribe) await u();
      },
    };
    return relay;
  }

  /**
   * The relay as a client of an external broker. It resolves once the first
   * attempt has ended: connected (and subscribed), or refused or unable to
   * reach the broker, which is logged; attempts go on in the background with
   * backoff either way, and until one is accepted every gateway is offline.
   */
  static async connect(connection: BrokerConnection, logger: Logger): Promise<CloudRelay> {
    const options: IClientOptions = {
      protocolVersion: connection.protocolVersion,
      clientId: `cloud-${randomBytes(6).toString('hex')}`,
      // Reconnecting is the Reconnector's: with backoff, and after a refusal too.
      reconnectPeriod: 0,
      connectTimeout: 10_000,
      ...(connection.username !== undefined ? { username: connection.username } : {}),
      ...(connection.password !== undefined ? { password: connection.password } : {}),
      ...connection.tls,
    };
    const client = keepNoDelay(connect(connection.url, options));
    const relay = new CloudRelay(connection.topicPrefix, logger);
    const retry = new Reconnector(client, { name: 'cloud relay', logger, backoff: new Backoff({ ...(connection.reconnectMaxMs !== undefined ? { capMs: connection.reconnectMaxMs } : {}) }) });
    relay.retry = retry;
    relay.sender = {
      send: (topic, payload, replyTo, correlationId, trace) =>
        client.publishAsync(topic, payload, {
          qos: 1,
          ...(connection.protocolVersion === 5 ? { properties: { responseTopic: replyTo, correlationData: Buffer.from(correlationId), ...(trace ? { userProperties: { ...trace } } : {}) } } : {}),
        }).then(() => undefined),
      clearRetained: (topic) => client.publishAsync(topic, '', { qos: 1, retain: true }).then(() => undefined),
      close: async () => {
        retry.stop();
        await client.endAsync(true).catch(() => undefined);
      },
    };
    client.on('message', (topic, payload) => relay.onMessage(topic, payload));
    // The Reconnector logs the cause of a failed attempt or lost connection, once per change.
    client.on('error', (err) => logger.debug({ err: err.message }, 'cloud relay: broker connection error'));
    client.on('close', () => {
      // Without the broker nobody is reachable; presence is read again (retained) on reconnect.
      relay.online.clear();
      for (const id of [...relay.pending.keys()]) relay.finish(id, { ok: false, reason: 'offline' });
    });
    let subscribed: Promise<unknown> = Promise.resolve();
    client.on('connect', () => {
      subscribed = client.subscribeAsync([relay.t.presenceAll(), relay.t.responsesAll(relay.instanceId)], { qos: 1 }).catch((err: Error) => logger.error({ err: err.message }, 'cloud relay: subscribe failed'));
    });
    const first = await new Promise<'connected' | 'failed'>((resolve) => {
      client.once('connect', () => resolve('connected'));
      client.once('close', () => resolve('failed'));
    });
    if (first === 'connected') await subscribed;
    return relay;
  }

  /** The connection to an external broker: connecting, connected or retrying (undefined inside the embedded broker). */
  brokerLink(): RetryStatus | undefined {
    return this.retry?.status();
  }

  /** Whether the gateway of this token is connected now. */
  isOnline(tokenId: string): boolean {
    return this.online.get(tokenId)?.state === 'online';
  }

  /** Gateways connected now, by token id. */
  onlineGateways(): string[] {
    return [...this.online.entries()].filter(([, p]) => p.state === 'online').map(([id]) => id);
  }

  /**
   * The gateway of this token is gone (its token revoked): unavailable now,
   * its pending calls ended, and its retained presence removed from the
   * broker. A client that dynamic security removes leaves no will, so its
   * last `online` would otherwise stay retained for every consumer that
   * subscribes later (on an external broker the cloud's user needs the
   * right to publish presence topics: docs/cloud-relay.md).
   */
  forget(tokenId: string): void {
    this.online.delete(tokenId);
    for (const [id, p] of this.pending) if (p.tokenId === tokenId) this.finish(id, { ok: false, reason: 'offline' });
    const topic = this.t.presence(tokenId);
    this.sender?.clearRetained(topic).catch((err: Error) =>
      this.logger.warn({ tokenId, topic, err: err.message }, 'cloud relay: the retained presence of a revoked gateway could not be removed; allow the cloud\'s broker user to publish on the gateways\' presence topics'));
  }

  private onMessage(topic: string, payload: Buffer): void {
    const tokenId = this.t.tokenIdOf(topic);
    if (tokenId !== undefined && topic === this.t.presence(tokenId)) {
      let presence: Presence | undefined;
      try {
        presence = payload.length ? (JSON.parse(payload.toString('utf8')) as Presence) : undefined;
      } catch {
        presence = undefined;
      }
      if (presence?.state === 'online') {
        this.online.set(tokenId, presence);
        return;
      }
      this.online.delete(tokenId);
      // Calls waiting on a gateway that went away end now, not at their deadline.
      for (const [id, p] of this.pending) if (p.tokenId === tokenId) this.finish(id, { ok: false, reason: 'offline' });
      return;
    }
    const answerer = this.t.answererOf(this.instanceId, topic);
    if (answerer === undefined) return;
    const part = readPart(payload);
    const pending = part ? this.pending.get(part.header.id) : undefined;
    // A late or unknown answer is dropped.
    if (!part || !pending) return;
    const id = part.header.id;
    // Only the gateway asked answers: the broker lets a gateway publish only on the topic that ends in its own token id.
    if (answerer !== pending.tokenId) {
      if (!pending.misdirected) this.logger.warn({ correlationId: id, gateway: pending.tokenId, from: answerer }, 'cloud relay: an answer from another gateway than the one asked was dropped');
      pending.misdirected = true;
      return;
    }
    pending.joiner ??= new PartJoiner(part.header.parts);
    let answer: JoinedAnswer | undefined;
    try {
      answer = pending.joiner.add(part);
    } catch (err) {
      this.logger.warn({ correlationId: id, err: (err as Error).message }, 'cloud relay: an answer could not be joined');
      this.finish(id, { ok: false, reason: 'malformed' });
      return;
    }
    if (answer) this.finish(id, { ok: true, ...answer });
  }

  private finish(id: string, outcome: RelayOutcome): void {
    const p = this.pending.get(id);
    if (!p) return;
    this.pending.delete(id);
    clearTimeout(p.timer);
    p.done(outcome);
  }

  /**
   * Sends one tool call to the token's gateway and waits for its answer
   * until `deadlineMs`. While tracing is on, the relay is a producer span
   * (from the send until the answer is joined or given up) whose context
   * the request carries to the gateway.
   */
  call(tokenId: string, params: RelayRequest['params'], deadlineMs: number, correlationId: string): Promise<RelayOutcome> {
    if (!tracingEnabled()) return this.relay(tokenId, params, deadlineMs, correlationId, undefined);
    const open = startSpan(`send tools/call ${params.name}`, {
      kind: 'producer',
      attributes: { 'messaging.system': 'mqtt', 'messaging.operation.type': 'send', 'messaging.operation.name': 'send', 'messaging.message.id': correlationId, 'gen_ai.tool.name': params.name, ...targetAttributes(params.arguments) },
    });
    return this.relay(tokenId, params, deadlineMs, correlationId, open).then((outcome) => {
      open?.set({ 'cncgw.outcome': outcome.ok ? (outcome.isError ? 'tool_error' : 'ok') : outcome.reason });
      if (!outcome.ok) open?.fail(outcome.reason);
      open?.end();
      return outcome;
    });
  }

  private relay(tokenId: string, params: RelayRequest['params'], deadlineMs: number, correlationId: string, open: OpenSpan | undefined): Promise<RelayOutcome> {
    if (!this.isOnline(tokenId)) return Promise.resolve({ ok: false, reason: 'offline' });
    const replyTo = this.t.responses(this.instanceId, tokenId);
    const trace = carrierOf(open);
    const request: RelayRequest = { v: 1, id: correlationId, replyTo, deadline: Date.now() + deadlineMs, method: 'tools/call', params, ...(trace ? { trace } : {}) };
    return new Promise<RelayOutcome>((resolve) => {
      const timer = setTimeout(() => this.finish(correlationId, { ok: false, reason: 'timeout' }), deadlineMs);
      timer.unref();
      this.pending.set(correlationId, { tokenId, joiner: undefined, done: resolve, timer });
      const sender = this.sender;
      if (!sender) return this.finish(correlationId, { ok: false, reason: 'offline' });
      sender.send(this.t.requests(tokenId), JSON.stringify(request), replyTo, correlationId, trace).catch(() => this.finish(correlationId, { ok: false, reason: 'offline' }));
    });
  }

  async close(): Promise<void> {
    for (const id of [...this.pending.keys()]) this.finish(id, { ok: false, reason: 'offline' });
    const sender = this.sender;
    this.sender = undefined;
    await sender?.close();
  }
}

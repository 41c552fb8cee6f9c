/**
 * The cloud side of the relay: one MQTT connection of a cloud instance. It
 * follows the gateways' retained presence (so it knows at once which are
 * connected), sends tool calls to a gateway's request topic with its own
 * response topic, and joins the answer's parts by correlation id. A call
 * whose gateway goes offline, or whose deadline passes, ends at once; a late
 * answer is dropped.
 */
import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { connect, type IClientOptions, type MqttClient } from 'mqtt';
import { PartJoiner, readPart, topics, type Presence, type RelayRequest } from './protocol.js';

export interface RelayConnection {
  url: string;
  username?: string;
  password?: string;
  /** 5 on an MQTT 5 broker (request/response properties); 4 on the embedded aedes. */
  protocolVersion: 4 | 5;
  topicPrefix: string;
  /** Its own embedded broker over TLS on loopback: the certificate names the host gateways dial, not 127.0.0.1. */
  ownLoopbackTls?: boolean;
}

export type RelayOutcome = { ok: true; result: CallToolResult } | { ok: false; reason: 'offline' | 'timeout' };

interface Pending {
  tokenId: string;
  joiner: PartJoiner | undefined;
  done: (outcome: RelayOutcome) => void;
  timer: NodeJS.Timeout;
}

export class CloudRelay {
  /** This instance's id: its response topic is its own, so several cloud instances can share one broker. */
  readonly instanceId = randomBytes(8).toString('hex');
  private readonly online = new Map<string, Presence>();
  private readonly pending = new Map<string, Pending>();
  private readonly t: ReturnType<typeof topics>;

  private constructor(
    private readonly client: MqttClient,
    private readonly connection: RelayConnection,
    private readonly logger: Logger,
  ) {
    this.t = topics(connection.topicPrefix);
  }

  static async connect(connection: RelayConnection, logger: Logger): Promise<CloudRelay> {
    const options: IClientOptions = {
      protocolVersion: connection.protocolVersion,
      clientId: `cloud-${randomBytes(6).toString('hex')}`,
      reconnectPeriod: 1000,
      connectTimeout: 10_000,
      ...(connection.username !== undefined ? { username: connection.username } : {}),
      ...(connection.password !== undefined ? { password: connection.password } : {}),
      ...(connection.ownLoopbackTls ? { rejectUnauthorized: false } : {}),
    };
    const client = connect(connection.url, options);
    const relay = new CloudRelay(client, connection, logger);
    client.on('message', (topic, payload) => relay.onMessage(topic, payload));
    client.on('error', (err) => logger.warn({ err: err.message }, 'cloud relay: broker connection error'));
    client.on('close', () => {
      // Without the broker nobody is reachable; presence is read again (retained) on reconnect.
      relay.online.clear();
      for (const id of [...relay.pending.keys()]) relay.finish(id, { ok: false, reason: 'offline' });
    });
    client.on('connect', () => {
      void client.subscribeAsync([relay.t.presenceAll(), relay.t.responses(relay.instanceId)], { qos: 1 }).catch((err: Error) => logger.error({ err: err.message }, 'cloud relay: subscribe failed'));
    });
    await new Promise<void>((resolve, reject) => {
      const onError = (err: Error) => {
        client.off('connect', onConnect);
        reject(new Error(`cannot connect to the broker at ${connection.url}: ${err.message}`));
      };
      const onConnect = () => {
        client.off('error', onError);
        resolve();
      };
      client.once('connect', onConnect);
      client.once('error', onError);
    });
    await client.subscribeAsync([relay.t.presenceAll(), relay.t.responses(relay.instanceId)], { qos: 1 });
    return relay;
  }

  /** Whether the gateway of this token is connected now. */
  isOnline(tokenId: string): boolean {
    return this.online.get(tokenId)?.state === 'online';
  }

  /** Gateways connected now, by token id. */
  onlineGateways(): string[] {
    return [...this.online.entries()].filter(([, p]) => p.state === 'online').map(([id]) => id);
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
    if (topic !== this.t.responses(this.instanceId)) return;
    const part = readPart(payload);
    const pending = part ? this.pending.get(part.id) : undefined;
    // A late or unknown answer is dropped.
    if (!part || !pending) return;
    pending.joiner ??= new PartJoiner(part.parts);
    let result: CallToolResult | undefined;
    try {
      result = pending.joiner.add(part);
    } catch (err) {
      this.logger.warn({ correlationId: part.id, err: (err as Error).message }, 'cloud relay: an answer could not be joined');
      return;
    }
    if (result) this.finish(part.id, { ok: true, result });
  }

  private finish(id: string, outcome: RelayOutcome): void {
    const p = this.pending.get(id);
    if (!p) return;
    this.pending.delete(id);
    clearTimeout(p.timer);
    p.done(outcome);
  }

  /** Sends one tool call to the token's gateway and waits for its answer until `deadlineMs`. */
  call(tokenId: string, params: RelayRequest['params'], deadlineMs: number, correlationId: string): Promise<RelayOutcome> {
    if (!this.isOnline(tokenId)) return Promise.resolve({ ok: false, reason: 'offline' });
    const replyTo = this.t.responses(this.instanceId);
    const request: RelayRequest = { v: 1, id: correlationId, replyTo, deadline: Date.now() + deadlineMs, method: 'tools/call', params };
    return new Promise<RelayOutcome>((resolve) => {
      const timer = setTimeout(() => this.finish(correlationId, { ok: false, reason: 'timeout' }), deadlineMs);
      timer.unref();
      this.pending.set(correlationId, { tokenId, joiner: undefined, done: resolve, timer });
      this.client
        .publishAsync(this.t.requests(tokenId), JSON.stringify(request), {
          qos: 1,
          ...(this.connection.protocolVersion === 5 ? { properties: { responseTopic: replyTo, correlationData: Buffer.from(correlationId) } } : {}),
        })
        .catch(() => this.finish(correlationId, { ok: false, reason: 'offline' }));
    });
  }

  async close(): Promise<void> {
    for (const id of [...this.pending.keys()]) this.finish(id, { ok: false, reason: 'offline' });
    await this.client.endAsync(true).catch(() => undefined);
  }
}

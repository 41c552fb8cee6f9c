/**
 * A target's connection to its broker: one MQTT client per attempt, tried
 * again after every refusal (a CONNACK error), unreachable broker or lost
 * connection with exponential backoff and jitter (core/mqtt/backoff.ts, as
 * the cloud link does), the cause logged once per change. A fresh client
 * per attempt, not mqtt.js's own reconnect: mqtt.js would send the QoS 1
 * messages of the old connection again on the new one, before the new
 * session's births; the forwarder sends what was not acknowledged itself,
 * from its cursor, in order. A connection the broker drops within
 * STABLE_CONNECTION_MS counts as a failed attempt, so a broker that accepts
 * and drops every connection sees the waits grow. A broker that refuses
 * MQTT 5 is spoken 3.1.1 to.
 */
import { connect, type IClientOptions, type IConnackPacket, type MqttClient } from 'mqtt';
import type { Logger } from 'pino';
import { Backoff } from '../../core/mqtt/backoff.js';
import { keepNoDelay } from '../../core/mqtt/no-delay.js';
import { failureCause } from '../../core/mqtt/reconnect.js';
import type { TargetSettings } from './settings.js';

/** A connection that lasted this long resets the backoff; one dropped sooner counts as a failed attempt. */
export const STABLE_CONNECTION_MS = 10_000;

export type LinkState = 'connecting' | 'connected' | 'retrying' | 'stopped';

/** What the owner of the link is told. */
export interface LinkHandlers {
  /** The will of the next CONNECT (asked for at every attempt: a Sparkplug bdSeq moves with each). */
  will(): IClientOptions['will'];
  /** A connection was accepted. */
  connected(client: MqttClient, connack: IConnackPacket): void;
  /** The accepted connection ended (its client is already being closed). */
  lost(cause: string): void;
  message(topic: string, payload: Buffer): void;
}

export interface LinkStatus {
  state: LinkState;
  failedAttempts: number;
  nextAttemptAt?: number;
  connectedAt?: number;
  lastError?: string;
  lastErrorAt?: number;
}

export class BrokerLink {
  private state: LinkState = 'connecting';
  private client: MqttClient | undefined;
  private protocolVersion: 4 | 5;
  private readonly backoff: Backoff;
  private timer: NodeJS.Timeout | undefined;
  private nextAttemptAt: number | undefined;
  private connectedAt: number | undefined;
  private lastError: { message: string; at: number } | undefined;
  private loggedCause: string | undefined;

  constructor(
    private readonly settings: TargetSettings,
    private readonly handlers: LinkHandlers,
    private readonly logger: Logger,
    private readonly now: () => number,
  ) {
    this.protocolVersion = settings.protocolVersion;
    this.backoff = new Backoff({ capMs: settings.reconnectCapMs });
  }

  /** Makes the first attempt. */
  start(): void {
    this.attempt();
  }

  status(): LinkStatus {
    return {
      state: this.state,
      failedAttempts: this.state === 'connected' ? 0 : this.backoff.failedAttempts,
      ...(this.nextAttemptAt !== undefined ? { nextAttemptAt: this.nextAttemptAt } : {}),
      ...(this.connectedAt !== undefined ? { connectedAt: this.connectedAt } : {}),
      ...(this.lastError ? { lastError: this.lastError.message, lastErrorAt: this.lastError.at } : {}),
    };
  }

  /** Records an error for the status (a skipped row, a failed publish) without touching the connection. */
  noteError(message: string): void {
    this.lastError = { message: message.slice(0, 300), at: this.now() };
  }

  /** No more attempts; `farewell` runs on a connected client before it is closed (a death or offline message). */
  async stop(farewell?: (client: MqttClient) => Promise<void>): Promise<void> {
    this.state = 'stopped';
    this.nextAttemptAt = undefined;
    clearTimeout(this.timer);
    const client = this.client;
    this.client = undefined;
    if (!client) return;
    if (client.connected && farewell) await farewell(client).catch((err: Error) => this.logger.warn({ err: err.message }, 'northbound: the farewell message could not be sent'));
    await client.endAsync(!client.connected).catch(() => undefined);
  }

  private options(): IClientOptions {
    const s = this.settings;
    return {
      protocolVersion: this.protocolVersion,
      clientId: s.clientId,
      clean: true,
      ...(s.username !== undefined ? { username: s.username } : {}),
      ...(s.password !== undefined ? { password: s.password } : {}),
      // Reconnecting is this link's: with backoff, after a refusal too, and with a fresh client.
      reconnectPeriod: 0,
      connectTimeout: 10_000,
      keepalive: s.keepaliveSeconds,
      resubscribe: false,
      will: this.handlers.will(),
      ...(s.ca ? { ca: s.ca } : {}),
      ...(s.cert && s.key ? { cert: s.cert, key: s.key } : {}),
    };
  }

  private attempt(): void {
    if (this.state === 'stopped') return;
    this.state = 'connecting';
    this.nextAttemptAt = undefined;
    const client = keepNoDelay(connect(this.settings.brokerUrl, this.options()));
    this.client = client;
    let error: (Error & { code?: unknown }) | undefined;
    let wasConnected = false;
    client.on('connect', (connack) => {
      if (this.client !== client) return;
      wasConnected = true;
      error = undefined;
      const failed = this.backoff.failedAttempts;
      if (failed > 0 && this.loggedCause !== undefined) this.logger.info({ failedAttempts: failed }, `northbound target '${this.settings.name}': connected to the broker after ${failed} failed attempt${failed === 1 ? '' : 's'}`);
      this.state = 'connected';
      this.connectedAt = this.now();
      this.handlers.connected(client, connack);
    });
    client.on('error', (err: Error & { code?: unknown }) => {
      error = err;
    });
    // An MQTT 5 broker says why it ends a connection (a packet too large, a session taken over, the server shutting down).
    client.on('disconnect', (packet) => {
      error = new Error(`the broker ended the connection (reason code ${packet.reasonCode ?? 0})`);
    });
    client.on('message', (topic, payload) => {
      if (this.client === client) this.handlers.message(topic, payload);
    });
    client.on('close', () => {
      if (this.client !== client) return;
      this.client = undefined;
      void client.endAsync(true).catch(() => undefined);
      this.closed(failureCause(error, wasConnected), wasConnected, error);
    });
  }

  /** After an attempt failed or a connection ended: the cause noted and logged once per change, the next attempt scheduled. */
  private closed(cause: string, wasConnected: boolean, error: (Error & { code?: unknown }) | undefined): void {
    if (this.state === 'stopped') return;
    if (wasConnected) {
      this.handlers.lost(cause);
      if (this.now() - (this.connectedAt ?? 0) >= STABLE_CONNECTION_MS) {
        this.backoff.reset();
        this.loggedCause = undefined;
      }
    }
    this.noteError(cause);
    // A broker without MQTT 5 refuses it (code 1, unacceptable protocol version): speak 3.1.1 to it at once.
    if (!wasConnected && this.protocolVersion === 5 && (error?.code === 1 || error?.code === 132 || /protocol version/i.test(error?.message ?? ''))) {
      this.protocolVersion = 4;
      this.logger.info(`northbound target '${this.settings.name}': the broker does not take MQTT 5; using MQTT 3.1.1`);
      this.attempt();
      return;
    }
    const wait = this.backoff.next();
    this.state = 'retrying';
    this.nextAttemptAt = this.now() + wait;
    const log = { cause, failedAttempts: this.backoff.failedAttempts, retryInMs: wait, capMs: this.backoff.capMs };
    if (cause !== this.loggedCause) this.logger.warn(log, `northbound target '${this.settings.name}': no connection to the broker; retrying with backoff`);
    else this.logger.debug(log, `northbound target '${this.settings.name}': still no connection to the broker`);
    this.loggedCause = cause;
    this.timer = setTimeout(() => this.attempt(), wait);
    this.timer.unref();
  }
}

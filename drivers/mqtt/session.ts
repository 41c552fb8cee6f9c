/**
 * One broker session: an mqtt.js client connected and subscribed, or dead.
 * mqtt.js does not reconnect by itself here (reconnectPeriod 0): the machine
 * actor's backoff decides when to try again, and a dead session is thrown
 * away for a new one rather than revived.
 */
import { readFile } from 'node:fs/promises';
import type { Logger } from 'pino';
import type { IClientOptions, MqttClient } from 'mqtt';
import { GatewayError } from '../../core/interfaces/errors.js';
import type { MqttOptions } from './options.js';

export interface SessionSettings {
  /** Broker URL, without credentials. */
  url: string;
  clientId: string;
  username: string | undefined;
  password: string | undefined;
  options: MqttOptions;
  /** Subscription filters, placeholders resolved. */
  filters: readonly string[];
}

export interface SessionHandlers {
  message(topic: string, payload: Buffer): void;
  /** The session died after it was open (close, offline, error). Called once. */
  lost(reason: string): void;
}

const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ENOTFOUND', 'EHOSTUNREACH', 'ENETUNREACH', 'ETIMEDOUT', 'EAI_AGAIN', 'EPIPE']);
/** CONNACK return codes (3.1.1) and reason codes (5) that mean the credentials were refused. */
const AUTH_CODES = new Set([4, 5, 134, 135]);

/** The broker URL of a machine: driverOptions.url, else mqtt(s)://ip:port with the protocol's default port for port 0. */
export function brokerUrl(options: MqttOptions, ip: string, port: number): string {
  if (options.url) return options.url;
  const scheme = options.tls ? 'mqtts' : 'mqtt';
  const host = ip.includes(':') && !ip.startsWith('[') ? `[${ip}]` : ip;
  return `${scheme}://${host}:${port > 0 ? port : options.tls ? 8883 : 1883}`;
}

async function readTlsFile(field: string, path: string | undefined): Promise<Buffer | undefined> {
  if (path === undefined) return undefined;
  try {
    return await readFile(path);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'unreadable';
    throw new GatewayError('DRIVER_REQUEST_FAILED', `mqtt: cannot read driverOptions.tls.${field} file '${path}' (${code})`);
  }
}

export class BrokerSession {
  private client: MqttClient | undefined;
  private subscribed = false;
  private ended = false;
  /** Rejects the connect in progress; set only while opening. */
  private failOpening: ((error: GatewayError) => void) | undefined;

  constructor(
    private readonly settings: SessionSettings,
    private readonly handlers: SessionHandlers,
    private readonly logger: Logger,
  ) {}

  /** True while connected and subscribed. */
  get alive(): boolean {
    return this.subscribed && !this.ended;
  }

  /** Connects and subscribes within connectTimeoutMs; on failure the session is closed and the error says why. */
  async open(): Promise<void> {
    const { options } = this.settings;
    const timeoutMs = options.connectTimeoutMs;
    let timer: NodeJS.Timeout | undefined;
    const failed = new Promise<never>((_, reject) => {
      this.failOpening = reject;
      timer = setTimeout(
        () => reject(new GatewayError('DRIVER_TIMEOUT', `mqtt: broker ${this.settings.url} did not accept the connection and subscriptions within ${timeoutMs} ms (driverOptions.connectTimeoutMs)`)),
        timeoutMs,
      );
    });
    failed.catch(() => undefined);
    try {
      const clientOptions = await this.clientOptions();
      const { connect } = await import('mqtt');
      if (this.ended) throw new GatewayError('MACHINE_NOT_CONNECTED', 'mqtt: client closed');
      const client = connect(this.settings.url, clientOptions);
      this.client = client;
      client.on('message', (topic, payload) => {
        if (!this.ended) this.handlers.message(topic, payload);
      });
      client.on('error', (error) => this.onEvent('error', error));
      client.on('close', () => this.onEvent('close'));
      client.on('offline', () => this.onEvent('offline'));
      await Promise.race([new Promise<void>((resolve) => client.once('connect', () => resolve())), failed]);
      const grants = await Promise.race([client.subscribeAsync([...this.settings.filters], { qos: options.qos }), failed]);
      const refused = grants.filter((grant) => grant.qos === 128).map((grant) => grant.topic);
      if (refused.length > 0) {
        throw new GatewayError('DRIVER_REQUEST_FAILED', `mqtt: broker ${this.settings.url} refused the subscription to ${refused.join(', ')} (check the broker's ACL)`);
      }
      this.subscribed = true;
    } catch (error) {
      await this.close();
      throw error instanceof GatewayError ? error : this.describe('error', error as Error);
    } finally {
      clearTimeout(timer);
      this.failOpening = undefined;
    }
  }

  /** Ends the client and its socket at once. Safe to call twice. */
  async close(): Promise<void> {
    this.ended = true;
    this.failOpening?.(new GatewayError('MACHINE_NOT_CONNECTED', 'mqtt: client closed'));
    const client = this.client;
    this.client = undefined;
    if (!client) return;
    await new Promise<void>((resolve) => {
      // end() calls back once the socket is gone; the bound covers a socket that closed before end() was called.
      const bound = setTimeout(resolve, 1000);
      client.end(true, {}, () => {
        clearTimeout(bound);
        resolve();
      });
    });
    client.removeAllListeners();
    // A late socket error after end() must not become an uncaught 'error' event.
    client.on('error', () => undefined);
  }

  private onEvent(event: 'error' | 'close' | 'offline', error?: Error): void {
    if (this.ended) return;
    if (this.failOpening) {
      this.failOpening(this.describe(event, error));
      return;
    }
    if (!this.subscribed) return;
    this.subscribed = false;
    const reason = this.describe(event, error).detail ?? `mqtt: broker connection ${event}`;
    this.logger.warn({ event, url: this.settings.url }, 'mqtt broker session lost');
    this.handlers.lost(reason);
    void this.close();
  }

  /** A GatewayError for what went wrong, naming the broker and what to check; never the password. */
  private describe(event: 'error' | 'close' | 'offline', error?: Error): GatewayError {
    const { url, username } = this.settings;
    if (!error) {
      return new GatewayError('MACHINE_NOT_CONNECTED', `mqtt: connection to broker ${url} ${event === 'close' ? 'closed' : 'went offline'}`);
    }
    const code = (error as { code?: unknown }).code;
    if (typeof code === 'string' && NETWORK_CODES.has(code)) {
      return new GatewayError('MACHINE_NOT_CONNECTED', `mqtt: cannot reach broker ${url} (${code})`);
    }
    if (typeof code === 'number' && AUTH_CODES.has(code)) {
      const who = username === undefined ? 'anonymous access' : `the credentials of user '${username}'`;
      return new GatewayError('DRIVER_REQUEST_FAILED', `mqtt: broker ${url} refused ${who} (${error.message}); check driverOptions.username and the machine's password`);
    }
    if (code === 1 || code === 132) {
      const version = this.settings.options.protocolVersion === 5 ? 'MQTT 5' : 'MQTT 3.1.1';
      return new GatewayError('DRIVER_REQUEST_FAILED', `mqtt: broker ${url} does not accept ${version} (${error.message}); set driverOptions.protocolVersion to ${this.settings.options.protocolVersion === 5 ? 4 : 5}`);
    }
    if (typeof code === 'string' && (/CERT|SELF_SIGNED|UNABLE_TO_VERIFY|ERR_TLS|ERR_SSL/.test(code))) {
      return new GatewayError('DRIVER_REQUEST_FAILED', `mqtt: TLS handshake with broker ${url} failed (${code}: ${error.message}); check driverOptions.tls.ca and tls.rejectUnauthorized`);
    }
    if (error.message === 'connack timeout') {
      return new GatewayError('DRIVER_TIMEOUT', `mqtt: broker ${url} sent no CONNACK within ${this.settings.options.connectTimeoutMs} ms (driverOptions.connectTimeoutMs)`);
    }
    return new GatewayError('DRIVER_REQUEST_FAILED', `mqtt: broker ${url}: ${error.message}`);
  }

  private async clientOptions(): Promise<IClientOptions> {
    const { options } = this.settings;
    const tls = options.tls;
    const [ca, cert, key] = await Promise.all([readTlsFile('ca', tls?.ca), readTlsFile('cert', tls?.cert), readTlsFile('key', tls?.key)]);
    return {
      clientId: this.settings.clientId,
      protocolVersion: options.protocolVersion,
      clean: true,
      keepalive: options.keepaliveSec,
      connectTimeout: options.connectTimeoutMs,
      // The actor's backoff governs reconnects; a dead client is replaced, not revived.
      reconnectPeriod: 0,
      resubscribe: false,
      queueQoSZero: false,
      ...(this.settings.username !== undefined ? { username: this.settings.username } : {}),
      ...(this.settings.password !== undefined ? { password: this.settings.password } : {}),
      ...(tls ? { rejectUnauthorized: tls.rejectUnauthorized, ...(ca ? { ca } : {}), ...(cert ? { cert } : {}), ...(key ? { key } : {}) } : {}),
    };
  }
}

/**
 * Keeps an mqtt.js client connecting until it is stopped. mqtt.js retries at
 * a fixed period and, after a CONNACK refusal, not at all (unless
 * `reconnectOnConnackError`): a gateway that started before its broker user
 * existed, or whose token had just been rotated, never connected again. So
 * the client is made with `reconnectPeriod: 0` and this retries after every
 * close that is not its owner's, whatever the cause, after the backoff's
 * wait (exponential, with jitter, capped; core/mqtt/backoff.ts). The cause
 * (a refusal with its code, a socket error, a lost connection) is logged
 * once per change, not at every attempt; a connection accepted after
 * failures is logged once too.
 */
import type { MqttClient } from 'mqtt';
import type { Logger } from 'pino';
import type { Backoff } from './backoff.js';

/** connecting: an attempt is under way; retrying: waiting for the next one; closed: stopped by its owner. */
export type LinkState = 'connecting' | 'connected' | 'retrying' | 'closed';

export interface RetryStatus {
  state: LinkState;
  /** Attempts that failed (or connections lost) since the last accepted connection. */
  failedAttempts: number;
  /** Unix ms of the next attempt, while retrying. */
  nextAttemptAt?: number;
}

export interface ReconnectOptions {
  /** What the log lines call the link: `cloud link`, `cloud relay`. */
  name: string;
  logger: Logger;
  backoff: Backoff;
  now?: () => number;
  /** Told the cause of each failure, for a status's last error. */
  onFailure?: (cause: string) => void;
}

/** Why an attempt failed or a connection ended, in words. */
export function failureCause(error: (Error & { code?: unknown }) | undefined, wasConnected: boolean): string {
  if (error) return typeof error.code === 'number' ? `${error.message} (code ${error.code})` : error.message;
  return wasConnected ? 'the connection was closed' : 'the connection closed before the broker accepted it';
}

export class Reconnector {
  private state: LinkState = 'connecting';
  private error: Error | undefined;
  private wasConnected = false;
  private loggedCause: string | undefined;
  private timer: NodeJS.Timeout | undefined;
  private nextAttemptAt: number | undefined;
  private readonly now: () => number;

  /** Starts watching `client` (made with reconnectPeriod 0, its first attempt under way). */
  constructor(private readonly client: MqttClient, private readonly o: ReconnectOptions) {
    this.now = o.now ?? Date.now;
    client.on('connect', () => this.connected());
    client.on('error', (err) => {
      this.error = err;
    });
    // An MQTT 5 broker says why it ends a connection (a session taken over, the server shutting down).
    client.on('disconnect', (packet) => {
      this.error = new Error(`the broker ended the connection (reason code ${packet.reasonCode ?? 0})`);
    });
    client.on('close', () => this.closed());
  }

  status(): RetryStatus {
    return { state: this.state, failedAttempts: this.o.backoff.failedAttempts, ...(this.nextAttemptAt !== undefined ? { nextAttemptAt: this.nextAttemptAt } : {}) };
  }

  /** No more attempts; the owner ends the client. */
  stop(): void {
    this.state = 'closed';
    this.nextAttemptAt = undefined;
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  private connected(): void {
    if (this.state === 'closed') return;
    const failed = this.o.backoff.failedAttempts;
    if (failed > 0) this.o.logger.info({ failedAttempts: failed }, `${this.o.name}: connected to the broker after ${failed} failed attempt${failed === 1 ? '' : 's'}`);
    this.state = 'connected';
    this.wasConnected = true;
    this.error = undefined;
    this.loggedCause = undefined;
    this.o.backoff.reset();
  }

  private closed(): void {
    if (this.state === 'closed') return;
    const cause = failureCause(this.error, this.wasConnected);
    this.error = undefined;
    this.wasConnected = false;
    const wait = this.o.backoff.next();
    this.state = 'retrying';
    this.nextAttemptAt = this.now() + wait;
    this.o.onFailure?.(cause);
    const log = { cause, failedAttempts: this.o.backoff.failedAttempts, retryInMs: wait, capMs: this.o.backoff.capMs };
    if (cause !== this.loggedCause) this.o.logger.warn(log, `${this.o.name}: no connection to the broker; retrying with backoff`);
    else this.o.logger.debug(log, `${this.o.name}: still no connection to the broker`);
    this.loggedCause = cause;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      if (this.state === 'closed') return;
      this.state = 'connecting';
      this.nextAttemptAt = undefined;
      this.client.reconnect();
    }, wait);
    this.timer.unref();
  }
}

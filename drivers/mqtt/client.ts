/**
 * The MQTT DriverClient. It subscribes to the machine's mapped topics and
 * answers reads from the latest values received: nothing is requested from
 * the machine, so a read is "is there a current value", with presence
 * (availability topic, inactivity) and staleness deciding what counts as
 * current. See docs/drivers/mqtt.md for the rules.
 */
import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import {
  assertFamily, unsupportedFamily,
  type ConnectionLost, type DriverClient, type DriverDeps, type DriverMachine, type FamilyValues, type ItemFamily, type ReadableFamily,
} from '../../core/driver-seam/driver.js';
import { GatewayError } from '../../core/interfaces/errors.js';
import { readFamily, supportedFamilies, type FamilyRead } from './mapping.js';
import type { MqttOptions } from './options.js';
import { Presence } from './presence.js';
import { BrokerSession, brokerUrl } from './session.js';
import { ValueStore } from './value-store.js';

interface Waiter {
  /** Re-reads the family; settles the waiter when the answer is final. */
  check(): void;
  fail(error: GatewayError): void;
}

export class MqttDriverClient implements DriverClient {
  readonly scheme = 'mqtt';
  readonly families: ReadonlySet<ItemFamily>;
  /** The broker URL this client connects to (never carries credentials). */
  readonly url: string;
  private readonly machineID: string;
  private readonly password: string | undefined;
  private readonly options: MqttOptions;
  private readonly clientId: string;
  private readonly now: () => number;
  private readonly logger: Logger;
  private readonly store: ValueStore;
  private readonly presence: Presence;
  private readonly listeners: Array<(event: ConnectionLost) => void> = [];
  private readonly waiters = new Set<Waiter>();
  private session: BrokerSession | undefined;
  /** True from a successful connect() until listeners hear of a loss. */
  private linkUp = false;
  private closed = false;

  constructor(machine: DriverMachine & { driverOptions: MqttOptions }, deps: DriverDeps) {
    this.machineID = machine.machineID;
    this.password = machine.password;
    this.options = machine.driverOptions;
    this.now = deps.now;
    this.logger = deps.logger;
    this.url = brokerUrl(this.options, machine.ip, machine.port);
    this.clientId = this.options.clientId ?? `cnc-gateway-${machine.machineID}-${randomBytes(4).toString('hex')}`;
    this.store = new ValueStore(this.options.topics, machine.machineID, this.options.inactivityTimeoutMs);
    this.presence = new Presence(this.options.availability, machine.machineID, this.options.inactivityTimeoutMs);
    this.families = supportedFamilies(this.store.mapped);
  }

  /** True while the broker session is up and the machine counts as present. */
  get isConnected(): boolean {
    return this.session?.alive === true && this.presence.absence(this.now()) === undefined;
  }

  async connect(): Promise<void> {
    if (this.closed) throw this.notConnected('client closed');
    if (!this.session?.alive) await this.openSession();
    const absent = this.presence.absence(this.now());
    if (absent) throw this.notConnected(absent);
    this.linkUp = true;
  }

  async close(): Promise<void> {
    this.closed = true;
    this.linkUp = false;
    this.failWaiters(this.notConnected('client closed'));
    const session = this.session;
    this.session = undefined;
    await session?.close();
  }

  read<F extends ReadableFamily>(family: F): Promise<FamilyValues[F]> {
    try {
      assertFamily(this, family);
      this.ensureReachable();
      const first = readFamily(this.store, family, this.now());
      if (first.kind !== 'missing') return Promise.resolve(this.settle(first));
      return this.waitFor(family);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  downloadProgram(): Promise<Buffer> {
    return Promise.reject(unsupportedFamily(this.scheme, 'programFiles'));
  }

  uploadProgram(): Promise<void> {
    return Promise.reject(unsupportedFamily(this.scheme, 'programFiles'));
  }

  onConnectionLost(listener: (event: ConnectionLost) => void): void {
    this.listeners.push(listener);
  }

  /** Throws away the old session (dead or half-open) and opens a new one. */
  private async openSession(): Promise<void> {
    await this.session?.close();
    const session = new BrokerSession(
      {
        url: this.url,
        clientId: this.clientId,
        username: this.options.username,
        password: this.password,
        options: this.options,
        filters: [...this.store.filters, ...(this.presence.filter !== undefined ? [this.presence.filter] : [])],
      },
      {
        message: (topic, payload) => this.onMessage(topic, payload),
        lost: (reason) => this.lose(reason),
      },
      this.logger,
    );
    this.session = session;
    this.presence.sessionStarted(this.now());
    await session.open();
    this.logger.info({ url: this.url, protocolVersion: this.options.protocolVersion, topics: this.store.filters.length }, 'mqtt subscribed');
  }

  private onMessage(topic: string, payload: Buffer): void {
    try {
      const now = this.now();
      const announced = this.presence.heard(topic, payload, now);
      this.store.ingest(topic, payload, now);
      if (announced === 'offline') this.lose(this.presence.absence(now) ?? 'machine reports offline');
      for (const waiter of this.waiters) waiter.check();
    } catch (error) {
      this.logger.warn({ err: error, topic }, 'mqtt message could not be processed');
    }
  }

  /** Rejects with MACHINE_NOT_CONNECTED unless the session is up and the machine present. */
  private ensureReachable(): void {
    if (this.closed) throw this.notConnected('client closed');
    if (!this.session?.alive) throw this.notConnected(`no session with broker ${this.url}`);
    const absent = this.presence.absence(this.now());
    if (absent) {
      this.lose(absent);
      throw this.notConnected(absent);
    }
  }

  /** Waits for the family's missing items, up to requestTimeoutMs; fails at once on loss or a final answer. */
  private waitFor<F extends ReadableFamily>(family: F): Promise<FamilyValues[F]> {
    const timeoutMs = this.options.requestTimeoutMs;
    return new Promise<FamilyValues[F]>((resolve, reject) => {
      let last = '';
      const finish = (settle: () => void) => {
        clearTimeout(timer);
        this.waiters.delete(waiter);
        settle();
      };
      const waiter: Waiter = {
        check: () => {
          try {
            this.ensureReachable();
            const answer = readFamily(this.store, family, this.now());
            if (answer.kind === 'missing') last = answer.detail;
            else finish(() => resolve(this.settle(answer)));
          } catch (error) {
            finish(() => reject(error));
          }
        },
        fail: (error) => finish(() => reject(error)),
      };
      const timer = setTimeout(() => {
        const detail = last || 'no value received';
        waiter.fail(new GatewayError('DRIVER_TIMEOUT', `mqtt: ${family}: ${detail} within ${timeoutMs} ms (driverOptions.requestTimeoutMs)`));
      }, timeoutMs);
      this.waiters.add(waiter);
      waiter.check();
    });
  }

  private settle<T>(answer: FamilyRead<T>): T {
    switch (answer.kind) {
      case 'value':
        return answer.value;
      case 'stale':
        throw new GatewayError('DRIVER_TIMEOUT', `mqtt: ${answer.detail}`);
      case 'invalid':
        throw new GatewayError('DRIVER_REQUEST_FAILED', `mqtt: ${answer.detail}`);
      case 'missing':
        throw new GatewayError('DRIVER_TIMEOUT', `mqtt: ${answer.detail}`);
    }
  }

  /** Tells listeners once per loss, and fails reads that were waiting. */
  private lose(reason: string): void {
    this.failWaiters(this.notConnected(reason));
    if (!this.linkUp) return;
    this.linkUp = false;
    this.logger.warn({ machineID: this.machineID, reason }, 'mqtt machine connection lost');
    for (const listener of this.listeners) listener({ reason });
  }

  private failWaiters(error: GatewayError): void {
    for (const waiter of [...this.waiters]) waiter.fail(error);
  }

  private notConnected(detail: string): GatewayError {
    return new GatewayError('MACHINE_NOT_CONNECTED', detail.startsWith('mqtt:') ? detail : `mqtt: ${detail}`);
  }
}

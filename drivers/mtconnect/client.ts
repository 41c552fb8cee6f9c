/**
 * The MTConnect DriverClient. Its source (an SHDR adapter or an agent)
 * pushes observations into a store, and reads answer from the store: nothing
 * is requested from the machine at a read, so a read is "is there a current
 * value", waiting up to requestTimeoutMs for one that has not arrived yet
 * (right after a connect). The machine counts as there while the source's
 * link is up and the device's AVAILABILITY is not UNAVAILABLE. MTConnect is
 * read-only: programs are refused up front. See docs/drivers/mtconnect.md.
 */
import type { Logger } from 'pino';
import {
  assertFamily, unsupportedFamily,
  type ConnectionLost, type DriverClient, type DriverDeps, type DriverMachine, type FamilyValues, type ItemFamily, type ReadOptions, type ReadableFamily,
} from '../../core/driver-seam/driver.js';
import { GatewayError } from '../../core/interfaces/errors.js';
import { AgentSource } from './agent-source.js';
import { COMMON_NAMES, modelOfNames, type NameEntry } from './common-names.js';
import type { ProblemCount } from './input-problems.js';
import { readFamily, type FamilyRead } from './mapping.js';
import { ObservationStore, UNAVAILABLE } from './observations.js';
import { DEFAULT_AGENT_PORT, DEFAULT_AGENT_SETTINGS, DEFAULT_ADAPTER_PORT, parseAdapterAddress, type MtconnectOptions } from './options.js';
import { servedFamilies, type Roles } from './roles.js';
import { ShdrSource } from './shdr-source.js';
import type { MtconnectSource } from './source.js';

/** Active entries kept per condition data item. */
const MAX_ACTIVE_CONDITIONS = 100;

interface Waiter {
  check(): void;
  fail(error: GatewayError): void;
}

/** Why programs are refused, for every program request. */
export const READ_ONLY = 'MTConnect is read-only: it carries no program transfer';

export class MtconnectClient implements DriverClient {
  readonly scheme = 'mtconnect';
  readonly source: MtconnectSource;
  private readonly store: ObservationStore;
  private readonly options: MtconnectOptions;
  private readonly logger: Logger;
  private readonly listeners: Array<(event: ConnectionLost) => void> = [];
  private readonly waiters = new Set<Waiter>();
  /** True from a successful connect() until listeners hear of a loss. */
  private linkUp = false;
  private closed = false;

  constructor(machine: DriverMachine & { driverOptions: MtconnectOptions }, deps: DriverDeps) {
    this.options = machine.driverOptions;
    this.logger = deps.logger;
    this.store = new ObservationStore({ maxActiveConditionsPerItem: MAX_ACTIVE_CONDITIONS, maxAssets: this.options.maxAssets });
    const events = { changed: () => this.changed(), lost: (reason: string) => this.lose(reason) };
    const o = this.options;
    if (o.agentUrl !== undefined || o.agent !== undefined) {
      const host = machine.ip.includes(':') && !machine.ip.startsWith('[') ? `[${machine.ip}]` : machine.ip;
      const baseUrl = (o.agentUrl ?? `http://${host}:${machine.port > 0 ? machine.port : DEFAULT_AGENT_PORT}`).replace(/\/+$/, '');
      this.source = new AgentSource(
        {
          baseUrl, device: o.device, agent: o.agent ?? DEFAULT_AGENT_SETTINGS, requestTimeoutMs: o.requestTimeoutMs,
          maxDocumentBytes: o.maxDocumentBytes, maxAssets: o.maxAssets, maxClockAheadMs: o.maxClockAheadMs, now: deps.now,
        },
        this.store, events, deps.logger,
      );
    } else {
      const address = parseAdapterAddress(o.adapter ?? `${machine.ip}:${machine.port > 0 ? machine.port : DEFAULT_ADAPTER_PORT}`);
      if (typeof address === 'string') throw new GatewayError('INVALID_PARAMETER', `driverOptions.adapter: ${address}`);
      const table: Record<string, NameEntry> = { ...(o.commonNames ? COMMON_NAMES : {}), ...(o.dataItems ?? {}) };
      const model = o.devicesModel ?? modelOfNames(o.device ?? machine.machineID, table);
      this.source = new ShdrSource(
        {
          ...address, model, namesTable: o.devicesModel === undefined, deviceNames: [model.name, ...(model.uuid ? [model.uuid] : []), ...(o.device ? [o.device] : [])],
          connectTimeoutMs: o.connectTimeoutMs, legacyTimeoutMs: o.legacyTimeoutMs, heartbeatMs: o.heartbeatMs, maxLineBytes: o.maxLineBytes,
          maxFieldsPerLine: o.maxFieldsPerLine, maxAssetBytes: o.maxAssetBytes, maxClockAheadMs: o.maxClockAheadMs, now: deps.now,
        },
        this.store, events, deps.logger,
      );
    }
  }

  /** The families the device serves (docs/drivers/mtconnect.md, "Families"). */
  get families(): ReadonlySet<ItemFamily> {
    const roles = this.source.roles;
    if (!roles) return new Set<ItemFamily>(['status']);
    return servedFamilies(roles, (item) => this.source.present(item), this.source.hasAssets());
  }

  /** Bad input skipped so far, by kind, with the latest of each. */
  inputProblems(): Record<string, ProblemCount> {
    return this.source.problems.snapshot();
  }

  async connect(): Promise<void> {
    if (this.closed) throw this.notConnected('client closed');
    if (!this.source.alive) await this.source.open();
    const absent = this.absence();
    if (absent) throw this.notConnected(absent);
    this.linkUp = true;
  }

  async close(): Promise<void> {
    this.closed = true;
    this.linkUp = false;
    this.failWaiters(this.notConnected('client closed'));
    await this.source.close();
  }

  read<F extends ReadableFamily>(family: F, options: ReadOptions = {}): Promise<FamilyValues[F]> {
    try {
      assertFamily(this, family);
      const roles = this.ensureReachable();
      const first = readFamily(this.store, roles, family, options);
      if (first.kind !== 'missing') return Promise.resolve(this.settle(first));
      return this.waitFor(family, options);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  downloadProgram(_dir: string, _name: string): Promise<Buffer> {
    return Promise.reject(this.readOnly());
  }

  uploadProgram(_dir: string, _name: string, _content: Buffer): Promise<void> {
    return Promise.reject(this.readOnly());
  }

  onConnectionLost(listener: (event: ConnectionLost) => void): void {
    this.listeners.push(listener);
  }

  private readOnly(): GatewayError {
    const error = unsupportedFamily(this.scheme, 'programFiles');
    return new GatewayError('DRIVER_FAMILY_UNSUPPORTED', `${error.detail ?? ''}: ${READ_ONLY}`);
  }

  /** Why the machine counts as absent while the link is up: its AVAILABILITY says UNAVAILABLE. */
  private absence(): string | undefined {
    const item = this.source.roles?.availability;
    const observed = item ? this.store.value(item.id) : undefined;
    if (observed?.value !== UNAVAILABLE) return undefined;
    return `${this.source.where} reports AVAILABILITY UNAVAILABLE for '${item?.name ?? item?.id}' (the machine is off or its adapter is gone)`;
  }

  private changed(): void {
    const absent = this.absence();
    if (absent) this.lose(absent);
    for (const waiter of this.waiters) waiter.check();
  }

  /** The device's roles while the link is up and the machine there; throws MACHINE_NOT_CONNECTED otherwise. */
  private ensureReachable(): Roles {
    if (this.closed) throw this.notConnected('client closed');
    const roles = this.source.roles;
    if (!this.source.alive || !roles) throw this.notConnected(`no link to ${this.source.where}`);
    const absent = this.absence();
    if (absent) {
      this.lose(absent);
      throw this.notConnected(absent);
    }
    return roles;
  }

  /** Waits for the family's missing values, up to requestTimeoutMs; fails at once on a loss or a final answer. */
  private waitFor<F extends ReadableFamily>(family: F, options: ReadOptions): Promise<FamilyValues[F]> {
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
            const answer = readFamily(this.store, this.ensureReachable(), family, options);
            if (answer.kind === 'missing') last = answer.detail;
            else finish(() => resolve(this.settle(answer)));
          } catch (error) {
            finish(() => reject(error));
          }
        },
        fail: (error) => finish(() => reject(error)),
      };
      const timer = setTimeout(() => {
        waiter.fail(new GatewayError('DRIVER_TIMEOUT', `mtconnect: ${family}: ${last || 'no value received'} within ${timeoutMs} ms (driverOptions.requestTimeoutMs)`));
      }, timeoutMs);
      this.waiters.add(waiter);
      waiter.check();
    });
  }

  private settle<T>(answer: FamilyRead<T>): T {
    if (answer.kind === 'value') return answer.value;
    throw new GatewayError(answer.kind === 'invalid' ? 'DRIVER_REQUEST_FAILED' : 'DRIVER_TIMEOUT', `mtconnect: ${answer.detail}`);
  }

  /** Tells listeners once per loss, and fails reads that were waiting. */
  private lose(reason: string): void {
    this.failWaiters(this.notConnected(reason));
    if (!this.linkUp) return;
    this.linkUp = false;
    for (const listener of this.listeners) listener({ reason });
  }

  private failWaiters(error: GatewayError): void {
    for (const waiter of [...this.waiters]) waiter.fail(error);
  }

  private notConnected(detail: string): GatewayError {
    return new GatewayError('MACHINE_NOT_CONNECTED', detail.startsWith('mtconnect:') ? detail : `mtconnect: ${detail}`);
  }
}

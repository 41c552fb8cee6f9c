/**
 * The simulator's DriverClient: a SimulatedMachine behind a pretend link that
 * can be slow (latency options), drop on a schedule (`connectionLoss`) or on
 * demand (`loseConnection`). Losses are evaluated lazily against the injected
 * clock, so a thousand idle clients cost no timers.
 */
import {
  ITEM_FAMILIES, assertFamily,
  type ConnectionLost, type DriverClient, type DriverDeps, type FamilyValues, type ItemFamily, type ReadOptions, type ReadableFamily,
} from '../../core/driver-seam/driver.js';
import { GatewayError } from '../../core/interfaces/errors.js';
import { SimulatedMachine } from './model.js';
import type { SimulatorOptions } from './options.js';

type Readers = { [F in ReadableFamily]: (options: ReadOptions) => FamilyValues[F] };

interface PendingDelay {
  timer: NodeJS.Timeout;
  reject: (error: GatewayError) => void;
}

export class SimulatorClient implements DriverClient {
  readonly scheme = 'simulator';
  readonly families: ReadonlySet<ItemFamily>;
  /** The simulated machine; it outlives connections, so a reconnect continues the same machine. */
  readonly machine: SimulatedMachine;
  private readonly options: SimulatorOptions & { seed: number };
  private readonly now: () => number;
  private readonly startedAt: number;
  private readonly readers: Readers;
  private readonly listeners: Array<(event: ConnectionLost) => void> = [];
  private readonly delays = new Set<PendingDelay>();
  private connected = false;
  /** Clock time the link comes back after `loseConnection`; Infinity until `restoreConnection`. */
  private linkDownUntil: number | null = null;

  constructor(options: SimulatorOptions & { seed: number }, deps: Pick<DriverDeps, 'now'>) {
    this.options = options;
    this.now = deps.now;
    this.startedAt = deps.now();
    this.families = new Set(options.families ?? ITEM_FAMILIES);
    this.machine = new SimulatedMachine(options, deps.now);
    const m = this.machine;
    this.readers = {
      status: () => m.status(),
      alarm: () => m.alarms(),
      position: () => m.positions(),
      load: () => m.loads(),
      feedAndSpindle: () => m.feedAndSpindle(),
      toolNumber: () => m.toolNumber(),
      timeData: () => m.timeData(),
      count: () => m.count(),
      toolLife: (o) => m.toolLife(o),
      programList: (o) => m.programList(o),
      currentProgram: () => m.currentProgram(),
    };
  }

  /** True between a successful `connect()` and a loss or `close()`. */
  get isConnected(): boolean {
    return this.connected && !this.linkDown();
  }

  async connect(): Promise<void> {
    if (this.linkDown()) throw this.notConnected('connection refused: link down (simulated)');
    if (this.options.connectLatencyMs > 0) await this.delay(this.options.connectLatencyMs);
    if (this.linkDown()) throw this.notConnected('connection refused: link down (simulated)');
    this.connected = true;
  }

  async close(): Promise<void> {
    this.connected = false;
    for (const pending of this.delays) {
      clearTimeout(pending.timer);
      pending.reject(this.notConnected('client closed'));
    }
    this.delays.clear();
  }

  read<F extends ReadableFamily>(family: F, options: ReadOptions = {}): Promise<FamilyValues[F]> {
    return this.respond(family, () => this.readers[family](options));
  }

  downloadProgram(dir: string, name: string): Promise<Buffer> {
    return this.respond('programFiles', () => {
      const content = this.machine.download(dir, name);
      if (content === undefined) throw new GatewayError('PROGRAM_NOT_FOUND', `no program '${name}' in '${dir}'`);
      return content;
    });
  }

  uploadProgram(dir: string, name: string, content: Buffer): Promise<void> {
    return this.respond('programFiles', () => {
      if (dir.trim() === '' || name.trim() === '') throw new GatewayError('INVALID_PARAMETER', 'dir and name must not be empty');
      this.machine.upload(dir, name, content);
    });
  }

  onConnectionLost(listener: (event: ConnectionLost) => void): void {
    this.listeners.push(listener);
  }

  /** Drops the link now; it comes back after `durationMs` of the injected clock, or at `restoreConnection()`. */
  loseConnection(durationMs?: number): void {
    this.linkDownUntil = durationMs === undefined ? Infinity : this.now() + durationMs;
    this.drop('connection lost (simulated)');
  }

  /** Brings the link back; the client stays disconnected until the next `connect()`. */
  restoreConnection(): void {
    this.linkDownUntil = null;
  }

  /**
   * Answers a request once the family and the connection check out, after the
   * request latency. Without latency it stays synchronous up to the returned
   * promise: the benchmark polls a thousand machines a second through here.
   */
  private respond<T>(family: ItemFamily, answer: () => T): Promise<T> {
    try {
      assertFamily(this, family);
      this.ensureConnected();
      if (this.options.requestLatencyMs <= 0) return Promise.resolve(answer());
      return this.delay(this.options.requestLatencyMs).then(() => {
        this.ensureConnected();
        return answer();
      });
    } catch (error) {
      return Promise.reject(error);
    }
  }

  private ensureConnected(): void {
    if (this.dropIfLinkDown()) throw this.notConnected('connection lost (simulated)');
    if (!this.connected) throw this.notConnected('not connected');
  }

  /** Notices a link that went down since the last request; true when it is down. */
  private dropIfLinkDown(): boolean {
    if (!this.linkDown()) return false;
    this.drop('connection lost (simulated)');
    return true;
  }

  private linkDown(): boolean {
    const now = this.now();
    if (this.linkDownUntil !== null) {
      if (now < this.linkDownUntil) return true;
      this.linkDownUntil = null;
    }
    const loss = this.options.connectionLoss;
    if (loss === undefined) return false;
    // The last durationSec of every everySec period, on the gateway clock rather than simulated time.
    const intoPeriod = ((now - this.startedAt) / 1000) % loss.everySec;
    return intoPeriod >= loss.everySec - loss.durationSec;
  }

  /** Marks the client disconnected, telling listeners once per loss. */
  private drop(reason: string): void {
    if (!this.connected) return;
    this.connected = false;
    for (const listener of this.listeners) listener({ reason });
  }

  private delay(ms: number): Promise<void> {
    return new Promise((resolve, reject) => {
      const pending: PendingDelay = {
        timer: setTimeout(() => {
          this.delays.delete(pending);
          resolve();
        }, ms),
        reject,
      };
      this.delays.add(pending);
    });
  }

  private notConnected(detail: string): GatewayError {
    return new GatewayError('MACHINE_NOT_CONNECTED', `simulator: ${detail}`);
  }
}

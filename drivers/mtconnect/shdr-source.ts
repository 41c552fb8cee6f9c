/**
 * An SHDR adapter as a source: one TCP connection at a time
 * (shdr-connection.ts), its lines read by an interpreter
 * (shdr-interpreter.ts) into the store. Each connection starts from an empty
 * store, as an adapter sends every current value when a client connects, so
 * nothing from before a loss is served as current.
 */
import type { Logger } from 'pino';
import type { DataItem, DeviceModel } from './device-model.js';
import { DataItemIndex } from './device-model.js';
import { InputProblems, tooManyConditions } from './input-problems.js';
import type { ObservationStore } from './observations.js';
import { rolesOf, type Roles } from './roles.js';
import { ShdrConnection } from './shdr-connection.js';
import { ShdrBreak, ShdrInterpreter, type ShdrSink } from './shdr-interpreter.js';
import type { MtconnectSource, SourceEvents } from './source.js';

export interface ShdrSourceSettings {
  host: string;
  port: number;
  model: DeviceModel;
  /** True when the model is the names table: a data item counts as there once received. */
  namesTable: boolean;
  /** The device name or uuid `device:key` prefixes may name. */
  deviceNames: readonly string[];
  connectTimeoutMs: number;
  legacyTimeoutMs: number;
  heartbeatMs: number | undefined;
  maxLineBytes: number;
  maxFieldsPerLine: number;
  maxAssetBytes: number;
  maxClockAheadMs: number;
  now: () => number;
}

/** Lines in a row that are not SHDR before the peer counts as something else than an adapter. */
const MAX_BAD_LINES_IN_A_ROW = 5;

export class ShdrSource implements MtconnectSource {
  private roles_: Roles;
  /** How many data items had been received when the roles were last found. */
  private rolesAt = 0;
  readonly problems: InputProblems;
  private readonly index: DataItemIndex;
  private readonly received = new Set<string>();
  private assetsSeen = false;
  private connection: ShdrConnection | undefined;
  private receivedAt = 0;
  /** Told of every observation stored, with its time and when it arrived (the benchmark's lag). */
  onObservation: ((timestamp: number, receivedAt: number) => void) | undefined;

  constructor(
    private readonly settings: ShdrSourceSettings,
    private readonly store: ObservationStore,
    private readonly events: SourceEvents,
    private readonly logger: Logger,
  ) {
    this.index = new DataItemIndex(settings.model);
    this.roles_ = rolesOf(settings.model);
    this.problems = new InputProblems(logger, () => this.where);
  }

  get where(): string {
    return `adapter ${this.settings.host}:${this.settings.port}`;
  }

  get alive(): boolean {
    return this.connection?.alive === true;
  }

  /** With the names table, the roles go to the names the adapter actually sends, once it sent them. */
  get roles(): Roles {
    if (this.settings.namesTable && this.received.size !== this.rolesAt) {
      this.rolesAt = this.received.size;
      this.roles_ = rolesOf(this.settings.model, (item) => this.received.has(item.id));
    }
    return this.roles_;
  }

  present(item: DataItem): boolean {
    return !this.settings.namesTable || this.received.has(item.id);
  }

  hasAssets(): boolean {
    return this.assetsSeen || (!this.settings.namesTable && this.roles.assetChanged !== undefined);
  }

  async open(): Promise<void> {
    await this.connection?.close();
    const s = this.settings;
    const interpreter = new ShdrInterpreter(
      {
        index: this.index,
        deviceNames: s.deviceNames,
        maxFieldsPerLine: s.maxFieldsPerLine,
        maxAssetChars: s.maxAssetBytes,
        maxClockAheadMs: s.maxClockAheadMs,
        assetLimits: { maxChars: s.maxAssetBytes, maxDepth: 32, maxElements: 100_000, maxTextChars: 65_536 },
      },
      this.sink(),
    );
    const connection = new ShdrConnection(
      { ...s, maxBadLinesInARow: MAX_BAD_LINES_IN_A_ROW },
      {
        line: (text, receivedAt) => {
          this.receivedAt = receivedAt;
          let shdr = true;
          try {
            shdr = interpreter.feed(text, receivedAt);
          } catch (error) {
            if (error instanceof ShdrBreak) throw error;
            this.logger.warn({ err: error, source: this.where }, 'mtconnect: a line could not be processed');
          }
          this.events.changed();
          return shdr;
        },
        lost: (reason) => {
          this.logger.warn({ source: this.where, reason }, 'mtconnect: adapter connection lost');
          this.events.lost(reason);
        },
      },
    );
    this.connection = connection;
    this.store.clear();
    this.problems.connectionOpened();
    await connection.open();
    this.logger.info({ source: this.where }, 'mtconnect: adapter connected');
  }

  async close(): Promise<void> {
    await this.connection?.close();
  }

  private sink(): ShdrSink {
    const stored = (item: DataItem, timestamp: number) => {
      this.received.add(item.id);
      this.onObservation?.(timestamp, this.receivedAt);
    };
    return {
      value: (item, value, timestamp) => {
        this.store.setValue(item.id, value, timestamp, this.receivedAt);
        stored(item, timestamp);
      },
      condition: (item, report, timestamp) => {
        if (!this.store.setCondition(item.id, report, timestamp)) this.problems.report('tooManyConditions', tooManyConditions(item));
        stored(item, timestamp);
      },
      asset: (asset) => {
        this.assetsSeen = true;
        if (!this.store.putAsset(asset, this.receivedAt)) {
          this.problems.report('tooManyAssets', `asset '${asset.assetId.slice(0, 64)}' was not kept: ${this.store.assetCount} assets are held already (driverOptions.maxAssets)`);
        }
      },
      removeAsset: (assetId) => this.store.removeAsset(assetId),
      removeAllAssets: (type) => this.store.removeAllAssets(type),
      command: (name, value) => {
        if (name === 'message') this.logger.info({ source: this.where, message: value.slice(0, 256) }, 'mtconnect: adapter message');
      },
      problem: (kind, detail, key) => this.problems.report(kind, detail, key),
    };
  }
}

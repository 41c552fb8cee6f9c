/**
 * The Sparkplug devices of one edge node (one per machine) as a session
 * knows them: each metric's latest value and time (what a DBIRTH carries),
 * the metrics its last birth declared (a DDATA may carry only those; a row
 * with a new field gets a new birth first), whether it is born in this
 * session, and each metric's alias, unique across the edge node and kept
 * for the life of the process.
 */
import type { SequencedRow } from '../../core/roles/gateway/history/sequence.js';
import type { Database } from '../../core/store/database.js';
import { firstRowsOfNew, lastRowsBefore } from './last-rows.js';
import { catalogMetrics, METRIC_CATALOG, rowMetrics, SEQ_METRIC, type MetricType, type MetricValue } from './sparkplug-metrics.js';
import type { UMetric } from './sparkplug-codec.js';

interface Held {
  type: MetricType;
  value: MetricValue['value'];
  /** Unix ms the value was recorded; undefined before any row gave it. */
  ts: number | undefined;
}

/** One device as the session knows it. */
export interface Device {
  readonly machineID: string;
  readonly values: Map<string, Held>;
  /** Metric names its last DBIRTH declared. */
  declared: Set<string>;
  born: boolean;
}

const CATALOG_CLASSES = Object.keys(METRIC_CATALOG);

export class SparkplugDevices {
  private readonly devices = new Map<string, Device>();
  /** Each machine's metric aliases, by metric name. */
  private readonly aliases = new Map<string, Map<string, number>>();
  private nextAlias = 1;

  constructor(private readonly db: Database) {}

  /** The device of a machine, if the session knows it. */
  get(machineID: string): Device | undefined {
    return this.devices.get(machineID);
  }

  /** Machines whose devices are born in this session. */
  born(): string[] {
    return [...this.devices.values()].filter((d) => d.born).map((d) => d.machineID);
  }

  /** The alias of a device's metric (a new one on first use). */
  alias(machineID: string, name: string): number {
    let ofMachine = this.aliases.get(machineID);
    if (!ofMachine) this.aliases.set(machineID, (ofMachine = new Map()));
    let alias = ofMachine.get(name);
    if (alias === undefined) {
      alias = this.nextAlias++;
      ofMachine.set(name, alias);
    }
    return alias;
  }

  /** Loads, for each machine of `rows` not known yet, its values before its first row here (its last row of each class). */
  async prepare(rows: readonly SequencedRow[]): Promise<void> {
    for (const [machineID, seq] of firstRowsOfNew(rows, (id) => this.devices.has(id))) await this.load(machineID, seq);
  }

  /** The device of `machineID` with its values as of before `beforeSeq`, loaded from the history when the session does not know it. */
  async load(machineID: string, beforeSeq: number): Promise<Device> {
    const known = this.devices.get(machineID);
    if (known) return known;
    const device: Device = { machineID, values: new Map(), declared: new Set(), born: false };
    for (const { name, type } of catalogMetrics()) device.values.set(name, { type, value: null, ts: undefined });
    for (const row of await lastRowsBefore(this.db, machineID, beforeSeq, CATALOG_CLASSES)) this.apply(device, rowMetrics(row.cls, row.data), row.ts);
    // Another load may have finished first while this one read.
    const raced = this.devices.get(machineID);
    if (raced) return raced;
    this.devices.set(machineID, device);
    return device;
  }

  /** Takes a row's metric values into its device; answers the names its last birth did not declare. */
  apply(device: Device, metrics: readonly MetricValue[], ts: number): string[] {
    const undeclared: string[] = [];
    for (const m of metrics) {
      // rowMetrics gives a name one type for good (the catalog's, else String), so a value never changes its metric's type.
      device.values.set(m.name, { type: m.type, value: m.value, ts });
      if (!device.declared.has(m.name)) undeclared.push(m.name);
    }
    return undeclared;
  }

  /** The DBIRTH metrics of a device: every value it holds, with name and alias; declares them. */
  birthMetrics(device: Device, now: number): UMetric[] {
    device.declared = new Set(device.values.keys());
    return [...device.values].map(([name, held]) => ({ name, alias: this.alias(device.machineID, name), type: held.type, value: held.value, timestamp: held.ts ?? now }));
  }

  /** A row's DDATA metrics, by alias only. */
  dataMetrics(device: Device, metrics: readonly MetricValue[], ts: number, historical: boolean): UMetric[] {
    return metrics.map((m) => ({ alias: this.alias(device.machineID, m.name), type: m.type, value: m.value, timestamp: ts, ...(historical ? { isHistorical: true } : {}) }));
  }

  /** Forgets a device (a deleted machine); its aliases stay taken. */
  drop(machineID: string): void {
    this.devices.delete(machineID);
  }

  /** Forgets every device's values and births (a new session, or back to the cursor). */
  clear(): void {
    this.devices.clear();
  }
}

/** The row's metrics with its history sequence number. */
export function metricsOfRow(row: SequencedRow): MetricValue[] {
  return [...rowMetrics(row.cls, row.data), { name: SEQ_METRIC, type: 'UInt64', value: row.seq }];
}

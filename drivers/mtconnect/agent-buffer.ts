/**
 * The agent stand-in's memory, as an MTConnect agent keeps it: every
 * observation of every device with one agent-wide sequence number, in a ring
 * of `bufferSize` (older ones fall out, and asking for them is OUT_OF_RANGE),
 * the latest observation of each data item and the active entries of each
 * condition for /current, and the assets. A restart forgets it all under a
 * new instanceId.
 */
import type { DataItem } from './device-model.js';
import type { ConditionReport } from './observations.js';

export interface BufferedObservation {
  sequence: number;
  /** The device's index in the stand-in. */
  device: number;
  item: DataItem;
  /** ISO 8601 with microseconds, as agents write it. */
  timestamp: string;
  value: string;
  condition?: ConditionReport;
  assetType?: string;
}

export interface StoredAsset {
  assetId: string;
  type: string;
  device: number;
  timestamp: string;
  /** The asset's XML, parsed into the builder's node form. */
  node: unknown;
}

/** An MTConnect timestamp: ISO 8601 UTC with microseconds. */
export const agentTime = (ms: number): string => new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');

export class AgentBuffer {
  private ring: Array<BufferedObservation | undefined>;
  /** The next sequence number to hand out. */
  next = 1;
  readonly latest = new Map<string, BufferedObservation>();
  /** Active entries (by native code) of each condition data item. */
  readonly conditions = new Map<string, Map<string, BufferedObservation>>();
  readonly assets = new Map<string, StoredAsset>();

  constructor(readonly capacity: number) {
    this.ring = new Array<BufferedObservation | undefined>(capacity);
  }

  /** The oldest sequence still held. */
  get first(): number {
    return Math.max(1, this.next - this.capacity);
  }

  add(observation: Omit<BufferedObservation, 'sequence'>): BufferedObservation {
    const stored = { ...observation, sequence: this.next++ };
    this.ring[stored.sequence % this.capacity] = stored;
    this.latest.set(stored.item.id, stored);
    if (stored.condition) this.trackCondition(stored);
    return stored;
  }

  private trackCondition(o: BufferedObservation): void {
    const report = o.condition as ConditionReport;
    let active = this.conditions.get(o.item.id);
    if (!active) {
      active = new Map();
      this.conditions.set(o.item.id, active);
    }
    const code = report.nativeCode ?? '';
    if (report.level === 'UNAVAILABLE' || (report.level === 'NORMAL' && code === '')) active.clear();
    else if (report.level === 'NORMAL') active.delete(code);
    else active.set(code, o);
  }

  /** Up to `count` observations from `from` on (of the devices `wanted` says), and the sequence after the last one looked at. */
  range(from: number, count: number, wanted: (o: BufferedObservation) => boolean): { observations: BufferedObservation[]; next: number } {
    const observations: BufferedObservation[] = [];
    let sequence = Math.max(from, this.first);
    for (; sequence < this.next && observations.length < count; sequence++) {
      const o = this.ring[sequence % this.capacity];
      if (o && o.sequence === sequence && wanted(o)) observations.push(o);
    }
    return { observations, next: sequence };
  }

  /** What /current shows of a data item: a condition's active entries (or its last observation when none), else its latest observation. */
  current(item: DataItem): BufferedObservation[] {
    const active = this.conditions.get(item.id);
    if (active && active.size > 0) return [...active.values()];
    const latest = this.latest.get(item.id);
    return latest ? [latest] : [];
  }
}

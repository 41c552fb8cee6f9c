/**
 * The latest observation of every data item, as a source delivered it: an
 * adapter's SHDR lines or an agent's streams, both pushed, so a read answers
 * from here without asking the machine (as the MQTT driver does). Conditions
 * keep their active entries by native code, assets their latest version.
 * Everything is bounded: values by the device's data items, active
 * conditions per item, and assets in number.
 */
import type { ConditionLevel } from './streams.js';
import { toolLifeOf, type ParsedAsset } from './assets.js';
import type { ToolLifeRecord } from '../../core/driver-seam/driver.js';

export const UNAVAILABLE = 'UNAVAILABLE';

export interface Observed {
  /** The value as sent; `UNAVAILABLE` when the source has none. */
  value: string;
  /** The observation's own time, unix ms. */
  timestamp: number;
  /** When the gateway received it, unix ms. */
  receivedAt: number;
}

export interface ActiveCondition {
  level: 'WARNING' | 'FAULT';
  nativeCode: string;
  nativeSeverity?: string;
  qualifier?: string;
  message: string;
  /** When this entry became active at this level, unix ms. */
  since: number;
}

export interface ConditionState {
  /** The condition itself is UNAVAILABLE: nothing is known of its entries. */
  unavailable: boolean;
  /** Active entries by native code ('' for an entry without one). */
  active: Map<string, ActiveCondition>;
  timestamp: number;
}

export interface ConditionReport {
  level: ConditionLevel;
  nativeCode?: string;
  nativeSeverity?: string;
  qualifier?: string;
  message?: string;
}

interface StoredAsset {
  type: string;
  tool: ToolLifeRecord | undefined;
  receivedAt: number;
}

/** How many of each the store keeps. */
export interface StoreLimits {
  maxActiveConditionsPerItem: number;
  maxAssets: number;
}

export class ObservationStore {
  private readonly values = new Map<string, Observed>();
  private readonly conditions = new Map<string, ConditionState>();
  private readonly assets = new Map<string, StoredAsset>();
  constructor(private readonly limits: StoreLimits) {}

  setValue(id: string, value: string, timestamp: number, receivedAt: number): void {
    this.values.set(id, { value, timestamp, receivedAt });
  }

  value(id: string): Observed | undefined {
    return this.values.get(id);
  }

  /**
   * A condition observation, as the reference agent keeps them: NORMAL
   * without a native code clears every entry, NORMAL with one clears that
   * entry, WARNING and FAULT add or replace the entry of their code, and
   * UNAVAILABLE clears all and marks the condition unknown. Returns false
   * when a new entry was refused: the condition holds the most it keeps.
   */
  setCondition(id: string, report: ConditionReport, timestamp: number): boolean {
    let state = this.conditions.get(id);
    if (!state) {
      state = { unavailable: false, active: new Map(), timestamp };
      this.conditions.set(id, state);
    }
    state.timestamp = timestamp;
    const code = report.nativeCode ?? '';
    if (report.level === 'UNAVAILABLE') {
      state.unavailable = true;
      state.active.clear();
      return true;
    }
    state.unavailable = false;
    if (report.level === 'NORMAL') {
      if (code === '') state.active.clear();
      else state.active.delete(code);
      return true;
    }
    const previous = state.active.get(code);
    if (!previous && state.active.size >= this.limits.maxActiveConditionsPerItem) return false;
    state.active.set(code, {
      level: report.level,
      nativeCode: code,
      ...(report.nativeSeverity ? { nativeSeverity: report.nativeSeverity } : {}),
      ...(report.qualifier ? { qualifier: report.qualifier } : {}),
      message: report.message ?? '',
      since: previous && previous.level === report.level ? previous.since : timestamp,
    });
    return true;
  }

  condition(id: string): ConditionState | undefined {
    return this.conditions.get(id);
  }

  /** Stores an asset (its newest version); a removed one is dropped. Returns false when the bound refused it. */
  putAsset(asset: ParsedAsset, receivedAt: number): boolean {
    if (asset.removed) {
      this.assets.delete(asset.assetId);
      return true;
    }
    if (!this.assets.has(asset.assetId) && this.assets.size >= this.limits.maxAssets) return false;
    this.assets.set(asset.assetId, { type: asset.type, tool: toolLifeOf(asset), receivedAt });
    return true;
  }

  removeAsset(assetId: string): void {
    this.assets.delete(assetId);
  }

  /** Removes every asset, or those of one type. */
  removeAllAssets(type?: string): void {
    if (type === undefined || type === '') this.assets.clear();
    else for (const [id, asset] of this.assets) if (asset.type === type) this.assets.delete(id);
  }

  /** The tool life records of the cutting tools held, by tool number. */
  toolLife(): ToolLifeRecord[] {
    const records: ToolLifeRecord[] = [];
    for (const asset of this.assets.values()) if (asset.tool) records.push(asset.tool);
    return records.sort((a, b) => a.toolNum - b.toolNum || a.groupNum - b.groupNum);
  }

  get assetCount(): number {
    return this.assets.size;
  }

  /** Forgets everything: a new connection to an adapter, or an agent whose instance changed. */
  clear(): void {
    this.values.clear();
    this.conditions.clear();
    this.assets.clear();
  }
}

/**
 * Where /sample pages left off: the replays of the machines a page met, as
 * of the last row it read, and the observations of that row it had no room
 * for. A client paging forward from the nextSequence it was given goes on
 * from them instead of rebuilding the state of every machine it meets from
 * the history at each page. A few are kept (the most recent), each taken by
 * the one page that goes on from it.
 */
import type { DeviceModel } from './model.js';
import type { MachineReplay } from './replay.js';
import type { Served } from './served.js';

export interface Checkpoint {
  model: DeviceModel;
  /** The filter of the page (its data item ids, or '*' for every data item). */
  filterKey: string;
  /** The nextSequence the page answered: only a page from exactly there goes on from this one. */
  next: number;
  /** The last row the replays applied. */
  afterRow: number;
  replays: Map<string, MachineReplay>;
  /** Observations of `afterRow` at or after `next` the page had no room for, in order. */
  rest: Served[];
}

/**
 * How many places pages left off are kept: one for each of a few dozen
 * streams and paging clients (each place holds one small replay per machine
 * met); beyond them, the oldest is read afresh next time.
 */
const KEPT = 32;

/** The key of a page's filter. */
export function filterKeyOf(filter: Set<string> | undefined): string {
  return filter ? [...filter].sort().join(' ') : '*';
}

export class ReplayCheckpoints {
  private kept: Checkpoint[] = [];

  /** The checkpoint a page from `start` with this model and filter goes on from, taken out of the kept ones. */
  take(model: DeviceModel, filterKey: string, start: number): Checkpoint | undefined {
    const at = this.kept.findIndex((c) => c.next === start && c.model === model && c.filterKey === filterKey);
    if (at < 0) return undefined;
    const [found] = this.kept.splice(at, 1);
    return found;
  }

  /** Keeps `checkpoint`, forgetting the oldest beyond KEPT. */
  put(checkpoint: Checkpoint): void {
    this.kept.push(checkpoint);
    if (this.kept.length > KEPT) this.kept.shift();
  }
}

/**
 * Revisions of the settled past of each machine's history. Anything computed
 * from settled history (the per-day analysis cells) is kept with the revision
 * it was read at and is valid only while that revision holds. A revision
 * changes when a committed row lands in the settled past of its machine (a
 * late row, or an AlarmHistory row whose alarm started there), and for every
 * machine when retention deletes rows.
 */

/** A block is settled this long after its end, at the least; longer when gateway gaps take longer to judge. */
export const MIN_SETTLE_MS = 10 * 60_000;

/** How long after a moment history before it counts as settled: a gap needs 2 × heartbeatSec of silence to show. */
export function settleMsFor(heartbeatSec: number): number {
  return Math.max(MIN_SETTLE_MS, 3 * heartbeatSec * 1000);
}

export class HistoryRevisions {
  private counter = 0;
  private allRevision = 0;
  private readonly byMachine = new Map<string, number>();

  constructor(
    /** History older than now minus this is settled. */
    readonly settleMs: number,
  ) {}

  /** The start of the unsettled present: rows before it are settled. */
  settledBefore(nowMs: number): number {
    return nowMs - this.settleMs;
  }

  /** The current revision of one machine's settled history. */
  of(machineID: string): number {
    return Math.max(this.allRevision, this.byMachine.get(machineID) ?? 0);
  }

  /** Rows of `machineID` in its settled past were added or changed. */
  bump(machineID: string): void {
    this.byMachine.set(machineID, ++this.counter);
  }

  /** Rows of any machine may have been removed (retention). */
  bumpAll(): void {
    this.allRevision = ++this.counter;
    this.byMachine.clear();
  }
}

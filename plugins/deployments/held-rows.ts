/**
 * The rows of one leased table this instance holds, each under the epoch it
 * claimed it with (lease.ts). A hold is trusted without asking the database
 * while less than half the lease time has passed since the database last
 * confirmed it (the claim, a renewal, an opened transfer). After longer (a
 * stall of the process, a renewal held up) the lease may have ended and
 * another instance may hold the row under a higher epoch, so before touching
 * a machine the holder asks the database again, which renews the lease when
 * it still holds the row. Questions asked together go in one statement.
 */
import type { SqlDatabase } from '../../core/store/sql-database.js';
import { WriteRounds } from '../../core/store/write-rounds.js';
import { renewRows, type Lease, type LeasedTable } from './lease.js';

/**
 * The part of the lease time a hold is trusted for after the database last
 * confirmed it: the rest covers the clocks of instances that differ a little
 * and a request on its way to the gateway, whose own check of the epoch
 * stops what gets past this one.
 */
export const TRUSTED_PART = 0.5;

interface Hold {
  epoch: number;
  /** performance.now() taken before the statement that confirmed it was sent. */
  confirmedAt: number;
}

export class HeldRows {
  private readonly rows = new Map<string, Hold>();
  /** Holds asked of the database, in rounds. */
  private readonly asks: WriteRounds<string, number | undefined>;

  constructor(
    private readonly db: SqlDatabase,
    private readonly table: LeasedTable,
    readonly lease: Lease,
    /** The service's clock, for the lease's end as stored. */
    private readonly now: () => number,
  ) {
    this.asks = new WriteRounds(async (jobs) => {
      const at = performance.now();
      const held = await renewRows(this.db, this.table, this.lease, this.now(), [...new Set(jobs.map((j) => j.item))]);
      this.confirmAll(held, at);
      for (const job of jobs) job.resolve(held.get(job.item));
    });
  }

  /** Notes that the database holds `id` for this instance under `epoch`, as of `at` (taken before the statement that said so was sent). */
  hold(id: string, epoch: number, at: number): void {
    this.rows.set(id, { epoch, confirmedAt: at });
  }

  /** The epoch this instance holds `id` under; undefined when it does not hold it. */
  epochOf(id: string): number | undefined {
    return this.rows.get(id)?.epoch;
  }

  forget(id: string): void {
    this.rows.delete(id);
  }

  /** Notes that the database confirmed `id` under `epoch` as of `at`; a hold under another epoch is left as it is. */
  confirm(id: string, epoch: number, at: number): void {
    const hold = this.rows.get(id);
    if (hold?.epoch === epoch && at > hold.confirmedAt) hold.confirmedAt = at;
  }

  private confirmAll(held: ReadonlyMap<string, number>, at: number): void {
    for (const [id, epoch] of held) this.confirm(id, epoch, at);
  }

  /** Renews every lease of this instance on the table; answers the rows it still holds, each with its epoch. */
  async renew(): Promise<Map<string, number>> {
    const at = performance.now();
    const held = await renewRows(this.db, this.table, this.lease, this.now());
    this.confirmAll(held, at);
    return held;
  }

  /**
   * Whether this instance still holds `id` under `epoch`: at once while the
   * hold was confirmed within TRUSTED_PART of the lease time, otherwise as
   * the database answers (renewing the lease when it does).
   */
  async stillHeld(id: string, epoch: number): Promise<boolean> {
    const hold = this.rows.get(id);
    if (hold?.epoch !== epoch) return false;
    if (performance.now() - hold.confirmedAt < this.lease.ms * TRUSTED_PART) return true;
    return (await this.asks.add(id)) === epoch;
  }
}

/**
 * History retention: deletes rows older than a class's `maxAgeDays` and trims
 * a class to its newest `maxRows` (counted over all machines). Work goes in
 * small batches, each its own write job, so the history writer's flushes and
 * other writes take turns with it instead of waiting for the whole run. Only
 * history rows are deleted; the sequence high-water mark in `meta` is never
 * touched, so seq keeps rising even when every row is gone.
 */
import type { Database } from '../../../store/database.js';
import { DAY_MS } from '../../../values/time.js';
import { historyClasses, historyMachineIDs } from './catalog.js';
import { HISTORY_INDEX } from './query.js';
import { forEachHistoryRow } from './stream.js';

/** Limits of one class; 0 means no limit. */
export interface RetentionLimits {
  maxAgeDays: number;
  maxRows: number;
}

export interface RetentionPolicy {
  default: RetentionLimits;
  classes: Record<string, RetentionLimits>;
}

/** Rows deleted for one class in one run. */
export interface ClassDeletions {
  byAge: number;
  byRows: number;
}

export interface RetentionRun {
  /** Unix ms. */
  startedAtMs: number;
  finishedAtMs: number;
  durationMs: number;
  /** Per class present in the table when the run began. */
  deleted: Record<string, ClassDeletions>;
  totalDeleted: number;
  /** Write jobs used; each deletes at most `batchRows`. */
  batches: number;
  /** True when the run stopped early because the gateway is stopping. */
  interrupted: boolean;
}

export interface RetentionOptions {
  /** Unix ms the age limits count back from. */
  now: number;
  /** Rows per write job (default 5,000). */
  batchRows?: number;
  /** Asked between batches; true ends the run early. */
  shouldStop?: () => boolean;
  /** Clock for the run's own timing (default Date.now). */
  clock?: () => number;
}

export const DEFAULT_BATCH_ROWS = 5000;
/** Parameters per DELETE … IN (…) statement, well under SQLite's variable limit. */
const SEQS_PER_STATEMENT = 500;

/** The limits that apply to `cls`: its own entry, else the default. */
export function limitsFor(policy: RetentionPolicy, cls: string): RetentionLimits {
  return Object.hasOwn(policy.classes, cls) ? (policy.classes[cls] as RetentionLimits) : policy.default;
}

class RetentionJob {
  batches = 0;
  interrupted = false;

  constructor(
    private readonly db: Database,
    private readonly batchRows: number,
    private readonly shouldStop: () => boolean,
  ) {}

  private stopping(): boolean {
    if (this.shouldStop()) this.interrupted = true;
    return this.interrupted;
  }

  /** Deletes rows of (machine, class) older than `cutoffMs`, one batch per write job. */
  async deleteOlderThan(machineID: string, cls: string, cutoffMs: number): Promise<number> {
    let deleted = 0;
    while (!this.stopping()) {
      const { changes } = await this.db.write((tx) =>
        tx.run(
          `DELETE FROM history WHERE seq IN (SELECT seq FROM history INDEXED BY ${HISTORY_INDEX} WHERE machine_id = ? AND class = ? AND ts < ? ORDER BY ts, seq LIMIT ?)`,
          [machineID, cls, cutoffMs, this.batchRows],
        ),
      );
      this.batches++;
      deleted += changes;
      if (changes < this.batchRows) break;
    }
    return deleted;
  }

  /** Deletes the oldest rows of `cls` over `machineIDs` until at most `maxRows` remain. */
  async trimToRows(machineIDs: readonly string[], cls: string, maxRows: number): Promise<number> {
    let total = 0;
    for (const machineID of machineIDs) {
      const row = await this.db.get<{ n: number }>(`SELECT COUNT(*) AS n FROM history INDEXED BY ${HISTORY_INDEX} WHERE machine_id = ? AND class = ?`, [
        machineID,
        cls,
      ]);
      total += row?.n ?? 0;
    }
    let excess = total - maxRows;
    let deleted = 0;
    while (excess > 0 && !this.stopping()) {
      const take = Math.min(excess, this.batchRows);
      const seqs: number[] = [];
      await forEachHistoryRow(
        this.db,
        { sources: machineIDs.map((machineID) => ({ machineID, cls })), startMs: 0, endMs: Number.MAX_SAFE_INTEGER, order: 'asc' },
        (r) => seqs.push(r.seq) < take,
      );
      if (seqs.length === 0) break;
      const changes = await this.deleteSeqs(seqs);
      this.batches++;
      deleted += changes;
      excess -= seqs.length;
    }
    return deleted;
  }

  private deleteSeqs(seqs: readonly number[]): Promise<number> {
    return this.db.write(
      async (tx) => {
        let changes = 0;
        for (let i = 0; i < seqs.length; i += SEQS_PER_STATEMENT) {
          const chunk = seqs.slice(i, i + SEQS_PER_STATEMENT);
          changes += (await tx.run(`DELETE FROM history WHERE seq IN (${chunk.map(() => '?').join(',')})`, chunk)).changes;
        }
        return changes;
      },
      { transaction: true },
    );
  }
}

/** One retention run over every class present in the history table. */
export async function runRetention(db: Database, policy: RetentionPolicy, options: RetentionOptions): Promise<RetentionRun> {
  const clock = options.clock ?? Date.now;
  const startedAtMs = clock();
  const job = new RetentionJob(db, options.batchRows ?? DEFAULT_BATCH_ROWS, options.shouldStop ?? (() => false));
  const machinesByClass = new Map<string, string[]>();
  for (const machineID of await historyMachineIDs(db)) {
    for (const cls of await historyClasses(db, machineID)) machinesByClass.set(cls, [...(machinesByClass.get(cls) ?? []), machineID]);
  }
  const deleted: Record<string, ClassDeletions> = {};
  for (const [cls, machineIDs] of [...machinesByClass].sort(([a], [b]) => a.localeCompare(b))) {
    const limits = limitsFor(policy, cls);
    const counts: ClassDeletions = { byAge: 0, byRows: 0 };
    deleted[cls] = counts;
    if (limits.maxAgeDays > 0) {
      const cutoffMs = options.now - limits.maxAgeDays * DAY_MS;
      for (const machineID of machineIDs) counts.byAge += await job.deleteOlderThan(machineID, cls, cutoffMs);
    }
    if (limits.maxRows > 0) counts.byRows = await job.trimToRows(machineIDs, cls, limits.maxRows);
  }
  const finishedAtMs = clock();
  const totalDeleted = Object.values(deleted).reduce((sum, c) => sum + c.byAge + c.byRows, 0);
  return { startedAtMs, finishedAtMs, durationMs: finishedAtMs - startedAtMs, deleted, totalDeleted, batches: job.batches, interrupted: job.interrupted };
}

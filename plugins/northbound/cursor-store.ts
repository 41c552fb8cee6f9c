/**
 * Each target's persisted position, by target name: the cursor (the highest
 * history sequence number through which the broker acknowledged every row),
 * the rows it lost to retention and skipped as too large (counted for the
 * target's whole life, not per run), and the last Sparkplug bdSeq it used
 * (so a restarted gateway goes on with the next one and a host can tell the
 * new session's death from the old one's).
 */
import type { Migration } from '../../core/store/migrations.js';
import type { Database } from '../../core/store/database.js';

export const CURSOR_MIGRATIONS: readonly Migration[] = [
  {
    id: 1,
    name: 'northbound cursors',
    up: [
      `CREATE TABLE northbound_cursors (
          target        TEXT PRIMARY KEY,
          cursor        INTEGER NOT NULL,
          lost_rows     INTEGER NOT NULL DEFAULT 0,
          oversize_rows INTEGER NOT NULL DEFAULT 0,
          bd_seq        INTEGER NOT NULL DEFAULT -1,
          updated_at    INTEGER NOT NULL
        )`,
    ],
  },
];

/** A target's persisted position; bdSeq -1 before its first Sparkplug connection. */
export interface StoredPosition {
  cursor: number;
  lostRows: number;
  oversizeRows: number;
  bdSeq: number;
}

export class CursorStore {
  constructor(
    private readonly db: Database,
    private readonly now: () => number,
  ) {}

  /** The target's stored position, or undefined for a target seen for the first time. */
  async read(target: string): Promise<StoredPosition | undefined> {
    const row = await this.db.get<{ cursor: number; lost_rows: number; oversize_rows: number; bd_seq: number }>(
      'SELECT cursor, lost_rows, oversize_rows, bd_seq FROM northbound_cursors WHERE target = ?',
      [target],
    );
    return row ? { cursor: row.cursor, lostRows: row.lost_rows, oversizeRows: row.oversize_rows, bdSeq: row.bd_seq } : undefined;
  }

  /** Keeps the target's position (one small write job, serialised with the history's flushes). */
  async write(target: string, position: StoredPosition): Promise<void> {
    await this.db.write((tx) =>
      tx.run(
        `INSERT INTO northbound_cursors (target, cursor, lost_rows, oversize_rows, bd_seq, updated_at) VALUES (?, ?, ?, ?, ?, ?)
         ON CONFLICT (target) DO UPDATE SET cursor = excluded.cursor, lost_rows = excluded.lost_rows, oversize_rows = excluded.oversize_rows, bd_seq = excluded.bd_seq, updated_at = excluded.updated_at`,
        [target, position.cursor, position.lostRows, position.oversizeRows, position.bdSeq, this.now()],
      ),
    );
  }

  /**
   * Where a target seen for the first time starts: after the last row
   * recorded before this start of the gateway (`startedAt`), so it
   * forwards what the gateway records from now on, not its whole past; in
   * a history that keeps nothing older, before its first row, or at
   * `committedThrough` when it holds none. The rows of this run are the
   * newest, so the read walks back over them only.
   */
  async startOfRun(startedAt: number, committedThrough: number): Promise<number> {
    const before = await this.db.get<{ seq: number }>('SELECT seq FROM history WHERE ts < ? ORDER BY seq DESC LIMIT 1', [startedAt]);
    if (before) return before.seq;
    const first = await this.db.get<{ seq: number | null }>('SELECT MIN(seq) AS seq FROM history');
    return first && first.seq !== null ? first.seq - 1 : committedThrough;
  }
}

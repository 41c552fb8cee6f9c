/**
 * The one batched history writer. Rows are buffered and written as multi-row
 * INSERTs inside one transaction, when `maxRows` are waiting or at the latest
 * `flushIntervalMs` after the first row of a batch arrived. Each row gets the
 * next value of a monotonically increasing sequence number, kept across
 * restarts, so that clients can resume reading after the last seq they saw.
 */
import type { Logger } from 'pino';
import type { Database, SqlValue } from '../../../store/database.js';
import { HistoryRevisions, MIN_SETTLE_MS } from './revisions.js';
import type { SequencedRow } from './sequence.js';

export interface HistoryRow {
  machineID: string;
  /** Data class, e.g. CNCStatus, AlarmLog, Count, Heartbeat. */
  cls: string;
  /** Unix milliseconds. */
  ts: number;
  data: unknown;
}

export interface HistoryWriterOptions {
  maxRows?: number;
  flushIntervalMs?: number;
  /** Rows kept in memory while the database refuses writes; beyond it the oldest are dropped and counted. */
  maxBufferedRows?: number;
  logger?: Logger;
  /** Revisions bumped when committed rows land in the settled past; a new set settling after MIN_SETTLE_MS when absent. */
  revisions?: HistoryRevisions;
  /** Current time, unix ms. */
  now?: () => number;
  /** Told the seconds each committed flush took (the gateway's metrics). */
  observeFlush?: (seconds: number) => void;
}

export interface HistoryWriterStats {
  rowsWritten: number;
  flushes: number;
  pending: number;
  /** Rows handed to a flush and not yet committed (flushes wait for each other). */
  inFlight: number;
  droppedRows: number;
  failedFlushes: number;
  lastSeq: number;
}

const COLUMNS = 5;
const SEQ_KEY = 'history.seq';

/**
 * Told each committed flush: its rows in sequence order, and the writer's
 * `committedThrough` after it. A flush that failed is retried after later
 * ones, so rows can commit out of sequence order; only rows at or below
 * `committedThrough` are final in the sense a resuming reader needs.
 */
export type CommitListener = (rows: readonly SequencedRow[], committedThrough: number) => void;

export class HistoryWriter {
  private buffer: SqlValue[][] = [];
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> = Promise.resolve();
  private seq = 0;
  private closed = false;
  /** The first sequence number of each flush handed to the database and not yet committed or put back. */
  private readonly inFlightFirsts = new Set<number>();
  private readonly commitListeners = new Set<CommitListener>();
  private readonly maxRows: number;
  private readonly flushIntervalMs: number;
  private readonly maxBufferedRows: number;
  private readonly sqlByCount = new Map<number, string>();
  /** Revisions of each machine's settled history, bumped by late rows. */
  readonly revisions: HistoryRevisions;
  private readonly now: () => number;
  readonly stats: HistoryWriterStats = {
    rowsWritten: 0,
    flushes: 0,
    pending: 0,
    inFlight: 0,
    droppedRows: 0,
    failedFlushes: 0,
    lastSeq: 0,
  };

  private constructor(
    private readonly db: Database,
    private readonly options: HistoryWriterOptions,
  ) {
    this.maxRows = options.maxRows ?? 500;
    this.flushIntervalMs = options.flushIntervalMs ?? 750;
    this.maxBufferedRows = options.maxBufferedRows ?? 200_000;
    this.revisions = options.revisions ?? new HistoryRevisions(MIN_SETTLE_MS);
    this.now = options.now ?? Date.now;
  }

  /** Creates a writer that continues the sequence stored in `db`. */
  static async open(db: Database, options: HistoryWriterOptions = {}): Promise<HistoryWriter> {
    const writer = new HistoryWriter(db, options);
    const stored = await db.get<{ value: string }>('SELECT value FROM meta WHERE key = ?', [SEQ_KEY]);
    const max = await db.get<{ seq: number | null }>('SELECT MAX(seq) AS seq FROM history');
    writer.seq = Math.max(Number(stored?.value ?? 0), max?.seq ?? 0);
    writer.stats.lastSeq = writer.seq;
    return writer;
  }

  /** Queues one row and returns its sequence number. */
  push(row: HistoryRow): number {
    if (this.closed) throw new Error('history writer is closed');
    const seq = ++this.seq;
    this.buffer.push([seq, row.machineID, row.cls, Math.round(row.ts), JSON.stringify(row.data)]);
    if (this.buffer.length > this.maxBufferedRows) {
      this.buffer.shift();
      this.stats.droppedRows++;
    }
    this.stats.pending = this.buffer.length;
    this.stats.lastSeq = seq;
    if (this.buffer.length >= this.maxRows) void this.flush();
    else if (!this.timer) {
      this.timer = setTimeout(() => void this.flush(), this.flushIntervalMs);
    }
    return seq;
  }

  /** Writes everything queued so far; resolves when it is committed. */
  flush(): Promise<void> {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    const rows = this.buffer;
    if (rows.length === 0) return this.flushing;
    this.buffer = [];
    this.stats.pending = 0;
    const lastSeq = rows[rows.length - 1]?.[0] as number;
    const firstSeq = rows[0]?.[0] as number;
    this.stats.inFlight += rows.length;
    this.inFlightFirsts.add(firstSeq);
    this.flushing = this.flushing
      .then(() => this.writeRows(rows, lastSeq))
      .finally(() => {
        this.stats.inFlight -= rows.length;
        this.inFlightFirsts.delete(firstSeq);
      });
    return this.flushing;
  }

  /**
   * The highest sequence number at or below which every row is committed (or
   * was dropped, counted in `droppedRows`): a reader that resumes after its
   * last seq reads the history up to here and misses nothing.
   */
  get committedThrough(): number {
    let lowest = this.buffer.length > 0 ? (this.buffer[0]![0] as number) : this.seq + 1;
    for (const first of this.inFlightFirsts) lowest = Math.min(lowest, first);
    return lowest - 1;
  }

  /** Calls `listener` after each committed flush (see `CommitListener`); answers the way to stop. */
  onCommit(listener: CommitListener): () => void {
    this.commitListeners.add(listener);
    return () => this.commitListeners.delete(listener);
  }

  private async writeRows(rows: SqlValue[][], lastSeq: number): Promise<void> {
    const started = performance.now();
    try {
      await this.db.write(
        async (tx) => {
          for (let i = 0; i < rows.length; i += this.maxRows) {
            const chunk = rows.slice(i, i + this.maxRows);
            await tx.run(this.insertSql(chunk.length), chunk.flat());
          }
          await tx.run('INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value', [
            SEQ_KEY,
            String(lastSeq),
          ]);
        },
        { transaction: true },
      );
      this.stats.rowsWritten += rows.length;
      this.stats.flushes++;
      this.options.observeFlush?.((performance.now() - started) / 1000);
      this.noteSettledRows(rows);
      this.tellCommitted(rows, rows[0]![0] as number);
    } catch (err) {
      // Keep the rows for the next flush rather than losing them; the buffer bound protects memory.
      this.stats.failedFlushes++;
      this.options.logger?.error({ err, rows: rows.length }, 'history flush failed; rows kept for retry');
      this.inFlightFirsts.delete(rows[0]![0] as number);
      this.putBack(rows);
      this.stats.pending = this.buffer.length;
      if (!this.closed && !this.timer) this.timer = setTimeout(() => void this.flush(), this.flushIntervalMs);
    }
  }

  /**
   * Puts a failed flush's rows back in the buffer, in sequence order (a later
   * flush that also failed may already be back there), dropping and counting
   * the oldest beyond the buffer's bound.
   */
  private putBack(rows: SqlValue[][]): void {
    const merged = rows.concat(this.buffer);
    const next = this.buffer[0];
    if (next && (next[0] as number) < (rows[rows.length - 1]![0] as number)) merged.sort((a, b) => (a[0] as number) - (b[0] as number));
    const over = merged.length - this.maxBufferedRows;
    if (over > 0) this.stats.droppedRows += over;
    this.buffer = over > 0 ? merged.slice(over) : merged;
  }

  /** Hands a committed flush to the commit listeners, its first seq no longer counted in flight. */
  private tellCommitted(rows: readonly SqlValue[][], firstSeq: number): void {
    this.inFlightFirsts.delete(firstSeq);
    if (this.commitListeners.size === 0) return;
    const committed: SequencedRow[] = rows.map((r) => ({ seq: r[0] as number, machineID: r[1] as string, cls: r[2] as string, ts: r[3] as number, data: r[4] as string }));
    const through = this.committedThrough;
    for (const listener of this.commitListeners) {
      try {
        listener(committed, through);
      } catch (err) {
        this.options.logger?.error({ err }, 'a history commit listener failed');
      }
    }
  }

  /**
   * Bumps the revision of every machine with a committed row in its settled
   * past: a row older than the settle time, or an AlarmHistory row (written
   * when the alarm ends) whose alarm started there.
   */
  private noteSettledRows(rows: readonly SqlValue[][]): void {
    const settledBefore = this.revisions.settledBefore(this.now());
    let bumped: Set<string> | undefined;
    for (const row of rows) {
      const machineID = row[1] as string;
      if (bumped?.has(machineID)) continue;
      let earliest = row[3] as number;
      if (row[2] === 'AlarmHistory' && earliest >= settledBefore && typeof row[4] === 'string') {
        const start = (JSON.parse(row[4] as string) as { start?: unknown } | null)?.start;
        if (typeof start === 'number') earliest = Math.min(earliest, start);
      }
      if (earliest < settledBefore) {
        this.revisions.bump(machineID);
        (bumped ??= new Set()).add(machineID);
      }
    }
  }

  private insertSql(count: number): string {
    let sql = this.sqlByCount.get(count);
    if (!sql) {
      const tuple = `(${new Array(COLUMNS).fill('?').join(',')})`;
      sql = `INSERT INTO history (seq, machine_id, class, ts, data) VALUES ${new Array(count).fill(tuple).join(',')}`;
      this.sqlByCount.set(count, sql);
    }
    return sql;
  }

  /** Flushes what is queued and refuses further rows. */
  async close(): Promise<void> {
    await this.flush();
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }
}

/**
 * Reads history rows of one or many (machine, class) runs merged into one
 * (time, seq) order, without loading a window into memory: each run is read
 * in bounded chunks by keyset (resuming after the last row seen, through the
 * index), and a heap merges the runs. Memory holds one chunk per run plus
 * whatever the caller keeps.
 */
import type { Database } from '../../../store/database.js';
import { buildCursorQuery, dataPathColumn, type HistoryCursorSpec, type KeysetPosition } from './query.js';

/** A history row as read, its data parsed. */
export interface StoredHistoryRow {
  seq: number;
  /** Unix milliseconds. */
  ts: number;
  machineID: string;
  cls: string;
  /** The `data` column's value, when selected. */
  data?: unknown;
  /** The value at each selected data path, in the order asked; null where the path is absent. */
  paths?: unknown[];
}

/** The runs to merge and what to read from each. */
export interface HistoryReadSpec extends Omit<HistoryCursorSpec, 'machineID' | 'cls'> {
  sources: readonly { machineID: string; cls: string }[];
}

/** Rows buffered across all runs of one read, and the bounds of one run's chunk. */
const ROWS_IN_FLIGHT = 20_000;
const MIN_CHUNK_ROWS = 200;
const MAX_CHUNK_ROWS = 5000;

type RawRow = { seq: number; ts: number; machine_id: string; class: string; data?: unknown } & Record<string, unknown>;

/** One (machine, class) run, read chunk by chunk. */
class RunCursor {
  private rows: RawRow[] = [];
  private next = 0;
  private exhausted = false;
  private after: KeysetPosition | null = null;

  constructor(
    private readonly db: Database,
    private readonly spec: HistoryCursorSpec,
    private readonly chunkRows: number,
  ) {}

  /**
   * Makes sure a head row is loaded; false when the run has no more rows.
   * `wanted` caps the chunk: the caller takes no more rows than that from all runs together.
   */
  async ready(wanted = Infinity): Promise<boolean> {
    if (this.next < this.rows.length) return true;
    if (this.exhausted) return false;
    const size = Math.max(1, Math.min(this.chunkRows, wanted));
    const { sql, params } = buildCursorQuery(this.spec, this.after, size);
    // SQLite builds the chunk as one JSON array on its own thread, data embedded as JSON rather
    // than as text: one JSON.parse here is far cheaper than node-sqlite3 materialising thousands
    // of row objects on the event loop and a second parse per row.
    const columns = [
      "'seq', seq, 'ts', ts, 'machine_id', machine_id, 'class', class",
      ...(this.spec.withData ? ["'data', json(data)"] : []),
      ...(this.spec.dataPaths ?? []).map((_, i) => `'${dataPathColumn(i)}', json(${dataPathColumn(i)})`),
    ];
    const chunk = await this.db.get<{ rows: string }>(`SELECT json_group_array(json_object(${columns.join(', ')})) AS rows FROM (${sql})`, params);
    this.rows = JSON.parse(chunk?.rows ?? '[]') as RawRow[];
    this.next = 0;
    if (this.rows.length < size) this.exhausted = true;
    const last = this.rows[this.rows.length - 1];
    if (last) this.after = { ts: last.ts, seq: last.seq };
    return this.rows.length > 0;
  }

  /** Whether a row is loaded without another query. */
  buffered(): boolean {
    return this.next < this.rows.length;
  }

  head(): RawRow {
    return this.rows[this.next] as RawRow;
  }

  take(): StoredHistoryRow {
    const raw = this.head();
    this.next++;
    const row: StoredHistoryRow = { seq: raw.seq, ts: raw.ts, machineID: raw.machine_id, cls: raw.class };
    if (raw.data !== undefined) row.data = raw.data;
    const paths = this.spec.dataPaths ?? [];
    if (paths.length) row.paths = paths.map((_, i) => raw[dataPathColumn(i)] ?? null);
    return row;
  }
}

/** A binary min-heap of cursors by their head row, under `before`. */
class CursorHeap {
  private readonly items: RunCursor[] = [];

  constructor(private readonly before: (a: RawRow, b: RawRow) => boolean) {}

  push(cursor: RunCursor): void {
    const items = this.items;
    items.push(cursor);
    let i = items.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.before(items[i]!.head(), items[parent]!.head())) break;
      [items[i], items[parent]] = [items[parent]!, items[i]!];
      i = parent;
    }
  }

  peek(): RunCursor | undefined {
    return this.items[0];
  }

  pop(): RunCursor | undefined {
    const items = this.items;
    const top = items[0];
    const last = items.pop();
    if (items.length === 0 || !last) return top;
    items[0] = last;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let best = i;
      if (l < items.length && this.before(items[l]!.head(), items[best]!.head())) best = l;
      if (r < items.length && this.before(items[r]!.head(), items[best]!.head())) best = r;
      if (best === i) return top;
      [items[i], items[best]] = [items[best]!, items[i]!];
      i = best;
    }
  }
}

/** Rows per chunk for `runs` runs read together: the whole read keeps about ROWS_IN_FLIGHT rows buffered. */
export function chunkRowsFor(runs: number): number {
  return Math.max(MIN_CHUNK_ROWS, Math.min(MAX_CHUNK_ROWS, Math.floor(ROWS_IN_FLIGHT / Math.max(1, runs))));
}

/**
 * Calls `onRow` with the rows of every run in `spec`, merged in (time, seq)
 * order (descending for `desc`), until the runs end or `onRow` returns false.
 * A run's rows are handed over synchronously for as long as they come before
 * every other run's next row, so one run costs one await per chunk, not per row.
 * `maxRows` is the most rows the caller will take: no chunk reads beyond it.
 */
export async function forEachHistoryRow(
  db: Database,
  spec: HistoryReadSpec,
  onRow: (row: StoredHistoryRow) => boolean | void,
  chunkRows = chunkRowsFor(spec.sources.length),
  maxRows = Infinity,
): Promise<void> {
  const { sources, ...common } = spec;
  const before =
    spec.order === 'asc'
      ? (a: RawRow, b: RawRow) => a.ts < b.ts || (a.ts === b.ts && a.seq < b.seq)
      : (a: RawRow, b: RawRow) => a.ts > b.ts || (a.ts === b.ts && a.seq > b.seq);
  const heap = new CursorHeap(before);
  let taken = 0;
  for (const source of sources) {
    const cursor = new RunCursor(db, { ...common, ...source }, chunkRows);
    if (await cursor.ready(maxRows)) heap.push(cursor);
  }
  for (let cursor = heap.pop(); cursor; cursor = heap.pop()) {
    const rival = heap.peek()?.head();
    do {
      taken++;
      if (onRow(cursor.take()) === false) return;
    } while (cursor.buffered() && (!rival || before(cursor.head(), rival)));
    if (await cursor.ready(maxRows - taken)) heap.push(cursor);
  }
}

/** A page of rows and whether more existed beyond `limit`. */
export interface HistoryPage<T> {
  rows: T[];
  limitReached: boolean;
}

/**
 * Up to `limit` merged rows (0 = no limit), each turned into what the caller
 * keeps by `map` as it arrives; one row beyond the limit is read to tell
 * whether the limit cut the answer.
 */
export async function readHistoryPage<T>(
  db: Database,
  spec: HistoryReadSpec,
  limit: number,
  map: (row: StoredHistoryRow) => T,
  chunkRows = chunkRowsFor(spec.sources.length),
): Promise<HistoryPage<T>> {
  const chunk = limit > 0 ? Math.min(limit + 1, chunkRows) : chunkRows;
  const rows: T[] = [];
  let limitReached = false;
  await forEachHistoryRow(
    db,
    spec,
    (row) => {
      if (limit > 0 && rows.length === limit) {
        limitReached = true;
        return false;
      }
      rows.push(map(row));
      return true;
    },
    chunk,
    // The row after the limit only tells whether the limit cut the answer.
    limit > 0 ? limit + 1 : Infinity,
  );
  return { rows, limitReached };
}

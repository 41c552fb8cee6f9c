/**
 * The one database seam of every store: the same methods on SQLite
 * (`SqliteDatabase`, core/store/database.ts) and on PostgreSQL
 * (`PostgresDatabase`, core/store/postgres-database.ts), so a store written
 * once against `SqlDatabase` runs on both. The rules a portable statement
 * follows are in docs/databases.md.
 *
 * Both engines keep the same two promises SQLite made the stores before the
 * seam existed: one instance's write jobs run one at a time (so a job's
 * read-then-write is never interleaved with another job of the same
 * instance), and reads run beside them without seeing a transaction before
 * it commits. What several instances on one PostgreSQL need on top of that
 * is explicit: `tx.lock(name)`, and `dialect.claimRows` for queues.
 */

/** A bound parameter. Integers are exact within ±2^53 on both engines; a bigint beyond that is refused. */
export type SqlValue = string | number | bigint | null | Buffer;
export type Row = Record<string, unknown>;

export type Engine = 'sqlite' | 'postgres';

/** The few pieces of SQL text that differ by engine, for statements otherwise portable. */
export interface Dialect {
  readonly engine: Engine;
  /**
   * Appended to a SELECT inside a write transaction to claim the rows it
   * returns: ` FOR UPDATE SKIP LOCKED` on PostgreSQL (another instance's
   * claim skips them instead of waiting), nothing on SQLite, whose write
   * transaction already holds the whole database.
   */
  readonly claimRows: string;
  /** Appended to a SELECT inside a write transaction to lock its rows until commit: ` FOR UPDATE`, or nothing on SQLite. */
  readonly lockRows: string;
  /**
   * A subquery of one column, `value`, with the strings of a JSON array bound
   * as one parameter: `x IN (${dialect.textsOf})` with `[JSON.stringify(list)]`
   * takes a list of any length as one bound value.
   */
  readonly textsOf: string;
}

export const SQLITE_DIALECT: Dialect = { engine: 'sqlite', claimRows: '', lockRows: '', textsOf: 'SELECT value FROM json_each(?)' };
export const POSTGRES_DIALECT: Dialect = { engine: 'postgres', claimRows: ' FOR UPDATE SKIP LOCKED', lockRows: ' FOR UPDATE', textsOf: 'SELECT json_array_elements_text(CAST(? AS json)) AS value' };

/** Statements a write job can run. */
export interface WriteTx {
  readonly dialect: Dialect;
  /** `lastID` is SQLite's rowid (0 on PostgreSQL): a portable store reads generated values with RETURNING. */
  run(sql: string, params?: SqlValue[]): Promise<{ changes: number; lastID: number }>;
  all<T extends Row = Row>(sql: string, params?: SqlValue[]): Promise<T[]>;
  get<T extends Row = Row>(sql: string, params?: SqlValue[]): Promise<T | undefined>;
  /**
   * Holds the named lock until the transaction ends, waiting while another
   * instance holds it: `pg_advisory_xact_lock` on PostgreSQL; nothing to do on
   * SQLite, whose write transaction already excludes every other writer.
   * Only inside `write(job, { transaction: true })`; elsewhere it throws.
   */
  lock(name: string): Promise<void>;
}

export interface SqlDatabase {
  readonly dialect: Dialect;
  /** Runs `job` alone among this instance's write jobs; with `transaction`, inside one transaction that a throw rolls back. */
  write<T>(job: (tx: WriteTx) => Promise<T>, options?: { transaction?: boolean }): Promise<T>;
  /** A read beside the writer: it sees committed data only. */
  all<T extends Row = Row>(sql: string, params?: SqlValue[]): Promise<T[]>;
  get<T extends Row = Row>(sql: string, params?: SqlValue[]): Promise<T | undefined>;
  /** Streams rows one at a time without loading the result set into memory; resolves with the count. */
  each<T extends Row = Row>(sql: string, params: SqlValue[], onRow: (row: T) => void): Promise<number>;
  /** Waits for queued writes, then closes every connection. */
  close(): Promise<void>;
}

/**
 * Parameters as both engines bind them alike: a bigint becomes a number when
 * it is exact as one (sqlite3 would bind it as NULL), and one beyond ±2^53 is
 * refused, since neither engine's rows could give it back exactly. Returns
 * `params` itself when there is nothing to change.
 */
export function bindable(params: SqlValue[] | undefined): SqlValue[] | undefined {
  if (params === undefined) return undefined;
  let out: SqlValue[] | undefined;
  for (let i = 0; i < params.length; i++) {
    const value = params[i];
    if (typeof value !== 'bigint') continue;
    if (value > BigInt(Number.MAX_SAFE_INTEGER) || value < BigInt(Number.MIN_SAFE_INTEGER)) {
      throw new RangeError(`parameter ${i + 1} (${value}) is beyond ±2^53: integers are exact only within Number.MAX_SAFE_INTEGER on both database engines`);
    }
    out ??= params.slice();
    out[i] = Number(value);
  }
  return out ?? params;
}

/** Write jobs run one at a time, in the order they were queued; one failing does not stop the next. */
export class WriteQueue {
  private tail: Promise<unknown> = Promise.resolve();

  run<T>(task: () => Promise<T>): Promise<T> {
    const result = this.tail.then(task, task);
    this.tail = result.catch(() => undefined);
    return result;
  }

  /** Settles once every job queued so far has. */
  idle(): Promise<unknown> {
    return this.tail;
  }
}

/** The error of a lock taken outside a write transaction, the same on both engines. */
export function lockOutsideTransaction(name: string): Error {
  return new Error(`lock('${name}') needs a write transaction: use write(job, { transaction: true })`);
}

/**
 * The PostgreSQL engine of the database seam (core/store/sql-database.ts), on
 * `pg` (node-postgres): a pool for reads, and write jobs that run one at a
 * time per instance, each on one pooled client (a transaction is BEGIN …
 * COMMIT on that client), as SQLite's serialised writer does. Statements are
 * the stores' portable SQL: `?` placeholders are numbered once per text
 * (core/store/sql-text.ts), and rows come back as SQLite gives them: BIGINT,
 * COUNT and NUMERIC as numbers, booleans as 1/0, JSON and dates as their
 * text, BYTEA as Buffers.
 */
import pg from 'pg';
import { createHash } from 'node:crypto';
import { bindable, lockOutsideTransaction, POSTGRES_DIALECT, WriteQueue, type Dialect, type Row, type SqlDatabase, type SqlValue, type WriteTx } from './sql-database.js';
import { toPositional } from './sql-text.js';
import { asUnavailable } from './database-unavailable.js';

/** Type OIDs whose text is parsed so rows look as they do on SQLite. */
const PARSERS = new Map<number, (text: string) => unknown>([
  [20, Number], // int8 (BIGINT, COUNT(*)): exact within ±2^53, as SQLite's integers through sqlite3
  [1700, Number], // numeric (SUM and AVG of integers)
  [16, (text) => (text === 't' ? 1 : 0)], // boolean: 1/0 like SQLite's comparisons
  [114, String], // json: text, as stored
  [3802, String], // jsonb
  [1082, String], // date
  [1114, String], // timestamp
  [1184, String], // timestamptz
]);

const TYPES = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    (format ?? 'text') === 'text' ? (PARSERS.get(oid) ?? pg.types.getTypeParser(oid, 'text')) : pg.types.getTypeParser(oid, 'binary')) as typeof pg.types.getTypeParser,
};

/** The advisory lock key of a name: the first 64 bits of its SHA-256, so any instance derives the same key. */
export function advisoryKey(name: string): string {
  return createHash('sha256').update(name).digest().readBigInt64BE(0).toString();
}

/** Where a connection string points, without its user name or password, for messages and logs. */
export function describePostgres(url: string): string {
  try {
    const u = new URL(url);
    return `postgresql://${u.hostname || 'localhost'}${u.port ? `:${u.port}` : ''}${u.pathname}`;
  } catch {
    return 'the PostgreSQL connection string given (it is not a URL)';
  }
}

export interface PostgresOptions {
  /** Pooled connections (reads share them; write jobs take one at a time). Default 10; at least 2, so a write job can read beside itself. */
  max?: number;
  /** Shown in pg_stat_activity. */
  applicationName?: string;
  /**
   * An idle pooled connection failed (the server restarted, the network
   * dropped); the pool replaces it. Given the error's message and code only:
   * the error of a dead connection carries its client (user name, host,
   * backend pid, cancel key), which must not reach a log.
   */
  onError?: (failure: DatabaseFailure) => void;
}

/** What may be told of a failed connection: the message and the SQLSTATE or system code, nothing of the client. */
export interface DatabaseFailure {
  message: string;
  code?: string;
}

/** The message and code of `err`, the message cut to 500 characters. */
export function databaseFailure(err: unknown): DatabaseFailure {
  const message = String((err as Error | undefined)?.message ?? err).slice(0, 500);
  const code = (err as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' ? { message, code } : { message };
}

const noRowsAfterEnd = (): never => {
  throw new Error('this write job has ended: its statements must be awaited inside the job');
};

async function query(client: pg.Pool | pg.PoolClient, sql: string, params: SqlValue[] | undefined): Promise<pg.QueryResult<Row>> {
  try {
    return await client.query<Row>({ text: toPositional(sql), values: bindable(params) ?? [] });
  } catch (err) {
    throw asUnavailable(err);
  }
}

/** A connection taken from the pool, with what happened to it while taken. */
interface Taken {
  client: pg.PoolClient;
  /** Gives it back; a connection that failed (or whose ROLLBACK did) is dropped by the pool. */
  release(broken?: Error): void;
}

/**
 * A pooled connection, or a DatabaseUnavailableError when the server cannot
 * be reached. While taken it has a listener for its 'error': the pool
 * listens only to idle connections, and a server that goes away under a
 * taken one makes it emit an error that, unheard, would end the process.
 */
async function connection(pool: pg.Pool): Promise<Taken> {
  let client: pg.PoolClient;
  try {
    client = await pool.connect();
  } catch (err) {
    throw asUnavailable(err);
  }
  let lost: Error | undefined;
  const onLost = (err: Error) => void (lost ??= err);
  client.on('error', onLost);
  return {
    client,
    release(broken) {
      client.off('error', onLost);
      client.release(broken ?? lost);
    },
  };
}

/** A transaction statement (BEGIN, COMMIT, a cursor's FETCH) on `client`, failing as `query` does. */
async function control<R extends Row = Row>(client: pg.PoolClient, sql: string): Promise<pg.QueryResult<R>> {
  try {
    return await client.query<R>(sql);
  } catch (err) {
    throw asUnavailable(err);
  }
}

export class PostgresDatabase implements SqlDatabase {
  readonly dialect: Dialect = POSTGRES_DIALECT;
  private readonly queue = new WriteQueue();
  private closed = false;

  private constructor(
    /** The server and database, without credentials. */
    readonly target: string,
    private readonly pool: pg.Pool,
  ) {}

  /** Connects a pool to `url` (a `postgres://` or `postgresql://` connection string) and checks that it answers. */
  static async open(url: string, options: PostgresOptions = {}): Promise<PostgresDatabase> {
    const target = describePostgres(url);
    const pool = new pg.Pool({
      connectionString: url, max: Math.max(2, options.max ?? 10), types: TYPES, connectionTimeoutMillis: 10_000,
      application_name: options.applicationName ?? 'cnc-machine-gateway',
    });
    // Always listened to: a pool 'error' without a listener would end the process.
    pool.on('error', (err) => options.onError?.(databaseFailure(err)));
    try {
      await pool.query('SELECT 1');
    } catch (err) {
      await pool.end().catch(() => undefined);
      const code = (err as { code?: string }).code;
      const message = `cannot connect to PostgreSQL at ${target}: ${(err as Error).message}${code ? ` (${code})` : ''}`;
      // A URL parser's error may keep the string it was given, password and all: not kept as the cause.
      // eslint-disable-next-line preserve-caught-error
      if (code === 'ERR_INVALID_URL') throw new Error(message);
      throw new Error(message, { cause: err });
    }
    return new PostgresDatabase(target, pool);
  }

  write<T>(job: (tx: WriteTx) => Promise<T>, options: { transaction?: boolean } = {}): Promise<T> {
    if (this.closed) return Promise.reject(new Error('database is closed'));
    const inTransaction = options.transaction === true;
    return this.queue.run(async () => {
      const taken = await connection(this.pool);
      const { client } = taken;
      let ended = false;
      let broken: Error | undefined;
      const on = (sql: string, params?: SqlValue[]) => (ended ? noRowsAfterEnd() : query(client, sql, params));
      const tx: WriteTx = {
        dialect: POSTGRES_DIALECT,
        run: async (sql, params) => ({ changes: (await on(sql, params)).rowCount ?? 0, lastID: 0 }),
        all: async <R extends Row>(sql: string, params?: SqlValue[]) => (await on(sql, params)).rows as R[],
        get: async <R extends Row>(sql: string, params?: SqlValue[]) => (await on(sql, params)).rows[0] as R | undefined,
        lock: async (name) => {
          if (!inTransaction) throw lockOutsideTransaction(name);
          await on('SELECT pg_advisory_xact_lock(CAST(? AS BIGINT))', [advisoryKey(name)]);
        },
      };
      try {
        if (!inTransaction) return await job(tx);
        await control(client, 'BEGIN');
        try {
          const result = await job(tx);
          await control(client, 'COMMIT');
          return result;
        } catch (err) {
          await client.query('ROLLBACK').catch((e: unknown) => {
            broken = e as Error; // the connection is unusable: the pool drops it
          });
          throw err;
        }
      } finally {
        ended = true;
        taken.release(broken);
      }
    });
  }

  async all<T extends Row = Row>(sql: string, params?: SqlValue[]): Promise<T[]> {
    return (await query(this.pool, sql, params)).rows as T[];
  }

  async get<T extends Row = Row>(sql: string, params?: SqlValue[]): Promise<T | undefined> {
    return (await this.all<T>(sql, params))[0];
  }

  /** Streams through a cursor in a read-only transaction, a batch of rows at a time. */
  async each<T extends Row = Row>(sql: string, params: SqlValue[], onRow: (row: T) => void): Promise<number> {
    const taken = await connection(this.pool);
    const { client } = taken;
    let broken: Error | undefined;
    let count = 0;
    try {
      await control(client, 'BEGIN READ ONLY');
      await query(client, `DECLARE rows_cursor NO SCROLL CURSOR FOR ${sql}`, params);
      for (;;) {
        const batch = await control<T>(client, 'FETCH 500 FROM rows_cursor');
        for (const row of batch.rows) onRow(row);
        count += batch.rows.length;
        if (batch.rows.length < 500) break;
      }
      await control(client, 'COMMIT');
      return count;
    } catch (err) {
      await client.query('ROLLBACK').catch((e: unknown) => {
        broken = e as Error;
      });
      throw err;
    } finally {
      taken.release(broken);
    }
  }

  /** Waits for queued writes, then ends the pool. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.queue.idle();
    await this.pool.end();
  }
}

/**
 * The SQLite engine of the database seam (core/store/sql-database.ts): a
 * promise wrapper over one sqlite3 database file, with a write connection
 * whose work is serialised (so transactions never interleave) and a separate
 * read-only connection, which WAL lets run beside the writer.
 */
import sqlite3 from 'sqlite3';
import { closeSync, mkdirSync, openSync } from 'node:fs';
import { dirname } from 'node:path';
import { DIRECTORY_MODE, FILE_MODE, restrictFile } from './data-directory.js';
import { bindable, lockOutsideTransaction, SQLITE_DIALECT, WriteQueue, type Dialect, type Row, type SqlDatabase, type SqlValue, type WriteTx } from './sql-database.js';

export type { Row, SqlDatabase, SqlValue, WriteTx } from './sql-database.js';

function openConnection(file: string, mode: number): Promise<sqlite3.Database> {
  return new Promise((resolve, reject) => {
    const db = new sqlite3.Database(file, mode, (err) => (err ? reject(err) : resolve(db)));
  });
}

function runOn(db: sqlite3.Database, sql: string, params: SqlValue[] = []): Promise<{ changes: number; lastID: number }> {
  return new Promise((resolve, reject) => {
    db.run(sql, bindable(params), function (this: sqlite3.RunResult, err: Error | null) {
      if (err) reject(err);
      else resolve({ changes: this.changes, lastID: this.lastID });
    });
  });
}

function allOn<T>(db: sqlite3.Database, sql: string, params: SqlValue[] = []): Promise<T[]> {
  return new Promise((resolve, reject) => {
    db.all(sql, bindable(params), (err: Error | null, rows: T[]) => (err ? reject(err) : resolve(rows)));
  });
}

function execOn(db: sqlite3.Database, sql: string): Promise<void> {
  return new Promise((resolve, reject) => db.exec(sql, (err) => (err ? reject(err) : resolve())));
}

/** How long a connection waits for another's lock before SQLITE_BUSY. */
const BUSY_TIMEOUT_MS = 5000;

/**
 * Puts the file in WAL mode. The switch needs the file alone and SQLite takes
 * that lock without calling the busy handler, so when another process (or
 * connection) opens the same new file at the same moment one of them gets
 * SQLITE_BUSY at once: it is tried again, with a short random pause, for as
 * long as a busy lock is waited for anywhere else.
 */
async function switchToWal(db: sqlite3.Database): Promise<void> {
  const until = Date.now() + BUSY_TIMEOUT_MS;
  for (;;) {
    try {
      await execOn(db, 'PRAGMA journal_mode=WAL');
      return;
    } catch (err) {
      if ((err as { code?: string }).code !== 'SQLITE_BUSY' || Date.now() >= until) throw err;
      await new Promise((resolve) => setTimeout(resolve, 5 + Math.random() * 20));
    }
  }
}

function closeConnection(db: sqlite3.Database): Promise<void> {
  return new Promise((resolve, reject) => db.close((err) => (err ? reject(err) : resolve())));
}

export class SqliteDatabase implements SqlDatabase {
  readonly dialect: Dialect = SQLITE_DIALECT;
  private readonly queue = new WriteQueue();
  private closed = false;

  private constructor(
    readonly file: string,
    private readonly writer: sqlite3.Database,
    private readonly reader: sqlite3.Database,
  ) {}

  /**
   * Opens (creating if needed) the database in WAL mode with synchronous=NORMAL.
   * The file and its -wal/-shm companions are readable by the owner only.
   */
  static async open(file: string): Promise<SqliteDatabase> {
    if (file !== ':memory:') {
      mkdirSync(dirname(file), { recursive: true, mode: DIRECTORY_MODE });
      // SQLite would create the file 0644 (less the umask); an empty file is a valid new
      // database, and SQLite gives -wal and -shm the main file's mode.
      closeSync(openSync(file, 'a', FILE_MODE));
      restrictFile(file);
    }
    const writer = await openConnection(file, sqlite3.OPEN_READWRITE | sqlite3.OPEN_CREATE);
    await execOn(writer, `PRAGMA busy_timeout=${BUSY_TIMEOUT_MS}`);
    await switchToWal(writer);
    await execOn(writer, 'PRAGMA synchronous=NORMAL; PRAGMA foreign_keys=ON; PRAGMA cache_size=-32768;');
    if (file !== ':memory:') for (const companion of [`${file}-wal`, `${file}-shm`]) restrictFile(companion);
    const reader = file === ':memory:' ? writer : await openConnection(file, sqlite3.OPEN_READONLY);
    if (reader !== writer) await execOn(reader, `PRAGMA busy_timeout=${BUSY_TIMEOUT_MS}; PRAGMA query_only=ON; PRAGMA cache_size=-32768; PRAGMA mmap_size=268435456;`);
    return new SqliteDatabase(file, writer, reader);
  }

  /** Runs `job` alone on the write connection; with `transaction`, inside BEGIN IMMEDIATE … COMMIT. */
  write<T>(job: (tx: WriteTx) => Promise<T>, options: { transaction?: boolean } = {}): Promise<T> {
    if (this.closed) return Promise.reject(new Error('database is closed'));
    const tx: WriteTx = {
      dialect: SQLITE_DIALECT,
      run: (sql, params) => runOn(this.writer, sql, params),
      all: <R extends Row>(sql: string, params?: SqlValue[]) => allOn<R>(this.writer, sql, params),
      get: async <R extends Row>(sql: string, params?: SqlValue[]) => (await allOn<R>(this.writer, sql, params))[0],
      // BEGIN IMMEDIATE already holds the database's one write lock, against other processes too.
      lock: (name) => (options.transaction ? Promise.resolve() : Promise.reject(lockOutsideTransaction(name))),
    };
    const task = async (): Promise<T> => {
      if (!options.transaction) return job(tx);
      await execOn(this.writer, 'BEGIN IMMEDIATE');
      try {
        const result = await job(tx);
        await execOn(this.writer, 'COMMIT');
        return result;
      } catch (err) {
        await execOn(this.writer, 'ROLLBACK').catch(() => undefined);
        throw err;
      }
    };
    return this.queue.run(task);
  }

  /** A read on the read-only connection. */
  all<T extends Row = Row>(sql: string, params?: SqlValue[]): Promise<T[]> {
    return allOn<T>(this.reader, sql, params);
  }

  async get<T extends Row = Row>(sql: string, params?: SqlValue[]): Promise<T | undefined> {
    return (await this.all<T>(sql, params))[0];
  }

  /** Streams rows one at a time without loading the result set into memory. */
  each<T extends Row = Row>(sql: string, params: SqlValue[], onRow: (row: T) => void): Promise<number> {
    return new Promise((resolve, reject) => {
      this.reader.each(
        sql,
        bindable(params),
        (err: Error | null, row: T) => {
          if (!err) onRow(row);
        },
        (err: Error | null, count: number) => (err ? reject(err) : resolve(count)),
      );
    });
  }

  /** Waits for queued writes, checkpoints the WAL and closes both connections. */
  async close(): Promise<void> {
    if (this.closed) return;
    await this.queue.idle();
    this.closed = true;
    await execOn(this.writer, 'PRAGMA wal_checkpoint(TRUNCATE)').catch(() => undefined);
    if (this.reader !== this.writer) await closeConnection(this.reader);
    await closeConnection(this.writer);
  }
}

/** The SQLite engine under the name every store has imported it by. */
export { SqliteDatabase as Database };

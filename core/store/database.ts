/**
 * A promise wrapper over one sqlite3 database file: a write connection whose
 * work is serialised (so transactions never interleave) and a separate
 * read-only connection, which WAL lets run beside the writer.
 */
import sqlite3 from 'sqlite3';
import { closeSync, mkdirSync, openSync } from 'node:fs';
import { dirname } from 'node:path';
import { DIRECTORY_MODE, FILE_MODE, restrictFile } from './data-directory.js';

export type SqlValue = string | number | bigint | null | Buffer;
export type Row = Record<string, unknown>;

/** Statements a write job can run. */
export interface WriteTx {
  run(sql: string, params?: SqlValue[]): Promise<{ changes: number; lastID: number }>;
  all<T extends Row = Row>(sql: string, params?: SqlValue[]): Promise<T[]>;
  get<T extends Row = Row>(sql: string, params?: SqlValue[]): Promise<T | undefined>;
}

function openConnection(file: string, mode: number): Promise<sqlite3.Database> {
  return new Promise((resolve, reject) => {
    const db = new sqlite3.Database(file, mode, (err) => (err ? reject(err) : resolve(db)));
  });
}

function execOn(db: sqlite3.Database, sql: string): Promise<void> {
  return new Promise((resolve, reject) => db.exec(sql, (err) => (err ? reject(err) : resolve())));
}

/**
 * Prepared statements of one connection, kept by their SQL (least recently
 * used dropped beyond `max`): a statement run again is bound and stepped,
 * not parsed and planned again. Each use ends with a reset, so no statement
 * keeps a read transaction (and an old snapshot) open between uses.
 */
class StatementCache {
  private readonly statements = new Map<string, Promise<sqlite3.Statement>>();

  constructor(
    private readonly db: sqlite3.Database,
    private readonly max = 200,
  ) {}

  private statement(sql: string): Promise<sqlite3.Statement> {
    const known = this.statements.get(sql);
    if (known) {
      this.statements.delete(sql);
      this.statements.set(sql, known);
      return known;
    }
    const made = new Promise<sqlite3.Statement>((resolve, reject) => {
      const statement = this.db.prepare(sql, (err: Error | null) => (err ? reject(err) : resolve(statement)));
    });
    this.statements.set(sql, made);
    made.catch(() => this.statements.delete(sql));
    if (this.statements.size > this.max) {
      const [oldest, old] = this.statements.entries().next().value as [string, Promise<sqlite3.Statement>];
      this.statements.delete(oldest);
      // Finalizing waits for the statement's queued work.
      void old.then((s) => s.finalize()).catch(() => undefined);
    }
    return made;
  }

  async run(sql: string, params: SqlValue[] = []): Promise<{ changes: number; lastID: number }> {
    const statement = await this.statement(sql);
    return new Promise((resolve, reject) => {
      statement.run(params, function (this: sqlite3.RunResult, err: Error | null) {
        const outcome = { changes: this?.changes ?? 0, lastID: this?.lastID ?? 0 };
        statement.reset(() => (err ? reject(err) : resolve(outcome)));
      });
    });
  }

  async all<T>(sql: string, params: SqlValue[] = []): Promise<T[]> {
    const statement = await this.statement(sql);
    return new Promise((resolve, reject) => {
      statement.all(params, (err: Error | null, rows: T[]) => statement.reset(() => (err ? reject(err) : resolve(rows))));
    });
  }

  /** Finalizes every statement (before the connection closes). */
  async clear(): Promise<void> {
    const all = [...this.statements.values()];
    this.statements.clear();
    await Promise.all(all.map((p) => p.then((s) => new Promise<void>((resolve) => s.finalize(() => resolve()))).catch(() => undefined)));
  }
}

function closeConnection(db: sqlite3.Database): Promise<void> {
  return new Promise((resolve, reject) => db.close((err) => (err ? reject(err) : resolve())));
}

export class Database {
  private queue: Promise<unknown> = Promise.resolve();
  private closed = false;
  private readonly writes: StatementCache;
  private readonly reads: StatementCache;

  private constructor(
    readonly file: string,
    private readonly writer: sqlite3.Database,
    private readonly reader: sqlite3.Database,
  ) {
    this.writes = new StatementCache(writer);
    this.reads = reader === writer ? this.writes : new StatementCache(reader);
  }

  /**
   * Opens (creating if needed) the database in WAL mode with synchronous=NORMAL.
   * The file and its -wal/-shm companions are readable by the owner only.
   */
  static async open(file: string): Promise<Database> {
    if (file !== ':memory:') {
      mkdirSync(dirname(file), { recursive: true, mode: DIRECTORY_MODE });
      // SQLite would create the file 0644 (less the umask); an empty file is a valid new
      // database, and SQLite gives -wal and -shm the main file's mode.
      closeSync(openSync(file, 'a', FILE_MODE));
      restrictFile(file);
    }
    const writer = await openConnection(file, sqlite3.OPEN_READWRITE | sqlite3.OPEN_CREATE);
    await execOn(
      writer,
      'PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA foreign_keys=ON; PRAGMA busy_timeout=5000; PRAGMA cache_size=-32768;',
    );
    if (file !== ':memory:') for (const companion of [`${file}-wal`, `${file}-shm`]) restrictFile(companion);
    const reader = file === ':memory:' ? writer : await openConnection(file, sqlite3.OPEN_READONLY);
    if (reader !== writer) await execOn(reader, 'PRAGMA busy_timeout=5000; PRAGMA query_only=ON; PRAGMA cache_size=-32768; PRAGMA mmap_size=268435456;');
    return new Database(file, writer, reader);
  }

  /** Runs `job` alone on the write connection; with `transaction`, inside BEGIN IMMEDIATE … COMMIT. */
  write<T>(job: (tx: WriteTx) => Promise<T>, options: { transaction?: boolean } = {}): Promise<T> {
    if (this.closed) return Promise.reject(new Error('database is closed'));
    const tx: WriteTx = {
      run: (sql, params) => this.writes.run(sql, params),
      all: <R extends Row>(sql: string, params?: SqlValue[]) => this.writes.all<R>(sql, params),
      get: async <R extends Row>(sql: string, params?: SqlValue[]) => (await this.writes.all<R>(sql, params))[0],
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
    const result = this.queue.then(task, task);
    this.queue = result.catch(() => undefined);
    return result;
  }

  /** A read on the read-only connection. */
  all<T extends Row = Row>(sql: string, params?: SqlValue[]): Promise<T[]> {
    return this.reads.all<T>(sql, params);
  }

  async get<T extends Row = Row>(sql: string, params?: SqlValue[]): Promise<T | undefined> {
    return (await this.all<T>(sql, params))[0];
  }

  /** Streams rows one at a time without loading the result set into memory. */
  each<T extends Row = Row>(sql: string, params: SqlValue[], onRow: (row: T) => void): Promise<number> {
    return new Promise((resolve, reject) => {
      this.reader.each(
        sql,
        params,
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
    await this.queue;
    this.closed = true;
    await this.reads.clear();
    if (this.writes !== this.reads) await this.writes.clear();
    await execOn(this.writer, 'PRAGMA wal_checkpoint(TRUNCATE)').catch(() => undefined);
    if (this.reader !== this.writer) await closeConnection(this.reader);
    await closeConnection(this.writer);
  }
}

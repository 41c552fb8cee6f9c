/**
 * The login throttle's records in a database that several instances share
 * (SQLite or PostgreSQL, through the SqlDatabase seam): one row per source
 * address and user name, so failures on one instance count on every other.
 * The rules are the memory store's (`ThrottlePolicy`, login-throttle.ts),
 * bounds included: expired rows are pruned, past `maxKeysPerSource` rows for
 * one source or `maxKeys` in all the oldest unlocked rows make room, and a
 * new name is refused while only locked rows stand in the way.
 *
 * A failure is one write transaction: it takes the table's lock (serialising
 * the room accounting of every instance; SQLite's write transaction already
 * does), prunes and makes room when the name has no live row, then counts
 * the failure with one `INSERT … ON CONFLICT … DO UPDATE … RETURNING`, so two
 * instances failing the same name at once never lose a count.
 */
import type { SqlDatabase, WriteTx } from '../store/sql-database.js';
import { throttleKey, ThrottlePolicy, type Throttle, type ThrottleOptions } from './login-throttle.js';

/** The table's statements, for the migration of the plugin that owns it (portable: the same on both engines). Keys are cut to `throttleKey`'s bounds before they are stored. */
export function loginThrottleTable(table: string): string[] {
  return [
    `CREATE TABLE ${table} (
       source TEXT NOT NULL,
       name TEXT NOT NULL,
       failures INTEGER NOT NULL,
       first_at BIGINT NOT NULL,
       last_at BIGINT NOT NULL,
       blocked_until BIGINT NOT NULL,
       PRIMARY KEY (source, name)
     )`,
    `CREATE INDEX ${table}_first ON ${table}(first_at)`,
    `CREATE INDEX ${table}_last ON ${table}(last_at)`,
  ];
}

interface Room {
  n: number | string;
  unlocked: number | string | null;
  first_end: number | string | null;
}

export class SqlLoginThrottle implements Throttle {
  private readonly policy: ThrottlePolicy;

  /** `table` is made by `loginThrottleTable(table)` in the owner's migration. */
  constructor(
    private readonly db: SqlDatabase,
    private readonly table: string,
    options: ThrottleOptions = {},
  ) {
    this.policy = new ThrottlePolicy(options);
  }

  async retryAfterSec(rawSource: string, rawName: string, now: number): Promise<number> {
    const { source, name } = throttleKey(rawSource, rawName);
    const row = await this.db.get<{ first_at: number | string; blocked_until: number | string }>(
      `SELECT first_at, blocked_until FROM ${this.table} WHERE source = ? AND name = ?`, [source, name],
    );
    if (row && !this.policy.expired({ firstAt: Number(row.first_at), blockedUntil: Number(row.blocked_until) }, now)) {
      return ThrottlePolicy.secondsUntil(Number(row.blocked_until), now);
    }
    return ThrottlePolicy.secondsUntil(await this.refusedUntil(source, now), now);
  }

  async fail(rawSource: string, rawName: string, now: number): Promise<void> {
    const { source, name } = throttleKey(rawSource, rawName);
    await this.db.write(async (tx) => {
      await tx.lock(this.table);
      const row = await tx.get<{ first_at: number | string; blocked_until: number | string }>(
        `SELECT first_at, blocked_until FROM ${this.table} WHERE source = ? AND name = ?`, [source, name],
      );
      const live = row !== undefined && !this.policy.expired({ firstAt: Number(row.first_at), blockedUntil: Number(row.blocked_until) }, now);
      if (!live) {
        await this.pruneIn(tx, now);
        if (!(await this.makeRoom(tx, source, now))) return; // refused: retryAfterSec says so until a lock ends
      }
      const counted = await tx.get<{ failures: number | string }>(
        `INSERT INTO ${this.table} (source, name, failures, first_at, last_at, blocked_until) VALUES (?, ?, 1, ?, ?, 0)
         ON CONFLICT (source, name) DO UPDATE SET failures = ${this.table}.failures + 1, last_at = excluded.last_at
         RETURNING failures`,
        [source, name, now, now],
      );
      const failures = Number(counted?.failures ?? 0);
      if (failures >= this.policy.freeAttempts) {
        await tx.run(`UPDATE ${this.table} SET blocked_until = ? WHERE source = ? AND name = ?`, [this.policy.blockedUntil(failures, now), source, name]);
      }
    }, { transaction: true });
  }

  async succeed(rawSource: string, rawName: string): Promise<void> {
    const { source, name } = throttleKey(rawSource, rawName);
    await this.db.write((tx) => tx.run(`DELETE FROM ${this.table} WHERE source = ? AND name = ?`, [source, name]));
  }

  /** Deletes the rows that have expired; answers how many. */
  prune(now: number): Promise<number> {
    return this.db.write((tx) => this.pruneIn(tx, now));
  }

  /** Rows held, for tests and diagnostics. */
  async size(): Promise<number> {
    return Number((await this.db.get<{ n: number | string }>(`SELECT COUNT(*) AS n FROM ${this.table}`))?.n ?? 0);
  }

  private async pruneIn(tx: WriteTx, now: number): Promise<number> {
    const result = await tx.run(`DELETE FROM ${this.table} WHERE first_at < ? AND blocked_until <= ?`, [now - this.policy.windowMs, now]);
    return result.changes;
  }

  /** How many rows are in scope (one source, or all), how many of them are unlocked, and the first lock end among them. */
  private room(q: Pick<WriteTx, 'get'>, source: string | undefined, now: number): Promise<Room | undefined> {
    const where = source === undefined ? '' : ' WHERE source = ?';
    return q.get<Room & Record<string, unknown>>(
      `SELECT COUNT(*) AS n, SUM(CASE WHEN blocked_until <= ? THEN 1 ELSE 0 END) AS unlocked, MIN(blocked_until) AS first_end FROM ${this.table}${where}`,
      source === undefined ? [now] : [now, source],
    );
  }

  /** When a new name from `source` would be refused for lack of room: the end of the first lock in the way, or 0. */
  private async refusedUntil(source: string, now: number): Promise<number> {
    for (const [scope, limit] of [[source, this.policy.maxKeysPerSource], [undefined, this.policy.maxKeys]] as const) {
      const room = await this.room(this.db, scope, now);
      if (room && Number(room.n) >= limit && Number(room.unlocked ?? 0) === 0) return Number(room.first_end ?? 0);
    }
    return 0;
  }

  /** Frees a row for a new name from `source` (expired rows are pruned already); false when only locked rows stand in the way. */
  private async makeRoom(tx: WriteTx, source: string, now: number): Promise<boolean> {
    const own = await this.room(tx, source, now);
    if (own && Number(own.n) >= this.policy.maxKeysPerSource && !(await this.evictOldestUnlocked(tx, source, 1, now))) return false;
    const all = await this.room(tx, undefined, now);
    // A full table gives up a tenth of itself at once, not one row per new name.
    if (all && Number(all.n) >= this.policy.maxKeys && !(await this.evictOldestUnlocked(tx, undefined, Math.ceil(this.policy.maxKeys / 10), now))) return false;
    return true;
  }

  private async evictOldestUnlocked(tx: WriteTx, source: string | undefined, batch: number, now: number): Promise<boolean> {
    const scope = source === undefined ? '' : ' AND source = ?';
    const result = await tx.run(
      `DELETE FROM ${this.table} WHERE (source, name) IN (
         SELECT source, name FROM ${this.table} WHERE blocked_until <= ?${scope} ORDER BY last_at, source, name LIMIT ?)`,
      source === undefined ? [now, batch] : [now, source, batch],
    );
    return result.changes > 0;
  }
}

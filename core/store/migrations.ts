/**
 * Versioned schema migrations, recorded per owner in
 * `schema_migrations(plugin, version, name, applied_at)`. The owner is a
 * plugin's name, or `core` for the role's base schema below. Each migration
 * runs once, in its own transaction that also records it. Never edit a
 * released migration: append a new one with the next id.
 *
 * The same definitions run on both engines of the database seam: statements
 * are portable SQL (on PostgreSQL, SQLite's type names become the same
 * types there), or given per engine where they cannot be (docs/databases.md).
 * Instances that start together on one database apply each migration once:
 * each runs under the `schema_migrations` lock and looks again first.
 *
 * Databases written before migrations had owners keep
 * `schema_migrations(version, name, applied_at)`; the first run rebuilds that
 * table with its rows as `core`'s, so nothing is applied twice.
 */
import type { Engine, SqlDatabase, WriteTx } from './sql-database.js';
import { notPortable, postgresDdl } from './sql-text.js';

/** Statements run one by one, so a trigger body may contain `;`. */
type Statements = readonly string[];

/** One schema change. */
export interface Migration {
  /** 1, 2, 3, … in the order they run; never reused. */
  id: number;
  name: string;
  /** Portable statements, statements per engine, or a function of the write transaction (`tx.dialect.engine` says which). */
  up: Statements | { readonly sqlite: Statements; readonly postgres: Statements } | ((tx: WriteTx) => Promise<void>);
}

/** The statements `migration` runs on `engine`, as that engine runs them; undefined for a function. */
export function statementsFor(migration: Migration, engine: Engine): Statements | undefined {
  const { up } = migration;
  if (typeof up === 'function') return undefined;
  if ('sqlite' in up) return engine === 'sqlite' ? up.sqlite : up.postgres;
  if (engine === 'sqlite') return up;
  return up.map((statement) => {
    const construct = notPortable(statement);
    if (construct) throw new Error(`${construct} is SQLite's only: give this migration its statements per engine ({ sqlite: [...], postgres: [...] })`);
    return postgresDdl(statement);
  });
}

/** The lock every instance takes to migrate a database. */
const MIGRATIONS_LOCK = 'schema_migrations';

/** The owner under which the base schema is recorded; no plugin may take this name. */
export const BASE_SCHEMA_OWNER = 'core';

/**
 * The gateway role's base schema: the fleet and history tables (read and written by core's FleetStore and
 * HistoryWriter, which open before any plugin) and the users tables (the auth plugin's, kept here because
 * databases in the field record them under these numbers; see docs/architecture.md, "Store").
 */
export const MIGRATIONS: readonly Migration[] = [
  {
    id: 1,
    name: 'fleet and history',
    up: [
      `CREATE TABLE machines (
          machine_id TEXT PRIMARY KEY,
          config     TEXT NOT NULL,
          created_at INTEGER NOT NULL,
          updated_at INTEGER NOT NULL
        )`,
      `CREATE TABLE groups (
          group_id   TEXT PRIMARY KEY,
          config     TEXT NOT NULL,
          created_at INTEGER NOT NULL,
          updated_at INTEGER NOT NULL
        )`,
      `CREATE TABLE history (
          seq        INTEGER PRIMARY KEY,
          machine_id TEXT NOT NULL,
          class      TEXT NOT NULL,
          ts         INTEGER NOT NULL,
          data       TEXT NOT NULL
        )`,
      `CREATE INDEX history_machine_class_ts ON history (machine_id, class, ts)`,
      `CREATE TABLE meta (
          key   TEXT PRIMARY KEY,
          value TEXT NOT NULL
        )`,
    ],
  },
  {
    id: 2,
    name: 'users, secret keys and security settings',
    up: [
      `CREATE TABLE users (
          username        TEXT PRIMARY KEY,
          password_hash   TEXT NOT NULL,
          is_admin        INTEGER NOT NULL,
          authorized_apis TEXT NOT NULL,
          token_version   INTEGER NOT NULL,
          created_at      INTEGER NOT NULL,
          updated_at      INTEGER NOT NULL
        )`,
      `CREATE TABLE secret_keys (
          id           TEXT PRIMARY KEY,
          username     TEXT NOT NULL REFERENCES users (username) ON DELETE CASCADE,
          key_hash     TEXT NOT NULL,
          label        TEXT NOT NULL,
          created_at   INTEGER NOT NULL,
          revoked_at   INTEGER,
          last_used_at INTEGER
        )`,
      `CREATE TABLE settings (
          key   TEXT PRIMARY KEY,
          value TEXT NOT NULL
        )`,
    ],
  },
  {
    id: 3,
    name: 'covering indexes for analysis',
    // Partial covering indexes: analysis reads these JSON fields of these classes over long windows;
    // with the fields in the index it never touches the table rows (3x faster on 30 days).
    up: [
      `CREATE INDEX history_state_fields ON history (machine_id, class, ts, data->>'$.state') WHERE class = 'State'`,
      `CREATE INDEX history_count_fields ON history (machine_id, class, ts, data->>'$.delta', data->>'$.lastCycleTime', data->>'$.program') WHERE class = 'Count'`,
      `CREATE INDEX history_alarm_history_fields ON history (machine_id, class, ts, data->>'$.start', data->>'$.code', data->>'$.message', data->>'$.level', data->>'$.end') WHERE class = 'AlarmHistory'`,
      `CREATE INDEX history_alarm_log_fields ON history (machine_id, class, ts, data->>'$.event', data->>'$.code', data->>'$.message', data->>'$.level', data->>'$.since') WHERE class = 'AlarmLog'`,
    ],
  },
  {
    id: 4,
    name: 'account identity for users and secret keys',
    // A token or key is bound to the account it was issued to, not to a name that can be deleted and
    // created again: every user gets a random, never-reused account id (existing rows get one here),
    // and each secret key records the account it belongs to.
    up: [
      `ALTER TABLE users ADD COLUMN account_id TEXT`,
      `UPDATE users SET account_id = lower(hex(randomblob(16)))`,
      `CREATE UNIQUE INDEX users_account_id ON users (account_id)`,
      `ALTER TABLE secret_keys ADD COLUMN account_id TEXT REFERENCES users (account_id) ON DELETE CASCADE`,
      `UPDATE secret_keys SET account_id = (SELECT u.account_id FROM users u WHERE u.username = secret_keys.username)`,
    ],
  },
];

const OWNED_TABLE =
  'CREATE TABLE schema_migrations (plugin TEXT NOT NULL, version INTEGER NOT NULL, name TEXT NOT NULL, applied_at INTEGER NOT NULL, PRIMARY KEY (plugin, version))';

/** The columns of schema_migrations (none when it does not exist yet). */
function bookkeepingColumns(tx: WriteTx): Promise<{ name: string }[]> {
  if (tx.dialect.engine === 'sqlite') return tx.all<{ name: string }>('PRAGMA table_info(schema_migrations)');
  return tx.all<{ name: string }>("SELECT column_name AS name FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = 'schema_migrations'");
}

/** Creates the bookkeeping table, or rebuilds a previous version's (no owner column) with its rows as the base schema's. */
async function prepareBookkeeping(db: SqlDatabase): Promise<void> {
  await db.write(
    async (tx) => {
      await tx.lock(MIGRATIONS_LOCK);
      const columns = await bookkeepingColumns(tx);
      if (columns.length === 0) {
        await tx.run(tx.dialect.engine === 'postgres' ? postgresDdl(OWNED_TABLE) : OWNED_TABLE);
      } else if (!columns.some((c) => c.name === 'plugin')) {
        await tx.run('ALTER TABLE schema_migrations RENAME TO schema_migrations_unowned');
        await tx.run(OWNED_TABLE);
        await tx.run('INSERT INTO schema_migrations (plugin, version, name, applied_at) SELECT ?, version, name, applied_at FROM schema_migrations_unowned', [
          BASE_SCHEMA_OWNER,
        ]);
        await tx.run('DROP TABLE schema_migrations_unowned');
      }
    },
    { transaction: true },
  );
}

function checkIds(owner: string, migrations: readonly Migration[]): void {
  let previous = 0;
  for (const m of migrations) {
    if (!Number.isInteger(m.id) || m.id <= previous) {
      throw new Error(`migrations of '${owner}': id ${m.id} ('${m.name}') must be an integer greater than ${previous}, the id before it`);
    }
    previous = m.id;
  }
}

/** Applies `owner`'s migrations not yet recorded, in id order, each in its own transaction; returns the ids applied. */
export async function applyMigrations(db: SqlDatabase, owner: string, migrations: readonly Migration[], now: () => number = Date.now): Promise<number[]> {
  checkIds(owner, migrations);
  await prepareBookkeeping(db);
  const rows = await db.write((tx) => tx.all<{ version: number }>('SELECT version FROM schema_migrations WHERE plugin = ?', [owner]));
  const done = new Set(rows.map((r) => r.version));
  const applied: number[] = [];
  for (const migration of migrations) {
    if (done.has(migration.id)) continue;
    try {
      const ran = await db.write(
        async (tx) => {
          await tx.lock(MIGRATIONS_LOCK);
          // Another instance may have applied it since the list above was read.
          if (await tx.get('SELECT 1 AS done FROM schema_migrations WHERE plugin = ? AND version = ?', [owner, migration.id])) return false;
          const statements = statementsFor(migration, tx.dialect.engine);
          if (statements) for (const statement of statements) await tx.run(statement);
          else if (typeof migration.up === 'function') await migration.up(tx);
          await tx.run('INSERT INTO schema_migrations (plugin, version, name, applied_at) VALUES (?, ?, ?, ?)', [owner, migration.id, migration.name, now()]);
          return true;
        },
        { transaction: true },
      );
      if (ran) applied.push(migration.id);
    } catch (err) {
      throw new Error(`migration ${migration.id} ('${migration.name}') of '${owner}' failed and was rolled back: ${(err as Error).message}`, { cause: err });
    }
  }
  return applied;
}

/** Applies the base schema's migrations newer than the database's; returns the ids applied. */
export function migrate(db: SqlDatabase): Promise<number[]> {
  return applyMigrations(db, BASE_SCHEMA_OWNER, MIGRATIONS);
}

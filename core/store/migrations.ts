/**
 * Versioned schema migrations. Each entry runs once, in order, inside a
 * transaction that also records it in `schema_migrations`. Never edit a
 * released migration: append a new one.
 */
import type { Database } from './database.js';

interface Migration {
  version: number;
  name: string;
  sql: string;
}

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'fleet and history',
    sql: `
      CREATE TABLE machines (
        machine_id TEXT PRIMARY KEY,
        config     TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL
      );
      CREATE TABLE groups (
        group_id   TEXT PRIMARY KEY,
        config     TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL
      );
      CREATE TABLE history (
        seq        INTEGER PRIMARY KEY,
        machine_id TEXT NOT NULL,
        class      TEXT NOT NULL,
        ts         INTEGER NOT NULL,
        data       TEXT NOT NULL
      );
      CREATE INDEX history_machine_class_ts ON history (machine_id, class, ts);
      CREATE TABLE meta (
        key   TEXT PRIMARY KEY,
        value TEXT NOT NULL
      );
    `,
  },
  {
    version: 2,
    name: 'users, secret keys and security settings',
    sql: `
      CREATE TABLE users (
        username        TEXT PRIMARY KEY,
        password_hash   TEXT NOT NULL,
        is_admin        INTEGER NOT NULL,
        authorized_apis TEXT NOT NULL,
        token_version   INTEGER NOT NULL,
        created_at      INTEGER NOT NULL,
        updated_at      INTEGER NOT NULL
      );
      CREATE TABLE secret_keys (
        id           TEXT PRIMARY KEY,
        username     TEXT NOT NULL REFERENCES users (username) ON DELETE CASCADE,
        key_hash     TEXT NOT NULL,
        label        TEXT NOT NULL,
        created_at   INTEGER NOT NULL,
        revoked_at   INTEGER,
        last_used_at INTEGER
      );
      CREATE TABLE settings (
        key   TEXT PRIMARY KEY,
        value TEXT NOT NULL
      );
    `,
  },
  {
    version: 3,
    name: 'covering indexes for analysis',
    // Partial covering indexes: analysis reads these JSON fields of these classes over long windows;
    // with the fields in the index it never touches the table rows (3x faster on 30 days).
    sql: `
      CREATE INDEX history_state_fields ON history (machine_id, class, ts, data->>'$.state') WHERE class = 'State';
      CREATE INDEX history_count_fields ON history (machine_id, class, ts, data->>'$.delta', data->>'$.lastCycleTime', data->>'$.program') WHERE class = 'Count';
      CREATE INDEX history_alarm_history_fields ON history (machine_id, class, ts, data->>'$.start', data->>'$.code', data->>'$.message', data->>'$.level', data->>'$.end') WHERE class = 'AlarmHistory';
      CREATE INDEX history_alarm_log_fields ON history (machine_id, class, ts, data->>'$.event', data->>'$.code', data->>'$.message', data->>'$.level', data->>'$.since') WHERE class = 'AlarmLog';
    `,
  },
  {
    version: 4,
    name: 'account identity for users and secret keys',
    // A token or key is bound to the account it was issued to, not to a name that can be deleted and
    // created again: every user gets a random, never-reused account id (existing rows get one here),
    // and each secret key records the account it belongs to.
    sql: `
      ALTER TABLE users ADD COLUMN account_id TEXT;
      UPDATE users SET account_id = lower(hex(randomblob(16)));
      CREATE UNIQUE INDEX users_account_id ON users (account_id);
      ALTER TABLE secret_keys ADD COLUMN account_id TEXT REFERENCES users (account_id) ON DELETE CASCADE;
      UPDATE secret_keys SET account_id = (SELECT u.account_id FROM users u WHERE u.username = secret_keys.username)
    `,
  },
];

/** Applies every migration newer than the database's version; returns the versions applied. */
export async function migrate(db: Database): Promise<number[]> {
  await db.write((tx) =>
    tx.run(
      'CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)',
    ),
  );
  const row = await db.write((tx) => tx.get<{ version: number | null }>('SELECT MAX(version) AS version FROM schema_migrations'));
  const current = row?.version ?? 0;
  const applied: number[] = [];
  for (const migration of MIGRATIONS) {
    if (migration.version <= current) continue;
    await db.write(
      async (tx) => {
        for (const statement of migration.sql.split(';').map((s) => s.trim()).filter(Boolean)) {
          await tx.run(statement);
        }
        await tx.run('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)', [
          migration.version,
          migration.name,
          Date.now(),
        ]);
      },
      { transaction: true },
    );
    applied.push(migration.version);
  }
  return applied;
}

/**
 * The gateway role's base schema, recorded under the owner `core` (the
 * machinery is core/store/migrations.ts). Its numbers stay as released:
 * databases in the field record them.
 */
import { applyMigrations, BASE_SCHEMA_OWNER, type Migration } from '../../../store/migrations.js';
import type { SqlDatabase } from '../../../store/sql-database.js';

/**
 * The gateway role's base schema: the fleet and history tables (read and written by core's FleetStore and
 * HistoryWriter, which open before any plugin) and the users tables (the auth plugin's, kept here because
 * databases in the field record them under these numbers; see docs/architecture.md, "Store").
 */
export const GATEWAY_MIGRATIONS: readonly Migration[] = [
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

/** Applies the gateway's base schema migrations newer than the database's; returns the ids applied. */
export function migrateGatewayStore(db: SqlDatabase): Promise<number[]> {
  return applyMigrations(db, BASE_SCHEMA_OWNER, GATEWAY_MIGRATIONS);
}

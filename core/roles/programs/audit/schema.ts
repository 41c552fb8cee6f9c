/**
 * The audit log's tables. `audit_log` holds the hash-chained records;
 * `audit_head` is the chain's anchor: the last seq and hash, moved by a
 * trigger in the same statement as each insert, so deleting the tail leaves
 * the anchor pointing past the end and verify sees it. The same tables and
 * guards on both engines: SQLite's triggers, PostgreSQL's trigger functions.
 */
import type { SqlDatabase } from '../../../store/database.js';
import { postgresDdl } from '../../../store/sql-text.js';

/** The prevHash of record 1: 64 zeros (SHA-256 length in hex). */
export const GENESIS_HASH = '0'.repeat(64);

/** Message of the guard trigger when an insert does not continue the chain. */
export const HEAD_MOVED = 'audit chain head moved';

/**
 * Idempotent DDL, one complete statement per entry. Run them one by one:
 * the trigger bodies contain `;`, so splitting a joined text on `;` (as
 * core/store/migrations.ts does) would break them.
 */
export const AUDIT_SCHEMA_STATEMENTS: readonly string[] = [
  `CREATE TABLE IF NOT EXISTS audit_log (
    seq            INTEGER PRIMARY KEY,
    ts             INTEGER NOT NULL,
    principal_name TEXT NOT NULL,
    on_behalf_of   TEXT,
    auth_method    TEXT NOT NULL,
    category       TEXT NOT NULL,
    action         TEXT NOT NULL,
    entity_type    TEXT,
    entity_id      TEXT,
    machine        TEXT,
    details        TEXT,
    prev_hash      TEXT NOT NULL,
    hash           TEXT NOT NULL
  )`,
  // Each filter column is indexed with seq, so a filtered page is an index range in seq order.
  'CREATE INDEX IF NOT EXISTS audit_log_ts ON audit_log (ts)',
  'CREATE INDEX IF NOT EXISTS audit_log_principal ON audit_log (principal_name, seq)',
  'CREATE INDEX IF NOT EXISTS audit_log_machine ON audit_log (machine, seq)',
  'CREATE INDEX IF NOT EXISTS audit_log_entity ON audit_log (entity_type, entity_id, seq)',
  'CREATE INDEX IF NOT EXISTS audit_log_category ON audit_log (category, seq)',
  `CREATE TABLE IF NOT EXISTS audit_head (
    id   INTEGER PRIMARY KEY CHECK (id = 1),
    seq  INTEGER NOT NULL,
    hash TEXT NOT NULL
  )`,
  `INSERT OR IGNORE INTO audit_head (id, seq, hash) VALUES (1, 0, '${GENESIS_HASH}')`,
  // The database itself refuses a record that does not continue the chain (seq = head + 1,
  // prev_hash = head hash): a stale in-memory head fails here instead of forking the chain.
  `CREATE TRIGGER IF NOT EXISTS audit_log_links_to_head BEFORE INSERT ON audit_log
   WHEN NOT EXISTS (SELECT 1 FROM audit_head WHERE id = 1 AND seq = NEW.seq - 1 AND hash = NEW.prev_hash)
   BEGIN SELECT RAISE(ABORT, '${HEAD_MOVED}'); END`,
  `CREATE TRIGGER IF NOT EXISTS audit_log_moves_head AFTER INSERT ON audit_log
   BEGIN UPDATE audit_head SET seq = NEW.seq, hash = NEW.hash WHERE id = 1; END`,
  // Append-only against mistakes in application code; someone with the database file can drop
  // these, which is what verify is for.
  `CREATE TRIGGER IF NOT EXISTS audit_log_no_update BEFORE UPDATE ON audit_log
   BEGIN SELECT RAISE(ABORT, 'audit records are append-only'); END`,
  `CREATE TRIGGER IF NOT EXISTS audit_log_no_delete BEFORE DELETE ON audit_log
   BEGIN SELECT RAISE(ABORT, 'audit records are append-only'); END`,
];

/** The tables and indexes, as PostgreSQL reads them (INTEGER is BIGINT there, as SQLite's integers are 64-bit). */
const POSTGRES_TABLES = AUDIT_SCHEMA_STATEMENTS.filter((s) => /^CREATE (TABLE|INDEX)/.test(s)).map(postgresDdl);

/**
 * PostgreSQL's guards. One BEFORE trigger both checks the link and moves the
 * head: PostgreSQL runs AFTER row triggers at the end of the statement, so a
 * multi-row insert's second row would otherwise meet a head not yet moved.
 */
export const AUDIT_POSTGRES_STATEMENTS: readonly string[] = [
  ...POSTGRES_TABLES,
  `INSERT INTO audit_head (id, seq, hash) VALUES (1, 0, '${GENESIS_HASH}') ON CONFLICT (id) DO NOTHING`,
  `CREATE OR REPLACE FUNCTION audit_log_links_to_head() RETURNS trigger LANGUAGE plpgsql AS $$
   BEGIN
     IF NOT EXISTS (SELECT 1 FROM audit_head WHERE id = 1 AND seq = NEW.seq - 1 AND hash = NEW.prev_hash) THEN
       RAISE EXCEPTION '${HEAD_MOVED}';
     END IF;
     UPDATE audit_head SET seq = NEW.seq, hash = NEW.hash WHERE id = 1;
     RETURN NEW;
   END $$`,
  'CREATE OR REPLACE TRIGGER audit_log_links_to_head BEFORE INSERT ON audit_log FOR EACH ROW EXECUTE FUNCTION audit_log_links_to_head()',
  `CREATE OR REPLACE FUNCTION audit_log_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
   BEGIN RAISE EXCEPTION 'audit records are append-only'; END $$`,
  'CREATE OR REPLACE TRIGGER audit_log_append_only BEFORE UPDATE OR DELETE ON audit_log FOR EACH ROW EXECUTE FUNCTION audit_log_append_only()',
  // A field of a record's details as text; null when absent or when details are not JSON (SQLite's
  // json_valid guard; PostgreSQL 15 has no IS JSON). Read by a scoped caller's condition (plugins/audit-api/scope.ts).
  `CREATE OR REPLACE FUNCTION audit_detail(details text, field text) RETURNS text LANGUAGE plpgsql IMMUTABLE AS $$
   BEGIN RETURN CAST(details AS json) ->> field; EXCEPTION WHEN others THEN RETURN NULL; END $$`,
];

/** Creates the audit tables, indexes and triggers if missing, in one transaction (instances starting together take turns). */
export async function ensureAuditSchema(db: SqlDatabase): Promise<void> {
  await db.write(
    async (tx) => {
      await tx.lock('audit-schema');
      for (const statement of tx.dialect.engine === 'postgres' ? AUDIT_POSTGRES_STATEMENTS : AUDIT_SCHEMA_STATEMENTS) await tx.run(statement);
    },
    { transaction: true },
  );
}

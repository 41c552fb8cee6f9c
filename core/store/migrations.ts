/**
 * Versioned schema migrations, recorded per owner in
 * `schema_migrations(plugin, version, name, applied_at)`. The owner is a
 * plugin's name, or `core` for a role's base schema (the gateway's is
 * core/roles/gateway/store/schema.ts). Each migration
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

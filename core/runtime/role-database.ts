/**
 * Opens a role's database for RoleRuntime: its SQLite file in the data
 * directory, or the PostgreSQL pool of its `databaseUrl`, with the role's
 * base schema applied. On PostgreSQL, given a place to wait
 * (`whileWaiting`, as `npm start` gives), a server that does not answer is
 * waited for (core/runtime/database-wait.ts), also when it goes away again between
 * the connection and the schema; without one (tests, a role built in a
 * program of its own) the failure is thrown at once.
 */
import { join } from 'node:path';
import type { Logger } from 'pino';
import { openWhenAnswering } from './database-wait.js';
import type { Readiness } from './health.js';
import { SqliteDatabase } from '../store/database.js';
import { DatabaseUnavailableError } from '../store/database-unavailable.js';
import { applyMigrations, BASE_SCHEMA_OWNER, type Migration } from '../store/migrations.js';
import { describePostgres, PostgresDatabase } from '../store/postgres-database.js';
import type { SqlDatabase } from '../store/sql-database.js';

/** Where a role waits for its database at start, and what ends the wait. */
export interface WhileWaiting {
  /** The role's listener address: the probes answer there meanwhile. */
  host: string;
  port: number;
  /** Ends the wait (a stop signal during the start). */
  signal?: AbortSignal;
  /** Pauses between attempts (core/runtime/database-wait.ts); tests shorten them. */
  backoff?: { firstMs: number; maxMs: number };
}

/** What opening a role's database needs. */
export interface RoleDatabaseSpec {
  role: string;
  dataDir: string;
  databaseFile: string;
  databaseUrl?: string | undefined;
  baseMigrations?: readonly Migration[] | undefined;
  now: () => number;
  logger: Logger;
  readiness: Readiness;
  /** Given: wait for a PostgreSQL server that does not answer; `onFirstFailure` opens the probes' listener. */
  whileWaiting?: { wait: WhileWaiting; onFirstFailure: () => Promise<string | undefined> } | undefined;
}

/** The role's pool on PostgreSQL; a pooled connection that fails later is logged (message and code only) and replaced. */
function openPostgres(url: string, spec: RoleDatabaseSpec): Promise<PostgresDatabase> {
  const logger = spec.logger.child({ role: spec.role, component: 'database' });
  return PostgresDatabase.open(url, { applicationName: `cnc-${spec.role}`, onError: (failure) => logger.warn({ failure }, 'an idle PostgreSQL connection failed; the pool replaces it') });
}

async function migrate(db: SqlDatabase, spec: RoleDatabaseSpec): Promise<void> {
  if (spec.baseMigrations?.length) await applyMigrations(db, BASE_SCHEMA_OWNER, spec.baseMigrations, spec.now);
}

/** Opens the database `spec` names and applies its base schema; on PostgreSQL with `whileWaiting`, waits for the server as long as it takes. */
export async function openRoleDatabase(spec: RoleDatabaseSpec): Promise<SqlDatabase> {
  const url = spec.databaseUrl;
  if (url === undefined) {
    const db = await SqliteDatabase.open(join(spec.dataDir, spec.databaseFile));
    await migrate(db, spec).catch(async (err: unknown) => {
      await db.close().catch(() => undefined);
      throw err;
    });
    return db;
  }
  for (;;) {
    const waiting = spec.whileWaiting;
    const db = waiting
      ? await openWhenAnswering(() => openPostgres(url, spec), (late) => late.close(), {
          check: 'database', target: describePostgres(url), readiness: spec.readiness, logger: spec.logger,
          signal: waiting.wait.signal, onFirstFailure: waiting.onFirstFailure, ...(waiting.wait.backoff ? { backoff: waiting.wait.backoff } : {}),
        })
      : await openPostgres(url, spec);
    try {
      await migrate(db, spec);
      return db;
    } catch (err) {
      await db.close().catch(() => undefined);
      // Gone again before the schema was applied: wait again. Any other failure of a migration stops the start.
      if (!waiting || !(err instanceof DatabaseUnavailableError)) throw err;
    }
  }
}

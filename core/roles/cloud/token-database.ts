/**
 * Where the cloud keeps its gateway tokens and admin keys: `cloud.db` (SQLite)
 * in the data directory by default, or a PostgreSQL database named by
 * `CLOUD_DATABASE_URL` (or `cloud.databaseUrl`), which any number of cloud
 * instances on different hosts share (docs/cloud-relay.md, "Several cloud
 * instances"). Both the running cloud (role.ts) and `npm run cloud-token`
 * open it here, so they always agree on where the tokens are.
 *
 * A connection string that is not one, or a server that does not answer,
 * stops the start naming the key it came from; the string itself (and so its
 * password) is never in a message.
 */
import { PostgresDatabase, type DatabaseFailure } from '../../store/postgres-database.js';
import { applyMigrations, BASE_SCHEMA_OWNER } from '../../store/migrations.js';
import { CLOUD_MIGRATIONS } from './tokens.js';

export const CLOUD_DATABASE_VARIABLE = 'CLOUD_DATABASE_URL';
export const CLOUD_DATABASE_FIELD = 'cloud.databaseUrl';

/** A PostgreSQL connection string and the key it was read from. */
export interface TokenDatabaseSource {
  url: string;
  /** `CLOUD_DATABASE_URL` or `cloud.databaseUrl`, for messages. */
  key: string;
}

/** A mistake in the token database's connection string or a server that did not answer, named by its key. */
export class TokenDatabaseError extends Error {}

/** The PostgreSQL database the tokens live in: CLOUD_DATABASE_URL (when not empty) over `cloud.databaseUrl`; undefined for cloud.db. */
export function tokenDatabaseSource(section: { databaseUrl?: string | undefined }, env: NodeJS.ProcessEnv): TokenDatabaseSource | undefined {
  const fromEnv = env[CLOUD_DATABASE_VARIABLE];
  if (fromEnv) return { url: fromEnv, key: CLOUD_DATABASE_VARIABLE };
  if (section.databaseUrl !== undefined) return { url: section.databaseUrl, key: CLOUD_DATABASE_FIELD };
  return undefined;
}

/** Whether `url` is a PostgreSQL connection string (without saying anything of its contents). */
function isPostgresUrl(url: string): boolean {
  if (url.length > 4096) return false;
  try {
    const parsed = new URL(url);
    return (parsed.protocol === 'postgres:' || parsed.protocol === 'postgresql:') && parsed.hostname !== '';
  } catch {
    return false;
  }
}

/** Opens the tokens' PostgreSQL database and brings its schema up to date (instances starting together migrate once). */
export async function openTokenPostgres(
  source: TokenDatabaseSource,
  { now = Date.now, applicationName = 'cnc-cloud', onError }: { now?: () => number; applicationName?: string; onError?: (failure: DatabaseFailure) => void } = {},
): Promise<PostgresDatabase> {
  if (!isPostgresUrl(source.url)) {
    throw new TokenDatabaseError(`${source.key}: not a PostgreSQL connection string; expected postgresql://USER:PASSWORD@HOST:5432/DATABASE (the value is not shown: it may hold a password)`);
  }
  let db: PostgresDatabase;
  try {
    db = await PostgresDatabase.open(source.url, { max: 5, applicationName, ...(onError ? { onError } : {}) });
  } catch (err) {
    // PostgresDatabase's messages name the server without the user or password; the cause says why (refused, timed out) to a wait.
    throw new TokenDatabaseError(`${source.key}: ${(err as Error).message}`, { cause: (err as Error).cause });
  }
  try {
    await applyMigrations(db, BASE_SCHEMA_OWNER, CLOUD_MIGRATIONS, now);
  } catch (err) {
    await db.close().catch(() => undefined);
    throw new TokenDatabaseError(`${source.key}: the cloud's tables on ${db.target} could not be made or brought up to date: ${(err as Error).message}`);
  }
  return db;
}

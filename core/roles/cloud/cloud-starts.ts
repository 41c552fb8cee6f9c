/**
 * Which clouds have used a token database: every cloud records its host and
 * the time at each start, in the database its tokens are in. `npm run
 * cloud-token` reads it to warn when it writes to a database no cloud has
 * used yet (a CLOUD_DATABASE_URL or data directory other than the cloud's:
 * the token would never be seen).
 */
import { hostname } from 'node:os';
import type { SqlDatabase } from '../../store/sql-database.js';

/** The table, made by CLOUD_MIGRATIONS (tokens.ts). */
export const CLOUD_STARTS_TABLE = 'cloud_starts';

/** The last start of a cloud on a database. */
export interface CloudStart {
  host: string;
  startedAt: number;
}

/** Longest host name kept (a host name is at most 253 characters). */
const MAX_HOST = 253;

/** Records that a cloud on this host started on `db` at `now`. */
export async function recordCloudStart(db: SqlDatabase, now: number, host: string = hostname()): Promise<void> {
  await db.write((tx) => tx.run(
    `INSERT INTO ${CLOUD_STARTS_TABLE} (host, started_at) VALUES (?, ?) ON CONFLICT (host) DO UPDATE SET started_at = excluded.started_at`,
    [host.slice(0, MAX_HOST), now],
  ));
}

/** The latest start of a cloud on `db`; undefined when none has started on it. */
export async function lastCloudStart(db: SqlDatabase): Promise<CloudStart | undefined> {
  const row = await db.get<{ host: string; started_at: number }>(`SELECT host, started_at FROM ${CLOUD_STARTS_TABLE} ORDER BY started_at DESC LIMIT 1`);
  return row && { host: String(row.host), startedAt: Number(row.started_at) };
}

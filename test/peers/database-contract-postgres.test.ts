/**
 * The database seam's contract on PostgreSQL (Debian's `postgresql`, a
 * throwaway cluster, or TEST_DATABASE_URL's server): the same cases as on
 * SQLite (test/core/store/database-contract.test.ts), a database per case.
 */
import pg from 'pg';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Readiness } from '../../core/runtime/health.js';
import { openRoleDatabase } from '../../core/runtime/role-database.js';
import { PostgresDatabase } from '../../core/store/postgres-database.js';
import { untilDefined } from '../fixtures/until.js';
import { databaseContract } from '../core/store/database-contract.js';
import { postgresEngine } from '../fixtures/database-engines.js';
import { startTestPostgres, type TestPostgres } from '../fixtures/postgres.js';

let server: TestPostgres;
beforeAll(async () => {
  server = await startTestPostgres();
}, 60_000);
afterAll(() => server?.stop());

databaseContract(postgresEngine(() => server));

describe('PostgreSQL connection strings', () => {
  it('names the server but never the password when it cannot connect', async () => {
    const url = new URL(await server.createDatabase());
    url.password = 'not-the-password-s3cret';
    const err = await PostgresDatabase.open(url.toString()).then(() => undefined, (e: unknown) => e as Error);
    expect(err?.message).toMatch(new RegExp(`cannot connect to PostgreSQL at postgresql://127\\.0\\.0\\.1:${url.port}/test_`));
    expect(JSON.stringify({ message: err?.message, stack: err?.stack, cause: String(err?.cause) })).not.toContain('s3cret');
  });
});

describe('an idle connection that dies', () => {
  it('is logged by its message and code only: no user name, host, backend pid or cancel key of the client it carried', async () => {
    const url = new URL(await server.createDatabase());
    const lines: string[] = [];
    const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(line) });
    const db = await openRoleDatabase({ role: 'idle-test', dataDir: '/nonexistent', databaseFile: 'unused.db', databaseUrl: url.toString(), now: Date.now, logger, readiness: new Readiness(logger) });
    const admin = new pg.Client({ connectionString: url.toString() });
    await admin.connect();
    try {
      await db.get('SELECT 1 AS one');
      // The pool's connection sits idle; the server ends it (as a restart or a dropped link would).
      const ended = await admin.query("SELECT pg_terminate_backend(pid) AS ok FROM pg_stat_activity WHERE application_name = 'cnc-idle-test'");
      expect(ended.rows.length).toBeGreaterThan(0);
      const line = await untilDefined('the failure logged', () => lines.find((l) => l.includes('an idle PostgreSQL connection failed')), 20_000);
      const logged = JSON.parse(line) as Record<string, unknown>;
      expect(logged.failure).toEqual({ message: expect.stringMatching(/terminat/) as unknown, code: '57P01' });
      for (const leak of [decodeURIComponent(url.username), url.hostname, url.password, 'processID', 'secretKey', 'client']) expect(line).not.toContain(leak);
      // The pool replaced it: the database answers.
      expect((await db.get<{ one: number }>('SELECT 1 AS one'))?.one).toBe(1);
    } finally {
      await admin.end();
      await db.close();
    }
  });
});

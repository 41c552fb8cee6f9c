/**
 * The database seam's contract on PostgreSQL (Debian's `postgresql`, a
 * throwaway cluster, or TEST_DATABASE_URL's server): the same cases as on
 * SQLite (test/core/store/database-contract.test.ts), a database per case.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PostgresDatabase } from '../../core/store/postgres-database.js';
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

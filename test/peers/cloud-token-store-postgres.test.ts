/** The cloud's token registry on PostgreSQL: the same cases as on SQLite (test/cloud/token-store.test.ts). */
import { afterAll, beforeAll } from 'vitest';
import { postgresEngine } from '../fixtures/database-engines.js';
import { startTestPostgres, type TestPostgres } from '../fixtures/postgres.js';
import { tokenStoreCases } from '../cloud/token-store-cases.js';

let server: TestPostgres;
beforeAll(async () => {
  server = await startTestPostgres();
}, 60_000);
afterAll(() => server?.stop());

tokenStoreCases(postgresEngine(() => server));

/** The mirror's store on PostgreSQL: the same cases as on SQLite (test/plugins/mirror/store.test.ts). */
import { afterAll, beforeAll } from 'vitest';
import { postgresEngine } from '../fixtures/database-engines.js';
import { startTestPostgres, type TestPostgres } from '../fixtures/postgres.js';
import { mirrorStoreCases } from '../plugins/mirror/store-cases.js';

let server: TestPostgres;
beforeAll(async () => {
  server = await startTestPostgres();
}, 60_000);
afterAll(() => server?.stop());

mirrorStoreCases(postgresEngine(() => server));

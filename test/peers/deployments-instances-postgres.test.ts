/** Two deployment runners on one PostgreSQL database: the same cases as on SQLite (test/plugins/deployments/instances.test.ts). */
import { afterAll, beforeAll } from 'vitest';
import { postgresEngine } from '../fixtures/database-engines.js';
import { startTestPostgres, type TestPostgres } from '../fixtures/postgres.js';
import { instancesCases } from '../plugins/deployments/instances-cases.js';

let server: TestPostgres;
beforeAll(async () => {
  server = await startTestPostgres();
}, 60_000);
afterAll(() => server?.stop());

instancesCases(postgresEngine(() => server), 'pg');

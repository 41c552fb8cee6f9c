/** The deployments' and trials' stores on PostgreSQL: the same cases as on SQLite (test/plugins/deployments/store.test.ts). */
import { afterAll, beforeAll } from 'vitest';
import { postgresEngine } from '../fixtures/database-engines.js';
import { startTestPostgres, type TestPostgres } from '../fixtures/postgres.js';
import { deploymentStoreCases } from '../plugins/deployments/store-cases.js';

let server: TestPostgres;
beforeAll(async () => {
  server = await startTestPostgres();
}, 60_000);
afterAll(() => server?.stop());

deploymentStoreCases(postgresEngine(() => server));

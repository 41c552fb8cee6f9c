/** Two instances' trials on one PostgreSQL database: the same cases as on SQLite (test/plugins/deployments/trial-leases.test.ts). */
import { afterAll, beforeAll } from 'vitest';
import { postgresEngine } from '../fixtures/database-engines.js';
import { startTestPostgres, type TestPostgres } from '../fixtures/postgres.js';
import { trialLeasesCases } from '../plugins/deployments/trial-leases-cases.js';

let server: TestPostgres;
beforeAll(async () => {
  server = await startTestPostgres();
}, 60_000);
afterAll(() => server?.stop());

trialLeasesCases(postgresEngine(() => server), 'pg');

/** Fencing of a stalled holder, and epochs after a restore, on one PostgreSQL database: the same cases as on SQLite (test/plugins/deployments/fencing.test.ts). */
import { afterAll, beforeAll } from 'vitest';
import { postgresEngine } from '../fixtures/database-engines.js';
import { startTestPostgres, type TestPostgres } from '../fixtures/postgres.js';
import { fencingCases } from '../plugins/deployments/fencing-cases.js';
import { restoredEpochCases } from '../plugins/deployments/restored-epoch-cases.js';

let server: TestPostgres;
beforeAll(async () => {
  server = await startTestPostgres();
}, 60_000);
afterAll(() => server?.stop());

fencingCases(postgresEngine(() => server), 'pg');
restoredEpochCases(postgresEngine(() => server), 'pg');

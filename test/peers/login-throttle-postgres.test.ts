/** The login throttle's database store on PostgreSQL: the same cases as on SQLite (test/core/auth/login-throttle-sql.test.ts). */
import { afterAll, beforeAll } from 'vitest';
import { postgresEngine } from '../fixtures/database-engines.js';
import { startTestPostgres, type TestPostgres } from '../fixtures/postgres.js';
import { loginThrottleStoreCases } from '../core/auth/login-throttle-cases.js';

let server: TestPostgres;
beforeAll(async () => {
  server = await startTestPostgres();
}, 60_000);
afterAll(() => server?.stop());

loginThrottleStoreCases(postgresEngine(() => server));

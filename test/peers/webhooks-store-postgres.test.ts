/** The webhooks' store on PostgreSQL: the same cases as on SQLite (test/plugins/webhooks/store.test.ts). */
import { afterAll, beforeAll } from 'vitest';
import { postgresEngine } from '../fixtures/database-engines.js';
import { startTestPostgres, type TestPostgres } from '../fixtures/postgres.js';
import { webhookStoreCases } from '../plugins/webhooks/store-cases.js';

let server: TestPostgres;
beforeAll(async () => {
  server = await startTestPostgres();
}, 60_000);
afterAll(() => server?.stop());

webhookStoreCases(postgresEngine(() => server));

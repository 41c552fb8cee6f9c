/** The webhooks' store on SQLite; the same cases run on PostgreSQL in the peer suite (test/peers/webhooks-store-postgres.test.ts). */
import { afterAll } from 'vitest';
import { sqliteEngine } from '../../fixtures/database-engines.js';
import { webhookStoreCases } from './store-cases.js';

const engine = sqliteEngine();
afterAll(() => engine.remove());
webhookStoreCases(engine);

/** The cloud's token registry on SQLite; the same cases run on PostgreSQL in the peer suite (test/peers/cloud-token-store-postgres.test.ts). */
import { afterAll } from 'vitest';
import { sqliteEngine } from '../fixtures/database-engines.js';
import { tokenStoreCases } from './token-store-cases.js';

const engine = sqliteEngine();
afterAll(() => engine.remove());
tokenStoreCases(engine);

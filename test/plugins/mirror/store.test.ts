/** The mirror's store on SQLite; the same cases run on PostgreSQL in the peer suite (test/peers/mirror-store-postgres.test.ts). */
import { afterAll } from 'vitest';
import { sqliteEngine } from '../../fixtures/database-engines.js';
import { mirrorStoreCases } from './store-cases.js';

const engine = sqliteEngine();
afterAll(() => engine.remove());
mirrorStoreCases(engine);

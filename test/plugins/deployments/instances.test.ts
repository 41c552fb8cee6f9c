/** Two deployment runners on one SQLite file, opened twice as two processes would; the same cases run on PostgreSQL in the peer suite (test/peers/deployments-instances-postgres.test.ts). */
import { afterAll } from 'vitest';
import { sqliteEngine } from '../../fixtures/database-engines.js';
import { instancesCases } from './instances-cases.js';

const engine = sqliteEngine();
afterAll(() => engine.remove());
instancesCases(engine, 'sq');

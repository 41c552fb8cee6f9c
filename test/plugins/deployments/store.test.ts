/** The deployments' and trials' stores on SQLite; the same cases run on PostgreSQL in the peer suite (test/peers/deployments-store-postgres.test.ts). */
import { afterAll } from 'vitest';
import { sqliteEngine } from '../../fixtures/database-engines.js';
import { deploymentStoreCases } from './store-cases.js';

const engine = sqliteEngine();
afterAll(() => engine.remove());
deploymentStoreCases(engine);

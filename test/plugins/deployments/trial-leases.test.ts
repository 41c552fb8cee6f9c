/** Two instances' trials on one SQLite file, opened twice as two processes would; the same cases run on PostgreSQL in the peer suite (test/peers/trial-leases-postgres.test.ts). */
import { afterAll } from 'vitest';
import { sqliteEngine } from '../../fixtures/database-engines.js';
import { trialLeasesCases } from './trial-leases-cases.js';

const engine = sqliteEngine();
afterAll(() => engine.remove());
trialLeasesCases(engine, 'sq');

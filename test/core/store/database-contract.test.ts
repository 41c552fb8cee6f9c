/**
 * The database seam's contract on SQLite (the embedded default); the same
 * cases run on PostgreSQL in the peer suite
 * (test/peers/database-contract-postgres.test.ts).
 */
import { afterAll } from 'vitest';
import { sqliteEngine } from '../../fixtures/database-engines.js';
import { databaseContract } from './database-contract.js';

const engine = sqliteEngine();
afterAll(() => engine.remove());
databaseContract(engine);

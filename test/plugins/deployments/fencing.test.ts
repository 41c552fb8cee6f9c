/** Fencing of a stalled holder, and epochs after a restore, on SQLite (one file opened by two processes); the same cases run on PostgreSQL in the peer suite (test/peers/deployments-fencing-postgres.test.ts). */
import { afterAll } from 'vitest';
import { sqliteEngine } from '../../fixtures/database-engines.js';
import { fencingCases } from './fencing-cases.js';
import { restoredEpochCases } from './restored-epoch-cases.js';

const engine = sqliteEngine();
afterAll(() => engine.remove());
fencingCases(engine, 'sq');
restoredEpochCases(engine, 'sq');

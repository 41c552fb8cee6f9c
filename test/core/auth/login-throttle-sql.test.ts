/** The login throttle's database store on SQLite; the same cases run on PostgreSQL in the peer suite (test/peers/login-throttle-postgres.test.ts). */
import { afterAll } from 'vitest';
import { sqliteEngine } from '../../fixtures/database-engines.js';
import { loginThrottleStoreCases } from './login-throttle-cases.js';

const engine = sqliteEngine();
afterAll(() => engine.remove());
loginThrottleStoreCases(engine);

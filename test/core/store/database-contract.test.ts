/**
 * The database seam's contract on SQLite (the embedded default); the same
 * cases run on PostgreSQL in the peer suite
 * (test/peers/database-contract-postgres.test.ts).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';
import { SqliteDatabase } from '../../../core/store/database.js';
import { databaseContract } from './database-contract.js';

const dir = mkdtempSync(join(tmpdir(), 'db-contract-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;

databaseContract({
  name: 'SQLite',
  async fresh() {
    const file = join(dir, `contract-${++files}.db`);
    return { open: () => SqliteDatabase.open(file) };
  },
});

/**
 * Two processes may open one new SQLite file at the same moment (a cloud and
 * `npm run cloud-token` on a fresh data directory, two instances started
 * together on a shared file). The first open switches the file to WAL, which
 * needs it alone: each connection must wait for the other (busy_timeout, set
 * before anything else) instead of failing at once with SQLITE_BUSY.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SqliteDatabase } from '../../../core/store/database.js';

describe('a new SQLite file opened by two connections at once', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sqlite-open-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('200 times: both opens succeed, the file is in WAL, and both write', async () => {
    for (let round = 0; round < 200; round++) {
      const file = join(dir, `db-${round}.db`);
      const dbs = await Promise.all([SqliteDatabase.open(file), SqliteDatabase.open(file)]);
      try {
        expect((await dbs[1].get<{ journal_mode: string }>('PRAGMA journal_mode'))?.journal_mode).toBe('wal');
        await dbs[0].write((tx) => tx.run('CREATE TABLE IF NOT EXISTS t (n INTEGER)'));
        for (const [i, db] of dbs.entries()) await db.write((tx) => tx.run('INSERT INTO t (n) VALUES (?)', [i]), { transaction: true });
        expect((await dbs[1].get<{ c: number }>('SELECT COUNT(*) AS c FROM t'))?.c).toBe(2);
      } finally {
        await Promise.all(dbs.map((db) => db.close()));
      }
    }
  });
});

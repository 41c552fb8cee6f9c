/**
 * Two processes may open one new SQLite file at the same moment (a cloud and
 * `npm run cloud-token` on a fresh data directory, two instances started
 * together on a shared file). The first open switches the file to WAL, which
 * needs it alone, and SQLite refuses that switch at once with SQLITE_BUSY
 * (its busy handler is not called for it) while another connection is
 * reading the new file: each open must wait for the others instead of failing.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SqliteDatabase } from '../../../core/store/database.js';

describe('a new SQLite file opened by several connections at once', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sqlite-open-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('300 times, four at once: every open succeeds, the file is in WAL, and each writes', async () => {
    for (let round = 0; round < 300; round++) {
      const file = join(dir, `db-${round}.db`);
      const dbs = await Promise.all(Array.from({ length: 4 }, () => SqliteDatabase.open(file)));
      try {
        expect((await dbs[1]!.get<{ journal_mode: string }>('PRAGMA journal_mode'))?.journal_mode).toBe('wal');
        await dbs[0]!.write((tx) => tx.run('CREATE TABLE IF NOT EXISTS t (n INTEGER)'));
        for (const [i, db] of dbs.entries()) await db.write((tx) => tx.run('INSERT INTO t (n) VALUES (?)', [i]), { transaction: true });
        expect((await dbs[1]!.get<{ c: number }>('SELECT COUNT(*) AS c FROM t'))?.c).toBe(dbs.length);
      } finally {
        await Promise.all(dbs.map((db) => db.close()));
      }
    }
  });
});

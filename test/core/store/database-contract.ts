/**
 * The database seam's contract, run against both engines: SQLite
 * (test/core/store/database-contract.test.ts, in `npm test`) and PostgreSQL
 * (test/peers/database-contract-postgres.test.ts, in the peer suite). One
 * case list; where the engines may differ in how (not what), the case says so.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { applyMigrations, type Migration } from '../../../core/store/migrations.js';
import type { SqlDatabase, WriteTx } from '../../../core/store/sql-database.js';
import type { EngineUnderTest } from '../../fixtures/database-engines.js';

const TABLES: Migration[] = [
  {
    id: 1,
    name: 'contract tables',
    up: [
      'CREATE TABLE kinds (id INTEGER PRIMARY KEY, t TEXT, i INTEGER, r REAL, b BLOB)',
      'CREATE TABLE counter (id TEXT PRIMARY KEY, n INTEGER NOT NULL)',
      "INSERT INTO counter (id, n) VALUES ('c', 0)",
      'CREATE TABLE jobs (id INTEGER PRIMARY KEY, claimed_by TEXT)',
    ],
  },
];

/** A string holding a code point of every Unicode plane, the control characters but NUL (PostgreSQL's text refuses U+0000), and quotes. */
export const EVERY_PLANE = [
  'A é ß 中 \uFFFD \uFEFF',
  ...Array.from({ length: 16 }, (_, p) => String.fromCodePoint((p + 1) * 0x10000 + 0xf600)),
  String.fromCodePoint(0x10ffff),
  Array.from({ length: 31 }, (_, c) => String.fromCharCode(c + 1)).join(''),
  `'quoted' "double" ? $1 \\ -- /* */`,
].join('|');

const INTEGERS = [0, 1, -1, 2 ** 31, 2 ** 31 + 1, -(2 ** 31) - 1, 2 ** 40, Date.UTC(2026, 10, 26), Number.MAX_SAFE_INTEGER, Number.MIN_SAFE_INTEGER];
const ALL_BYTES = Buffer.from(Array.from({ length: 256 }, (_, i) => i));

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function counter(db: SqlDatabase): Promise<number> {
  return Number((await db.get<{ n: number }>("SELECT n FROM counter WHERE id = 'c'"))?.n);
}

/** Reads the counter, yields to the event loop (so a concurrent job could interleave), and writes it plus one. */
async function increment(tx: WriteTx, pauseMs = 0): Promise<void> {
  const row = await tx.get<{ n: number }>("SELECT n FROM counter WHERE id = 'c'");
  if (pauseMs) await sleep(pauseMs);
  else await new Promise(setImmediate);
  await tx.run("UPDATE counter SET n = ? WHERE id = 'c'", [Number(row?.n) + 1]);
}

export function databaseContract(engine: EngineUnderTest): void {
  describe(`database seam on ${engine.name}`, () => {
    const opened: SqlDatabase[] = [];
    afterEach(async () => {
      for (const db of opened.splice(0)) await db.close();
    });

    /** A fresh database with the contract's tables, and a way to open more instances on it. */
    async function setup(): Promise<{ db: SqlDatabase; another(): Promise<SqlDatabase> }> {
      const target = await engine.fresh();
      const another = async () => {
        const db = await target.open();
        opened.push(db);
        return db;
      };
      const db = await another();
      await applyMigrations(db, 'contract', TABLES);
      return { db, another };
    }

    it('numbers ? placeholders in order, leaving those inside quotes, quoted names and comments', async () => {
      const { db } = await setup();
      const row = await db.get(`SELECT ? AS a, '?' AS b, '$1 ?' AS "what?", ? AS c -- is this ?\n , /* or ? */ ? AS d`, ['x', 'y', 'z']);
      expect(row).toEqual({ a: 'x', b: '?', 'what?': '$1 ?', c: 'y', d: 'z' });
      await db.write((tx) => tx.run('INSERT INTO kinds (id, t, i) VALUES (?, ?, ?)', [1, "it's ?", 7]));
      expect(await db.get('SELECT t, i FROM kinds WHERE id = ? AND t = ?', [1, "it's ?"])).toEqual({ t: "it's ?", i: 7 });
    });

    it('gives back text of every Unicode plane, integers beyond 2^31, every byte value and null as they were written', async () => {
      const { db } = await setup();
      const rows: { id: number; t: string | null; i: number | null; r: number | null; b: Buffer | null }[] = INTEGERS.map((i, n) => ({
        id: n + 1, t: `${EVERY_PLANE}#${n}`, i, r: n + 0.5, b: n % 2 ? ALL_BYTES : Buffer.alloc(0),
      }));
      rows.push({ id: 100, t: null, i: null, r: null, b: null });
      await db.write(async (tx) => {
        for (const r of rows) await tx.run('INSERT INTO kinds (id, t, i, r, b) VALUES (?, ?, ?, ?, ?)', [r.id, r.t, r.i, r.r, r.b]);
      }, { transaction: true });
      expect(await db.all('SELECT id, t, i, r, b FROM kinds ORDER BY id')).toEqual(rows);
      expect(await db.write((tx) => tx.all('SELECT id, t, i, r, b FROM kinds ORDER BY id'))).toEqual(rows);
      // Compared by value in SQL too, so the stored value is the one bound, not only the one read back.
      expect(await db.get('SELECT COUNT(*) AS n FROM kinds WHERE t = ? AND b = ?', [`${EVERY_PLANE}#1`, ALL_BYTES])).toEqual({ n: 1 });
      expect(await db.get('SELECT id FROM kinds WHERE i = ?', [Number.MAX_SAFE_INTEGER])).toEqual({ id: INTEGERS.indexOf(Number.MAX_SAFE_INTEGER) + 1 });
    });

    it('answers counts, sums and comparisons as numbers (true is 1), and keeps a quoted alias as written', async () => {
      const { db } = await setup();
      await db.write(async (tx) => {
        for (const [id, i] of [[1, 2 ** 40], [2, 2 ** 40], [3, 5]]) await tx.run('INSERT INTO kinds (id, i) VALUES (?, ?)', [id!, i!]);
      });
      const row = await db.get('SELECT COUNT(*) AS n, SUM(i) AS total, MAX(i) AS top, MIN(i) < 10 AS small, (1 = 0) AS never, 2 AS "camelCase" FROM kinds');
      expect(row).toEqual({ n: 3, total: 2 ** 41 + 5, top: 2 ** 40, small: 1, never: 0, camelCase: 2 });
    });

    it('binds a bigint within ±2^53 as a number and refuses one beyond', async () => {
      const { db } = await setup();
      await db.write((tx) => tx.run('INSERT INTO kinds (id, i) VALUES (?, ?)', [1, 2n ** 40n]));
      expect(await db.get('SELECT i FROM kinds WHERE id = 1')).toEqual({ i: 2 ** 40 });
      await expect(db.write((tx) => tx.run('INSERT INTO kinds (id, i) VALUES (?, ?)', [2, 2n ** 60n]))).rejects.toThrow(/beyond ±2\^53/);
      await expect(db.all('SELECT ? AS x', [-(2n ** 60n)])).rejects.toThrow(/parameter 1 .* beyond ±2\^53/);
    });

    it('runs the portable statements: ON CONFLICT, RETURNING, UPDATE … FROM a VALUES list with its types cast', async () => {
      const { db } = await setup();
      const result = await db.write(async (tx) => {
        await tx.run('INSERT INTO jobs (id) VALUES (?), (?), (?)', [1, 2, 3]);
        await tx.run('INSERT INTO jobs (id, claimed_by) VALUES (?, ?) ON CONFLICT (id) DO NOTHING', [1, 'nobody']);
        await tx.run('INSERT INTO counter (id, n) VALUES (?, ?) ON CONFLICT (id) DO UPDATE SET n = excluded.n + counter.n', ['c', 5]);
        const changed = await tx.run(
          `WITH v(id, who) AS (VALUES (CAST(? AS BIGINT), ?), (CAST(? AS BIGINT), ?))
           UPDATE jobs SET claimed_by = v.who FROM v WHERE jobs.id = v.id`,
          [2, 'w2', 3, 'w3'],
        );
        return { changed: changed.changes, returned: await tx.all('DELETE FROM jobs WHERE id = ? RETURNING id, claimed_by', [3]) };
      }, { transaction: true });
      expect(result).toEqual({ changed: 2, returned: [{ id: 3, claimed_by: 'w3' }] });
      expect(await db.all('SELECT id, claimed_by FROM jobs ORDER BY id')).toEqual([{ id: 1, claimed_by: null }, { id: 2, claimed_by: 'w2' }]);
      expect(await counter(db)).toBe(5);
    });

    it('commits a transaction whole, and reads do not see it before it commits', async () => {
      const { db } = await setup();
      let seenInside: unknown = 'not read';
      await db.write(async (tx) => {
        await tx.run('INSERT INTO jobs (id) VALUES (?), (?)', [1, 2]);
        expect(await tx.all('SELECT id FROM jobs ORDER BY id')).toEqual([{ id: 1 }, { id: 2 }]);
        seenInside = await db.all('SELECT id FROM jobs');
      }, { transaction: true });
      expect(seenInside).toEqual([]);
      expect(await db.all('SELECT id FROM jobs ORDER BY id')).toEqual([{ id: 1 }, { id: 2 }]);
    });

    it('rolls a transaction back when its job throws, and rejects with what it threw', async () => {
      const { db } = await setup();
      const boom = new Error('boom');
      await expect(db.write(async (tx) => {
        await tx.run('INSERT INTO jobs (id) VALUES (?)', [1]);
        await tx.run("UPDATE counter SET n = 9 WHERE id = 'c'");
        throw boom;
      }, { transaction: true })).rejects.toBe(boom);
      expect(await db.all('SELECT id FROM jobs')).toEqual([]);
      expect(await counter(db)).toBe(0);
    });

    it('rolls back the statements before a failing one, and the next write runs', async () => {
      const { db } = await setup();
      await expect(db.write(async (tx) => {
        await tx.run('INSERT INTO jobs (id) VALUES (?)', [1]);
        await tx.run('INSERT INTO no_such_table (id) VALUES (?)', [1]);
      }, { transaction: true })).rejects.toThrow(/no_such_table/);
      expect(await db.all('SELECT id FROM jobs')).toEqual([]);
      await expect(db.write((tx) => tx.run('INSERT INTO no_such_table (id) VALUES (?)', [1]))).rejects.toThrow(/no_such_table/);
      await db.write((tx) => tx.run('INSERT INTO jobs (id) VALUES (?)', [1]), { transaction: true });
      await db.write((tx) => tx.run('INSERT INTO jobs (id) VALUES (?)', [2]));
      expect(await db.all('SELECT id FROM jobs ORDER BY id')).toEqual([{ id: 1 }, { id: 2 }]);
    });

    it('runs one instance\'s concurrent write jobs one at a time: no read-then-write of one is interleaved with another', async () => {
      const { db } = await setup();
      const reads: Promise<unknown>[] = [];
      const writes = Array.from({ length: 40 }, (_, i) => {
        reads.push(db.all('SELECT n FROM counter'));
        return db.write((tx) => increment(tx), { transaction: i % 2 === 0 });
      });
      await Promise.all([...writes, ...reads]);
      expect(await counter(db)).toBe(40);
    });

    it('streams rows in order through each, beyond one batch', async () => {
      const { db } = await setup();
      await db.write(async (tx) => {
        for (let i = 0; i < 1200; i += 200) await tx.run(`INSERT INTO jobs (id) VALUES ${Array.from({ length: 200 }, (_, k) => `(${i + k + 1})`).join(', ')}`);
      }, { transaction: true });
      const seen: number[] = [];
      const count = await db.each<{ id: number }>('SELECT id FROM jobs WHERE id > ? ORDER BY id', [100], (row) => seen.push(row.id));
      expect(count).toBe(1100);
      expect(seen).toEqual(Array.from({ length: 1100 }, (_, k) => k + 101));
    });

    it('serialises two instances\' transactions under one advisory lock; a lock outside a transaction is refused', async () => {
      const { db, another } = await setup();
      const second = await another();
      let inside = 0;
      let overlapped = false;
      const locked = (instance: SqlDatabase) => instance.write(async (tx) => {
        await tx.lock('contract counter');
        inside++;
        if (inside > 1) overlapped = true;
        await increment(tx, 5);
        inside--;
      }, { transaction: true });
      await Promise.all(Array.from({ length: 10 }, () => [locked(db), locked(second)]).flat());
      expect(overlapped).toBe(false);
      expect(await counter(db)).toBe(20);
      await expect(db.write((tx) => tx.lock('x'))).rejects.toThrow(/lock\('x'\) needs a write transaction/);
    });

    it('lets two instances claim queued rows with dialect.claimRows without ever sharing one', async () => {
      const { db, another } = await setup();
      const second = await another();
      await db.write((tx) => tx.run(`INSERT INTO jobs (id) VALUES ${Array.from({ length: 30 }, (_, k) => `(${k + 1})`).join(', ')}`));
      const claim = (instance: SqlDatabase, who: string, hold?: () => Promise<unknown>) => instance.write(async (tx) => {
        const rows = await tx.all<{ id: number }>(`SELECT id FROM jobs WHERE claimed_by IS NULL ORDER BY id LIMIT 3${tx.dialect.claimRows}`);
        for (const r of rows) await tx.run('UPDATE jobs SET claimed_by = ? WHERE id = ?', [who, r.id]);
        await hold?.();
        return rows.map((r) => r.id);
      }, { transaction: true });

      // One instance holds its claim open while the other claims: on PostgreSQL the second skips the
      // held rows and finishes first; on SQLite it waits for the first's transaction to end.
      let secondDone = false;
      let secondDoneWhileHeld = false;
      let secondStarted!: () => void;
      const started = new Promise<void>((resolve) => (secondStarted = resolve));
      let secondClaim!: Promise<number[]>;
      const firstClaim = claim(db, 'a', async () => {
        secondClaim = claim(second, 'b').then((ids) => ((secondDone = true), ids));
        secondStarted();
        if (db.dialect.engine === 'postgres') await Promise.race([secondClaim, sleep(3000)]);
        secondDoneWhileHeld = secondDone;
      });
      await started;
      const [a, b] = await Promise.all([firstClaim, secondClaim]);
      expect(secondDone).toBe(true);
      expect(secondDoneWhileHeld).toBe(db.dialect.engine === 'postgres');
      expect(a).toHaveLength(3);
      expect(b).toHaveLength(3);
      expect(a.filter((id) => b.includes(id))).toEqual([]);

      // Then both drain the queue at once: every row claimed exactly once, by the claimant recorded.
      const drain = async (instance: SqlDatabase, who: string) => {
        const mine: number[] = [];
        for (let ids = await claim(instance, who); ids.length > 0; ids = await claim(instance, who)) mine.push(...ids);
        return mine;
      };
      const [x, y] = await Promise.all([drain(db, 'x'), drain(second, 'y')]);
      const all = [...a, ...b, ...x, ...y].sort((p, q) => p - q);
      expect(all).toEqual(Array.from({ length: 30 }, (_, k) => k + 1));
      const recorded = await db.all<{ id: number; claimed_by: string }>('SELECT id, claimed_by FROM jobs ORDER BY id');
      for (const r of recorded) expect([a, b, x, y][['a', 'b', 'x', 'y'].indexOf(r.claimed_by)]).toContain(r.id);
    });

    it('applies each migration once when two instances start together on one database', async () => {
      const target = await engine.fresh();
      const [first, second] = [await target.open(), await target.open()];
      opened.push(first, second);
      let functionRuns = 0;
      const migrations: Migration[] = [
        { id: 1, name: 'a table', up: ['CREATE TABLE started (id INTEGER PRIMARY KEY, note TEXT NOT NULL, payload BLOB)'] },
        { id: 2, name: 'a row by code', up: async (tx) => {
          functionRuns++;
          await tx.run('INSERT INTO started (id, note) VALUES (?, ?)', [1, tx.dialect.engine]);
        } },
        { id: 3, name: 'per engine', up: { sqlite: ["INSERT INTO started (id, note) VALUES (2, 'sqlite')"], postgres: ["INSERT INTO started (id, note) VALUES (2, 'postgres')"] } },
      ];
      const [x, y] = await Promise.all([applyMigrations(first, 'racing', migrations), applyMigrations(second, 'racing', migrations)]);
      expect([...x, ...y].sort()).toEqual([1, 2, 3]);
      expect(functionRuns).toBe(1);
      const engineName = first.dialect.engine;
      expect(await first.all('SELECT id, note FROM started ORDER BY id')).toEqual([{ id: 1, note: engineName }, { id: 2, note: engineName }]);
      expect(await first.all("SELECT version FROM schema_migrations WHERE plugin = 'racing' ORDER BY version")).toEqual([{ version: 1 }, { version: 2 }, { version: 3 }]);
      expect(await applyMigrations(second, 'racing', migrations)).toEqual([]);
    });
  });
}

import { afterEach, describe, expect, it } from 'vitest';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Database } from '../../../../../core/store/database.js';
import { GATEWAY_MIGRATIONS as MIGRATIONS, migrateGatewayStore as migrate } from '../../../../../core/roles/gateway/store/schema.js';
import { HistoryWriter } from '../../../../../core/roles/gateway/history/writer.js';

const open: { close(): Promise<void> }[] = [];
afterEach(async () => {
  while (open.length) await open.pop()?.close();
});

async function freshDb(file = join(mkdtempSync(join(tmpdir(), 'gw-store-')), 'gateway.db')) {
  const db = await Database.open(file);
  open.push(db);
  await migrate(db);
  return { db, file };
}

const row = (i: number) => ({ machineID: `M${i % 3}`, cls: 'Heartbeat', ts: 1_700_000_000_000 + i, data: { i } });

describe('store', () => {
  it('runs in WAL mode with versioned migrations applied once', async () => {
    const { db, file } = await freshDb();
    const mode = await db.get<{ journal_mode: string }>('PRAGMA journal_mode');
    expect(mode?.journal_mode).toBe('wal');
    const versions = await db.all<{ plugin: string; version: number }>('SELECT plugin, version FROM schema_migrations ORDER BY version');
    expect(versions).toEqual(MIGRATIONS.map((m) => ({ plugin: 'core', version: m.id })));
    await db.close();
    open.pop();
    const again = await Database.open(file);
    open.push(again);
    expect(await migrate(again)).toEqual([]);
  });
});

describe('HistoryWriter', () => {
  it('counts rows in flushes not yet committed as in flight, and none once they are', async () => {
    const { db } = await freshDb();
    const writer = await HistoryWriter.open(db, { maxRows: 1000, flushIntervalMs: 60_000 });
    for (let i = 0; i < 30; i++) writer.push(row(i));
    const first = writer.flush();
    for (let i = 30; i < 40; i++) writer.push(row(i));
    const second = writer.flush();
    expect(writer.stats).toMatchObject({ pending: 0, inFlight: 40 });
    await first;
    await second;
    expect(writer.stats).toMatchObject({ pending: 0, inFlight: 0, rowsWritten: 40 });
    await writer.close();
  });

  it('bumps the revision of a machine whose committed rows land in its settled past, and only then', async () => {
    const { db } = await freshDb();
    const now = 1_800_000_000_000;
    const writer = await HistoryWriter.open(db, { now: () => now });
    const settled = writer.revisions.settledBefore(now);
    const before = [writer.revisions.of('A'), writer.revisions.of('B'), writer.revisions.of('C')];
    writer.push({ machineID: 'A', cls: 'Count', ts: now - 1000, data: { delta: 1 } });
    writer.push({ machineID: 'B', cls: 'Count', ts: settled - 1, data: { delta: 1 } });
    writer.push({ machineID: 'C', cls: 'AlarmHistory', ts: now - 1000, data: { start: settled - 60_000, end: now - 1000 } });
    expect(writer.revisions.of('B')).toBe(before[1]);
    await writer.flush();
    expect(writer.revisions.of('A')).toBe(before[0]);
    expect(writer.revisions.of('B')).toBeGreaterThan(before[1]!);
    expect(writer.revisions.of('C')).toBeGreaterThan(before[2]!);
    await writer.close();
  });

  it('flushes by row count as one multi-row transaction', async () => {
    const { db } = await freshDb();
    const writer = await HistoryWriter.open(db, { maxRows: 100, flushIntervalMs: 1000 });
    for (let i = 0; i < 250; i++) writer.push(row(i));
    // 200 rows reached the count threshold twice; 50 wait for the timer.
    await writer.flush();
    expect(writer.stats.flushes).toBe(3);
    const count = await db.get<{ n: number }>('SELECT COUNT(*) AS n FROM history');
    expect(count?.n).toBe(250);
    await writer.close();
  });

  it('flushes by time: a lone row is committed within the flush interval', async () => {
    const { db } = await freshDb();
    const writer = await HistoryWriter.open(db, { maxRows: 500, flushIntervalMs: 50 });
    writer.push(row(1));
    expect((await db.get<{ n: number }>('SELECT COUNT(*) AS n FROM history'))?.n).toBe(0);
    await new Promise((r) => setTimeout(r, 200));
    expect((await db.get<{ n: number }>('SELECT COUNT(*) AS n FROM history'))?.n).toBe(1);
    await writer.close();
  });

  it('gives every row a monotonically increasing sequence number that continues after a restart', async () => {
    const { db, file } = await freshDb();
    const writer = await HistoryWriter.open(db, { maxRows: 7 });
    const first = Array.from({ length: 20 }, (_, i) => writer.push(row(i)));
    await writer.close();
    await db.close();
    open.pop();
    const db2 = await Database.open(file);
    open.push(db2);
    // Retention may delete the newest rows' predecessors, or even all rows; the sequence must not restart.
    await db2.write((tx) => tx.run('DELETE FROM history'));
    const writer2 = await HistoryWriter.open(db2);
    const second = Array.from({ length: 5 }, (_, i) => writer2.push(row(i)));
    await writer2.close();
    const all = [...first, ...second];
    for (let i = 1; i < all.length; i++) expect(all[i]).toBe((all[i - 1] as number) + 1);
    const stored = await db2.all<{ seq: number }>('SELECT seq FROM history ORDER BY seq');
    expect(stored.map((r) => r.seq)).toEqual(second);
  });

  it('keeps rows for the next flush when a write fails, and loses none', async () => {
    const { db } = await freshDb();
    const writer = await HistoryWriter.open(db, { maxRows: 10, flushIntervalMs: 1000 });
    await db.write((tx) => tx.run('ALTER TABLE history RENAME TO history_away'));
    for (let i = 0; i < 5; i++) writer.push(row(i));
    await writer.flush();
    expect(writer.stats.failedFlushes).toBe(1);
    expect(writer.stats.pending).toBe(5);
    await db.write((tx) => tx.run('ALTER TABLE history_away RENAME TO history'));
    await writer.close();
    expect((await db.get<{ n: number }>('SELECT COUNT(*) AS n FROM history'))?.n).toBe(5);
  });

  it('close() flushes what is queued and refuses later rows', async () => {
    const { db } = await freshDb();
    const writer = await HistoryWriter.open(db, { maxRows: 500, flushIntervalMs: 1000 });
    for (let i = 0; i < 42; i++) writer.push(row(i));
    await writer.close();
    expect((await db.get<{ n: number }>('SELECT COUNT(*) AS n FROM history'))?.n).toBe(42);
    expect(() => writer.push(row(1))).toThrow(/closed/);
  });
});

describe('the history in sequence order', () => {
  it('tells each committed flush to its listeners in sequence order, with what is committed through', async () => {
    const { db } = await freshDb();
    const writer = await HistoryWriter.open(db, { maxRows: 1000, flushIntervalMs: 60_000 });
    const told: { seqs: number[]; through: number }[] = [];
    const stop = writer.onCommit((rows, through) => told.push({ seqs: rows.map((r) => r.seq), through }));
    for (let i = 0; i < 3; i++) writer.push(row(i));
    expect(writer.committedThrough).toBe(0);
    await writer.flush();
    for (let i = 3; i < 5; i++) writer.push(row(i));
    expect(writer.committedThrough).toBe(3);
    await writer.flush();
    stop();
    writer.push(row(5));
    await writer.flush();
    expect(told).toEqual([{ seqs: [1, 2, 3], through: 3 }, { seqs: [4, 5], through: 5 }]);
    expect(writer.committedThrough).toBe(6);
    await writer.close();
  });

  it('does not count a failed flush as committed while a later one commits, and keeps its rows in order for the retry', async () => {
    const { db } = await freshDb();
    const writer = await HistoryWriter.open(db, { maxRows: 1000, flushIntervalMs: 60_000 });
    const told: number[][] = [];
    writer.onCommit((rows) => told.push(rows.map((r) => r.seq)));
    const realWrite = db.write.bind(db);
    let failNext = true;
    db.write = ((fn: never, opts: never) => {
      if (failNext) {
        failNext = false;
        return Promise.reject(new Error('disk full'));
      }
      return realWrite(fn, opts);
    }) as typeof db.write;
    for (let i = 0; i < 2; i++) writer.push(row(i));
    const failed = writer.flush();
    for (let i = 2; i < 4; i++) writer.push(row(i));
    const later = writer.flush();
    await failed;
    await later;
    // Rows 1-2 are back in the buffer; 3-4 committed.
    expect(told).toEqual([[3, 4]]);
    expect(writer.committedThrough).toBe(0);
    await writer.flush();
    expect(told).toEqual([[3, 4], [1, 2]]);
    expect(writer.committedThrough).toBe(4);
    await writer.close();
  });

  it('reads the rows after a sequence number up to a bound, oldest first, by machine and class', async () => {
    const { db } = await freshDb();
    const { readAfterSeq, sequenceBounds } = await import('../../../../../core/roles/gateway/history/sequence.js');
    const writer = await HistoryWriter.open(db, { maxRows: 1000, flushIntervalMs: 60_000 });
    expect(await sequenceBounds(db)).toEqual({ first: 0, last: 0, rows: 0 });
    for (let i = 0; i < 10; i++) writer.push(row(i));
    await writer.flush();
    expect(await sequenceBounds(db)).toEqual({ first: 1, last: 10, rows: 10 });
    const all = await readAfterSeq(db, { afterSeq: 2, throughSeq: 8, limit: 100 });
    expect(all.map((r) => r.seq)).toEqual([3, 4, 5, 6, 7, 8]);
    expect(all[0]).toEqual({ seq: 3, machineID: 'M2', cls: 'Heartbeat', ts: 1_700_000_000_002, data: '{"i":2}' });
    expect((await readAfterSeq(db, { afterSeq: 0, throughSeq: 10, limit: 2 })).map((r) => r.seq)).toEqual([1, 2]);
    expect((await readAfterSeq(db, { afterSeq: 0, throughSeq: 10, limit: 100, machineIDs: ['M0'] })).map((r) => r.seq)).toEqual([1, 4, 7, 10]);
    expect(await readAfterSeq(db, { afterSeq: 0, throughSeq: 10, limit: 100, classes: ['Count'] })).toEqual([]);
    expect(await readAfterSeq(db, { afterSeq: 0, throughSeq: 10, limit: 100, machineIDs: [] })).toEqual([]);
    await writer.close();
  });
});

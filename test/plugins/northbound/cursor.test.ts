/**
 * The cursor: it moves to a row only when the broker acknowledged that row
 * and every row before it; a target reads committed rows only, from memory
 * while it keeps up and from the database otherwise, and counts the
 * sequence numbers the history no longer has; its position is kept by name.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { SequencedRow } from '../../../core/roles/gateway/history/sequence.js';
import { AckWindow } from '../../../plugins/northbound/ack-window.js';
import { CommittedTail } from '../../../plugins/northbound/committed-tail.js';
import { CURSOR_MIGRATIONS, CursorStore } from '../../../plugins/northbound/cursor-store.js';
import { RowSource } from '../../../plugins/northbound/row-source.js';
import { applyMigrations } from '../../../core/store/migrations.js';
import { openHistory, type TestHistory } from './history-rows.js';

const row = (seq: number): SequencedRow => ({ seq, machineID: 'M1', cls: 'Heartbeat', ts: 1_800_000_000_000 + seq, data: '{}' });
const heartbeat = (i: number) => ({ machineID: `M${i % 3}`, cls: 'Heartbeat', ts: 1_800_000_000_000 + i, data: { i } });

describe('the acknowledgement window', () => {
  it('moves the cursor to a row only when it and every row before it are acknowledged, whatever order the acknowledgements come in', () => {
    const window = new AckWindow();
    const a = window.add(1, 1);
    const b = window.add(2, 2);
    const c = window.add(3, 1);
    expect(window.acknowledge(c)).toEqual([]);
    expect(window.acknowledge(b)).toEqual([]);
    expect(window.acknowledge(a).map((e) => e.through)).toEqual([1]);
    expect(window.acknowledge(b).map((e) => e.through)).toEqual([2, 3]);
    // A stretch without rows and a row without messages move with the ones before them.
    const d = window.add(4, 1);
    window.add(9, 0);
    expect(window.takeDone()).toEqual([]);
    expect(window.acknowledge(d).map((e) => e.through)).toEqual([4, 9]);
    // An entry acknowledged again (a late callback) moves nothing.
    expect(window.acknowledge(d)).toEqual([]);
  });
});

describe('the committed tail', () => {
  it('answers a range only when it holds every sequence number above where it started, and puts a retried flush\'s rows in their place', () => {
    const tail = new CommittedTail(10, 100);
    tail.add([row(11), row(12)]);
    expect(tail.read(9, 12, 10)).toBeUndefined();
    expect(tail.read(10, 12, 10)?.map((r) => r.seq)).toEqual([11, 12]);
    tail.add([row(15), row(16)]);
    tail.add([row(13), row(14)]);
    expect(tail.read(10, 16, 10)?.map((r) => r.seq)).toEqual([11, 12, 13, 14, 15, 16]);
    expect(tail.read(12, 14, 1)?.map((r) => r.seq)).toEqual([13]);
  });

  it('lets go of its oldest rows beyond its bound and of those every cursor is past; a read below them goes to the database', () => {
    const tail = new CommittedTail(0, 3);
    tail.add([row(1), row(2), row(3), row(4), row(5)]);
    expect(tail.completeAbove).toBe(2);
    expect(tail.read(1, 5, 10)).toBeUndefined();
    expect(tail.read(2, 5, 10)?.map((r) => r.seq)).toEqual([3, 4, 5]);
    tail.release(4);
    expect(tail.size).toBe(1);
    expect(tail.read(3, 5, 10)).toBeUndefined();
    expect(tail.read(4, 5, 10)?.map((r) => r.seq)).toEqual([5]);
  });
});

describe('reading the history from a position', () => {
  let history: TestHistory;
  beforeEach(async () => {
    history = await openHistory();
  });
  afterEach(() => history.close());

  it('reads committed rows only, from the tail or the database alike, and counts what retention deleted as missing', async () => {
    const tail = new CommittedTail(history.writer.stats.lastSeq, 1000);
    history.writer.onCommit((rows) => tail.add(rows));
    const source = new RowSource({ db: history.db, tail, committedThrough: () => history.writer.committedThrough });
    const fromDb = new RowSource({ db: history.db, tail: new CommittedTail(Number.MAX_SAFE_INTEGER, 1), committedThrough: () => history.writer.committedThrough });
    await history.write(Array.from({ length: 20 }, (_, i) => heartbeat(i)));
    // Pushed, not committed: not read.
    history.writer.push(heartbeat(99));
    expect(await source.next(20, 10)).toBeUndefined();
    const first = await source.next(0, 8);
    expect(first?.rows.map((r) => r.seq)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect(first).toMatchObject({ coveredThrough: 8, missing: 0 });
    expect(await fromDb.next(0, 8)).toEqual(first);
    await history.writer.flush();
    // Retention deleted seq 10-14 and 18.
    await history.db.write((tx) => tx.run('DELETE FROM history WHERE seq BETWEEN 10 AND 14 OR seq = 18'));
    const rest = await fromDb.next(8, 100);
    expect(rest?.rows.map((r) => r.seq)).toEqual([9, 15, 16, 17, 19, 20, 21]);
    expect(rest).toMatchObject({ coveredThrough: 21, missing: 6 });
    expect(await fromDb.firstTimeAfter(9)).toBe(1_800_000_000_014);
  });

  it('keeps each target\'s position by name; a new target starts after the last row recorded before this start of the gateway', async () => {
    await applyMigrations(history.db, 'northbound', CURSOR_MIGRATIONS);
    const store = new CursorStore(history.db, () => 1);
    const startedAt = 1_800_000_000_010;
    expect(await store.startOfRun(startedAt, 0)).toBe(0);
    await history.write(Array.from({ length: 20 }, (_, i) => heartbeat(i)));
    expect(await store.startOfRun(startedAt, 20)).toBe(10);
    // A history with nothing older than the start: before its first row.
    await history.db.write((tx) => tx.run('DELETE FROM history WHERE seq <= 12'));
    expect(await store.startOfRun(startedAt, 20)).toBe(12);
    expect(await store.read('plant')).toBeUndefined();
    await store.write('plant', { cursor: 17, lostRows: 2, oversizeRows: 1, bdSeq: 4 });
    await store.write('plant', { cursor: 18, lostRows: 2, oversizeRows: 1, bdSeq: 5 });
    expect(await store.read('plant')).toEqual({ cursor: 18, lostRows: 2, oversizeRows: 1, bdSeq: 5 });
  });
});

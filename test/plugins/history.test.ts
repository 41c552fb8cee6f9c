import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { HistoryRow } from '../../core/roles/gateway/history/writer.js';
import { buildCursorQuery, HISTORY_INDEX, type HistoryCursorSpec } from '../../core/roles/gateway/history/query.js';
import type { SqlValue } from '../../core/store/database.js';
import { readHistoryPage } from '../../core/roles/gateway/history/stream.js';
import { formatInZone, offsetMs } from '../../core/values/time.js';
import { timeTextFormatter } from '../../plugins/history/time-text.js';
import { simMachine, startTestGateway, type TestGateway } from '../fixtures/gateway.js';

/** Seeded rows lie in the past: no background retention may delete them mid-test. */
const NO_RETENTION = { default: { maxAgeDays: 0, maxRows: 0 }, classes: {} };

/** A real gateway logged in as the administrator, with no background retention. */
function startHistoryGateway(raw: Record<string, unknown> = {}): Promise<TestGateway> {
  return startTestGateway({ history: { retention: NO_RETENTION }, ...raw });
}

type Row = { seq: number; machineID?: string; time: number; timeText: string; data: Record<string, unknown> };
type Answer = {
  type: string;
  machineID?: string;
  groupID?: string;
  machineIDs?: string[];
  window: { startUnix: number; endUnix: number; start: string; end: string; timeZone: string };
  order: 'oldestFirst' | 'newestFirst';
  count: number;
  limitReached: boolean;
  data: Row[];
};

/** 2025-01-10T00:00:00Z: seeded rows lie in the past, apart from the simulated machines' own rows. */
const BASE = Date.UTC(2025, 0, 10);
const MIN = 60_000;
const iso = (ms: number) => new Date(ms).toISOString();

async function seed(g: TestGateway, rows: HistoryRow[]): Promise<number[]> {
  const seqs = rows.map((r) => g.gateway.context.history.push(r));
  await g.gateway.context.history.flush();
  return seqs;
}

async function read(g: TestGateway, url: string): Promise<Answer> {
  const res = await g.request('GET', url);
  expect(res.status, res.raw).toBe(200);
  expect(res.body.errorCode).toBe(0);
  return res.body.data as Answer;
}

const FLEET = {
  machines: [simMachine('M1'), simMachine('M2'), simMachine('M3', { isActive: false })],
  groups: [
    { groupID: 'G1', name: 'Line 1', machineIDs: ['M1', 'M2'] },
    { groupID: 'EMPTY', name: 'Empty', machineIDs: [] },
  ],
};

describe('machine and group history', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startHistoryGateway(FLEET);
    const rows: HistoryRow[] = [];
    // M1: a State row every minute for 10 minutes; M2 the same, 30 s later; M3 (inactive) two rows.
    for (let i = 0; i < 10; i++) {
      rows.push({ machineID: 'M1', cls: 'State', ts: BASE + i * MIN, data: { state: i % 2 ? 'idle' : 'running', i } });
      rows.push({ machineID: 'M2', cls: 'State', ts: BASE + i * MIN + 30_000, data: { state: 'alarm', i } });
    }
    rows.push({ machineID: 'M1', cls: 'OEE', ts: BASE, data: { oee: 0.8 } });
    rows.push({ machineID: 'M3', cls: 'Heartbeat', ts: BASE, data: { state: 'inactive' } });
    rows.push({ machineID: 'M3', cls: 'Heartbeat', ts: BASE + MIN, data: { state: 'inactive' } });
    await seed(gw, rows);
  });
  afterAll(async () => {
    await gw?.stop();
  });

  const window = `start=${iso(BASE)}&end=${iso(BASE + 10 * MIN)}`;

  it('GW-60 answers oldest first by default with {type, machineID, window, order, count, limitReached, data}', async () => {
    const a = await read(gw, `/api/history/machine?machineID=M1&type=State&${window}`);
    expect(Object.keys(a).sort()).toEqual(['count', 'data', 'limitReached', 'machineID', 'order', 'type', 'window'].sort());
    expect(a).toMatchObject({ type: 'State', machineID: 'M1', order: 'oldestFirst', count: 10, limitReached: false });
    expect(a.data.map((r) => r.data.i)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(a.data[0]).toEqual({ seq: expect.any(Number), time: BASE, timeText: '2025-01-10T00:00:00.000+00:00', data: { state: 'running', i: 0 } });
    const seqs = a.data.map((r) => r.seq);
    expect([...seqs].sort((x, y) => x - y)).toEqual(seqs);
  });

  it('GW-60 newestFirst=true returns the most recent rows first', async () => {
    const a = await read(gw, `/api/history/machine?machineID=M1&type=State&${window}&newestFirst=true&limit=3`);
    expect(a.order).toBe('newestFirst');
    expect(a.data.map((r) => r.data.i)).toEqual([9, 8, 7]);
    expect(a.limitReached).toBe(true);
  });

  it('GW-60 limit cuts the answer and limitReached says more rows existed; limit=0 is unlimited', async () => {
    const cut = await read(gw, `/api/history/machine?machineID=M1&type=State&${window}&limit=4`);
    expect([cut.count, cut.limitReached]).toEqual([4, true]);
    expect(cut.data.map((r) => r.data.i)).toEqual([0, 1, 2, 3]);
    const exact = await read(gw, `/api/history/machine?machineID=M1&type=State&${window}&limit=10`);
    expect([exact.count, exact.limitReached]).toEqual([10, false]);
    const all = await read(gw, `/api/history/machine?machineID=M1&type=State&${window}&limit=0`);
    expect([all.count, all.limitReached]).toEqual([10, false]);
  });

  it('GW-60 limit defaults to 200', async () => {
    const g = await startHistoryGateway({ machines: [simMachine('X', { isActive: false })] });
    try {
      await seed(g, Array.from({ length: 250 }, (_, i) => ({ machineID: 'X', cls: 'Count', ts: BASE + i * 1000, data: { i } })));
      const a = await read(g, `/api/history/machine?machineID=X&type=Count&start=${iso(BASE)}&end=${iso(BASE + 3600_000)}`);
      expect([a.count, a.limitReached]).toEqual([200, true]);
      expect(a.data[199]?.data.i).toBe(199);
    } finally {
      await g.stop();
    }
  });

  it('afterSeq resumes after the last row of an answer that reached its limit', async () => {
    const pages: number[][] = [];
    let afterSeq: number | undefined;
    for (;;) {
      const a = await read(gw, `/api/history/machine?machineID=M1&type=State&${window}&limit=4${afterSeq === undefined ? '' : `&afterSeq=${afterSeq}`}`);
      pages.push(a.data.map((r) => r.data.i as number));
      if (!a.limitReached) break;
      afterSeq = a.data[a.data.length - 1]?.seq;
    }
    expect(pages).toEqual([[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]);
  });

  it('GW-16 start is inclusive, end exclusive, and the window object is returned', async () => {
    const a = await read(gw, `/api/history/machine?machineID=M1&type=State&start=${iso(BASE + 2 * MIN)}&end=${iso(BASE + 5 * MIN)}`);
    expect(a.data.map((r) => r.data.i)).toEqual([2, 3, 4]);
    expect(a.window).toEqual({
      startUnix: (BASE + 2 * MIN) / 1000,
      endUnix: (BASE + 5 * MIN) / 1000,
      start: '2025-01-10T00:02:00+00:00',
      end: '2025-01-10T00:05:00+00:00',
      timeZone: 'UTC',
    });
  });

  it('GW-46 end defaults to now and includes rows recorded this very second', async () => {
    const ts = Date.now();
    await seed(gw, [{ machineID: 'M3', cls: 'Count', ts, data: { fresh: true } }]);
    const a = await read(gw, `/api/history/machine?machineID=M3&type=Count&start=-1h`);
    expect(a.data.map((r) => r.data)).toEqual([{ fresh: true }]);
    expect(a.window.endUnix).toBe(Math.floor(a.window.endUnix));
  });

  it('GW-95 start is required and a bad time form lists the accepted forms', async () => {
    const missing = await gw.request('GET', '/api/history/machine?machineID=M1&type=State');
    expect(missing.status).toBe(400);
    expect(missing.body.errorMsg).toMatch(/start/);
    const bad = await gw.request('GET', '/api/history/machine?machineID=M1&type=State&start=last%20week');
    expect(bad.status).toBe(400);
    expect(bad.body.errorMsg).toMatch(/start: found "last week"/);
    expect(bad.body.errorMsg).toMatch(/-30m/);
    const backwards = await gw.request('GET', `/api/history/machine?machineID=M1&type=State&start=${iso(BASE + MIN)}&end=${iso(BASE)}`);
    expect(backwards.status).toBe(400);
    expect(backwards.body.errorMsg).toMatch(/end must be later than start/);
  });

  it('GW-95 an unknown class lists the valid ones, including classes recorded only for that machine', async () => {
    const res = await gw.request('GET', `/api/history/machine?machineID=M1&type=Nope&${window}`);
    expect(res.status).toBe(400);
    expect(res.body.errorCode).toBe(2);
    for (const cls of ['CNCStatus', 'AlarmLog', 'AlarmHistory', 'Count', 'State', 'Heartbeat', 'OEE']) expect(res.body.errorMsg).toContain(cls);
    expect(res.body.errorMsg).toMatch(/type: found "Nope"/);
    // OEE is recorded for M1 only: valid there, unknown for M2.
    const oee = await read(gw, `/api/history/machine?machineID=M1&type=OEE&${window}`);
    expect(oee.data.map((r) => r.data)).toEqual([{ oee: 0.8 }]);
    const m2 = await gw.request('GET', `/api/history/machine?machineID=M2&type=OEE&${window}`);
    expect(m2.status).toBe(400);
    expect(m2.body.errorMsg).not.toContain('OEE,');
  });

  it('a known class without rows is an empty answer, not an error', async () => {
    const a = await read(gw, `/api/history/machine?machineID=M2&type=AlarmHistory&${window}`);
    expect([a.count, a.limitReached, a.data]).toEqual([0, false, []]);
  });

  it('GW-94 an unknown machineID answers 10003 with the list_machines hint', async () => {
    const res = await gw.request('GET', `/api/history/machine?machineID=NOPE&type=State&${window}`);
    expect(res.status).toBe(404);
    expect(res.body).toMatchObject({ errorCode: 10003, hint: expect.stringMatching(/list_machines/) });
    expect(res.body.errorMsg).toContain("'NOPE'");
  });

  it('an inactive machine keeps its history readable (history outlives activity; docs/history.md)', async () => {
    const a = await read(gw, `/api/history/machine?machineID=M3&type=Heartbeat&${window}`);
    expect(a.count).toBe(2);
    // A live read of the same machine is refused: the decision is specific to history.
    const live = await gw.request('GET', '/api/task/readTaskData?machineID=M3&type=CNCStatus');
    expect(live.body.errorCode).toBe(10003);
  });

  it('GW-60 group history merges the members’ rows in time order, each with its machineID; limit applies to the merge', async () => {
    const a = await read(gw, `/api/history/group?groupID=G1&type=State&${window}&limit=0`);
    expect(a).toMatchObject({ type: 'State', groupID: 'G1', machineIDs: ['M1', 'M2'], order: 'oldestFirst', count: 20, limitReached: false });
    expect(a.data.slice(0, 4).map((r) => [r.machineID, r.data.i])).toEqual([
      ['M1', 0],
      ['M2', 0],
      ['M1', 1],
      ['M2', 1],
    ]);
    const times = a.data.map((r) => r.time);
    expect([...times].sort((x, y) => x - y)).toEqual(times);

    const cut = await read(gw, `/api/history/group?groupID=G1&type=State&${window}&limit=3&newestFirst=true`);
    expect(cut.data.map((r) => [r.machineID, r.data.i])).toEqual([
      ['M2', 9],
      ['M1', 9],
      ['M2', 8],
    ]);
    expect([cut.count, cut.limitReached, cut.order]).toEqual([3, true, 'newestFirst']);
  });

  it('group history of an empty group is empty; an unknown groupID answers 10005', async () => {
    const empty = await read(gw, `/api/history/group?groupID=EMPTY&type=State&${window}`);
    expect([empty.count, empty.data]).toEqual([0, []]);
    const res = await gw.request('GET', `/api/history/group?groupID=NOPE&type=State&${window}`);
    expect(res.status).toBe(404);
    expect(res.body.errorCode).toBe(10005);
  });

  it('GW-38 machineID and groupID cannot be confused: each interface takes only its own', async () => {
    const both = await gw.request('GET', `/api/history/machine?machineID=M1&groupID=G1&type=State&${window}`);
    expect(both.status).toBe(400);
    expect(both.body.errorMsg).toMatch(/groupID/);
    const groupAsMachine = await gw.request('GET', `/api/history/machine?machineID=G1&type=State&${window}`);
    expect(groupAsMachine.body.errorCode).toBe(10003);
    const machineOnGroup = await gw.request('GET', `/api/history/group?machineID=M1&type=State&${window}`);
    expect(machineOnGroup.status).toBe(400);
    expect(machineOnGroup.body.errorMsg).toMatch(/machineID/);
  });

  it('GW-95 wrong types name the field: limit, newestFirst, afterSeq', async () => {
    for (const [field, value] of [['limit', '-1'], ['limit', 'many'], ['newestFirst', 'maybe'], ['afterSeq', 'x']] as const) {
      const res = await gw.request('GET', `/api/history/machine?machineID=M1&type=State&${window}&${field}=${value}`);
      expect(res.status, `${field}=${value}`).toBe(400);
      expect(res.body.errorMsg).toContain(field);
    }
  });
});

describe('time zone', () => {
  let gw: TestGateway | undefined;
  afterEach(async () => {
    await gw?.stop();
    gw = undefined;
  });

  it('GW-43 local times are read, and row times shown, in the gateway time zone', async () => {
    gw = await startHistoryGateway({ gateway: { timeZone: 'Europe/Berlin' }, machines: [simMachine('B', { isActive: false })] });
    // 2025-07-01T10:00:00.250Z is 12:00:00.250 in Berlin (summer time).
    const ts = Date.UTC(2025, 6, 1, 10, 0, 0, 250);
    await seed(gw, [{ machineID: 'B', cls: 'State', ts, data: {} }]);
    const a = await read(gw, '/api/history/machine?machineID=B&type=State&start=2025-07-01T12:00&end=2025-07-01T12:01');
    expect(a.window.start).toBe('2025-07-01T12:00:00+02:00');
    expect(a.data[0]).toMatchObject({ time: ts, timeText: '2025-07-01T12:00:00.250+02:00' });
  });
});

describe('row time text', () => {
  it('GW-40 matches formatInZone (plus milliseconds) across DST changes and in quarter-hour zones', () => {
    for (const zone of ['Europe/Berlin', 'America/New_York', 'Australia/Adelaide', 'Asia/Kathmandu', 'UTC']) {
      const text = timeTextFormatter(zone);
      // Every 3 h 7.5 s through 2026, and every 61.25 s for two hours around each offset change.
      const instants: number[] = [];
      for (let ms = Date.UTC(2026, 0, 1); ms < Date.UTC(2027, 0, 1); ms += 3 * 3600_000 + 7500) instants.push(ms);
      for (let hour = Date.UTC(2026, 0, 1); hour < Date.UTC(2027, 0, 1); hour += 3600_000) {
        if (offsetMs(hour, zone) === offsetMs(hour + 3600_000, zone)) continue;
        for (let ms = hour - 3600_000; ms < hour + 2 * 3600_000; ms += 61_250) instants.push(ms);
      }
      for (const ms of instants) {
        const exact = formatInZone(ms, zone);
        const want = `${exact.slice(0, 19)}.${String(ms % 1000).padStart(3, '0')}${exact.slice(19)}`;
        if (text(ms) !== want) expect(`${zone} ${ms}: ${text(ms)}`).toBe(want);
      }
    }
  });
});

describe('streaming and the index', () => {
  let gw: TestGateway;
  const CLASSES = ['CNCStatus', 'State', 'Heartbeat', 'Count'];
  const ROWS = 200_000;
  beforeAll(async () => {
    gw = await startHistoryGateway({ machines: [simMachine('BIG', { isActive: false }), simMachine('OTHER', { isActive: false })], groups: [{ groupID: 'BOTH', name: 'Both', machineIDs: ['BIG', 'OTHER'] }] });
    const { history } = gw.gateway.context;
    // 200k rows: four classes round-robin on BIG, one row a second, plus a few on OTHER.
    for (let i = 0; i < ROWS; i++) history.push({ machineID: 'BIG', cls: CLASSES[i % 4] as string, ts: BASE + i * 1000, data: { i } });
    for (let i = 0; i < 100; i++) history.push({ machineID: 'OTHER', cls: 'State', ts: BASE + i * 4000 + 500, data: { other: i } });
    // Ties: OTHER's Count rows share BIG's Count times, two rows at each.
    for (let i = 0; i < 50; i++) {
      for (const k of [0, 1]) history.push({ machineID: 'OTHER', cls: 'Count', ts: BASE + (4 * i + 3) * 1000, data: { other: i, k } });
    }
    await history.flush();
  }, 60_000);
  afterAll(async () => {
    await gw?.stop();
  });

  it('limit=0 over a large window returns every row of the class, in order, quickly', async () => {
    const t0 = performance.now();
    const a = await read(gw, `/api/history/machine?machineID=BIG&type=State&start=${iso(BASE)}&end=${iso(BASE + ROWS * 1000)}&limit=0`);
    const elapsed = performance.now() - t0;
    expect([a.count, a.limitReached]).toEqual([ROWS / 4, false]);
    expect(a.data[0]?.data.i).toBe(1);
    expect(a.data[a.count - 1]?.data.i).toBe(ROWS - 3);
    expect(a.data.every((r, k) => k === 0 || r.time > (a.data[k - 1] as Row).time)).toBe(true);
    expect(elapsed).toBeLessThan(10_000);
  });

  it('a small page of a large table reads only what it returns', async () => {
    const t0 = performance.now();
    const a = await read(gw, `/api/history/machine?machineID=BIG&type=Heartbeat&start=${iso(BASE)}&end=${iso(BASE + ROWS * 1000)}&newestFirst=true&limit=5`);
    expect(a.data.map((r) => r.data.i)).toEqual([ROWS - 2, ROWS - 6, ROWS - 10, ROWS - 14, ROWS - 18]);
    expect(performance.now() - t0).toBeLessThan(1000);
  });

  it('group merge across chunks keeps time order over many chunks', async () => {
    const a = await read(gw, `/api/history/group?groupID=BOTH&type=State&start=${iso(BASE)}&end=${iso(BASE + 400_000)}&limit=0`);
    // BIG has a State row every 4 s from BASE+1 s; OTHER every 4 s from BASE+0.5 s.
    expect(a.count).toBe(200);
    expect(a.data.slice(0, 3).map((r) => r.machineID)).toEqual(['OTHER', 'BIG', 'OTHER']);
    expect(a.data.every((r, k) => k === 0 || r.time > (a.data[k - 1] as Row).time)).toBe(true);
  });

  it('merging runs read in small chunks gives exactly the (time, seq) order of one sorted query, ties included', async () => {
    const { db } = gw.gateway.context;
    const startMs = BASE;
    const endMs = BASE + 400_000;
    for (const order of ['asc', 'desc'] as const) {
      for (const afterSeq of [undefined, 150]) {
        const sources = [{ machineID: 'BIG', cls: 'Count' }, { machineID: 'OTHER', cls: 'Count' }];
        const merged = await readHistoryPage(db, { sources, startMs, endMs, order, afterSeq }, 0, (r) => r.seq, 3);
        const dir = order === 'asc' ? 'ASC' : 'DESC';
        const expected = await db.all<{ seq: number }>(
          `SELECT seq FROM history WHERE machine_id IN ('BIG', 'OTHER') AND class = 'Count' AND ts >= ? AND ts < ? AND seq > ? ORDER BY ts ${dir}, seq ${dir}`,
          [startMs, endMs, afterSeq ?? 0],
        );
        expect(merged.rows, `${order} afterSeq=${afterSeq}`).toEqual(expected.map((r) => r.seq));
        expect(merged.rows.length).toBeGreaterThan(100);
      }
    }
  });

  it('GW-60 a page of `limit` rows asks SQLite for no more than limit + 1 rows, however the chunks fall', async () => {
    const { db } = gw.gateway.context;
    const asked: number[] = [];
    const get = db.get.bind(db);
    const spy = vi.spyOn(db, 'get').mockImplementation((sql: string, params?: SqlValue[]) => {
      // The chunk size is the last parameter of a cursor query (its LIMIT).
      if (sql.includes('json_group_array')) asked.push(Number(params?.[params.length - 1]));
      return get(sql, params);
    });
    try {
      const one = await readHistoryPage(db, { sources: [{ machineID: 'BIG', cls: 'Count' }], startMs: BASE, endMs: BASE + 400_000, order: 'asc' }, 25, (r) => r.seq, 10);
      expect([one.rows.length, one.limitReached]).toEqual([25, true]);
      expect(asked).toEqual([10, 10, 6]);
      asked.length = 0;
      const sources = [{ machineID: 'BIG', cls: 'Count' }, { machineID: 'OTHER', cls: 'Count' }];
      const merged = await readHistoryPage(db, { sources, startMs: BASE, endMs: BASE + 400_000, order: 'asc' }, 25, (r) => r.seq, 10);
      expect([merged.rows.length, merged.limitReached]).toEqual([25, true]);
      // Either run may end up giving every remaining row, so each chunk is capped by what is still wanted.
      expect(asked.every((n) => n <= 10)).toBe(true);
      expect(asked.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(2 * 26);
    } finally {
      spy.mockRestore();
    }
  });

  it('every history read searches the (machine_id, class, ts) index: no table scan, no sort', async () => {
    const spec: HistoryCursorSpec = { machineID: 'BIG', cls: 'State', startMs: BASE, endMs: BASE + 1e9, order: 'asc', withData: true };
    const variants: [string, ReturnType<typeof buildCursorQuery>][] = [
      ['first chunk', buildCursorQuery(spec, null, 1000)],
      ['next chunk', buildCursorQuery(spec, { ts: BASE + 5000, seq: 6 }, 1000)],
      ['newest first', buildCursorQuery({ ...spec, order: 'desc' }, { ts: BASE + 5000, seq: 6 }, 1000)],
      ['afterSeq', buildCursorQuery({ ...spec, afterSeq: 150_000 }, null, 1000)],
      ['filters and paths', buildCursorQuery({ ...spec, dataPaths: ['data.i'], filters: [{ field: 'data.i', op: '>', value: 5 }, { field: 'seq', op: 'in', value: [1, 2] }] }, null, 10)],
    ];
    for (const [name, { sql, params }] of variants) {
      const plan = (await gw.gateway.context.db.all<{ detail: string }>(`EXPLAIN QUERY PLAN ${sql}`, params)).map((r) => r.detail);
      expect(plan.join(' | '), name).toMatch(new RegExp(`SEARCH history USING (COVERING )?INDEX ${HISTORY_INDEX} \\(machine_id=\\? AND class=\\? AND ts>\\? AND ts<\\?\\)`));
      expect(plan.join(' | '), name).not.toMatch(/SCAN|TEMP B-TREE/);
    }
  });
});

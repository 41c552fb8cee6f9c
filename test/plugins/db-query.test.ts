import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EntryInput } from '../../core/interfaces/registry.js';
import { HISTORY } from '../../core/roles/gateway/contract/history.js';
import { GatewayError } from '../../core/interfaces/errors.js';
import { buildCursorQuery, type HistoryCursorSpec, type HistoryFilter } from '../../core/roles/gateway/history/query.js';
import { simMachine, startTestGateway, type TestGateway } from '../fixtures/gateway.js';

/** Seeded rows lie in the past: no background retention may delete them mid-test. */
const NO_RETENTION = { default: { maxAgeDays: 0, maxRows: 0 }, classes: {} };

/** A real gateway logged in as the administrator, with no background retention. */
function startHistoryGateway(raw: Record<string, unknown> = {}): Promise<TestGateway> {
  return startTestGateway({ history: { retention: NO_RETENTION }, ...raw });
}

type Row = Record<string, unknown> & { seq: number; time: number; timeText: string };
type Answer = { table: string; machineIDs: string[]; classes: string[] | null; window: { startUnix: number }; order: string; count: number; limitReached: boolean; data: Row[] };

const BASE = Date.UTC(2025, 0, 10);
const MIN = 60_000;
const WINDOW = `start=${new Date(BASE).toISOString()}&end=${new Date(BASE + 60 * MIN).toISOString()}`;

let gw: TestGateway;
beforeAll(async () => {
  gw = await startHistoryGateway({ machines: [simMachine('M1', { isActive: false }), simMachine('M2', { isActive: false })] });
  const { history } = gw.gateway.context;
  for (let i = 0; i < 6; i++) {
    const data: Record<string, unknown> = { state: i < 3 ? 'running' : 'alarm', i, ok: i % 2 === 0, axes: [{ name: i % 2 ? 'X' : 'Y' }] };
    if (i === 5) data.note = 'last';
    history.push({ machineID: 'M1', cls: 'State', ts: BASE + i * MIN, data });
  }
  for (let i = 0; i < 3; i++) history.push({ machineID: 'M2', cls: 'Heartbeat', ts: BASE + i * MIN + 30_000, data: { state: 'idle', i } });
  // History of a machine deleted from the configuration: kept, and reachable here.
  history.push({ machineID: 'GONE', cls: 'AlarmHistory', ts: BASE + 10 * MIN, data: { code: 'EX1', durationSec: 4 } });
  await history.flush();
});
afterAll(async () => {
  await gw?.stop();
});

async function query(params: string): Promise<Answer> {
  const res = await gw.request('GET', `/api/db/query?${WINDOW}&${params}`);
  expect(res.status, res.raw).toBe(200);
  return res.body.data as Answer;
}

const where = (filters: unknown) => `where=${encodeURIComponent(JSON.stringify(filters))}`;

async function historyRowCount(): Promise<number> {
  return ((await gw.gateway.context.db.get<{ n: number }>('SELECT COUNT(*) AS n FROM history')) as { n: number }).n;
}

describe('/api/db/query', () => {
  it('GW-65 the newestFirst form of query_history: one machine, one class, newest first, limit', async () => {
    const a = await query('machineIDs=M1&classes=State&order=desc&limit=2');
    expect(a).toMatchObject({ table: 'history', machineIDs: ['M1'], classes: ['State'], order: 'desc', count: 2, limitReached: true });
    expect(a.data.map((r) => (r.data as { i: number }).i)).toEqual([5, 4]);
    expect(a.data[0]).toEqual({
      seq: expect.any(Number),
      time: BASE + 5 * MIN,
      timeText: '2025-01-10T00:05:00.000+00:00',
      machineID: 'M1',
      class: 'State',
      data: { state: 'alarm', i: 5, ok: false, axes: [{ name: 'X' }], note: 'last' },
    });
  });

  it('without machineIDs or classes reads every machine and class with history, a deleted machine’s included, in time order', async () => {
    const a = await query('limit=0');
    expect(a.machineIDs).toEqual(['GONE', 'M1', 'M2']);
    expect(a.count).toBe(10);
    const times = a.data.map((r) => r.time);
    expect([...times].sort((x, y) => x - y)).toEqual(times);
    expect(a.data.slice(0, 3).map((r) => r.machineID)).toEqual(['M1', 'M2', 'M1']);
    const gone = await query('machineIDs=GONE');
    expect(gone.data.map((r) => r.class)).toEqual(['AlarmHistory']);
  });

  it('GW-94 an unknown machineID (neither configured nor in the history) answers 10003 naming it', async () => {
    const res = await gw.request('GET', `/api/db/query?${WINDOW}&machineIDs=M1,NOPE`);
    expect(res.status).toBe(404);
    expect(res.body.errorCode).toBe(10003);
    expect(res.body.errorMsg).toContain("'NOPE'");
    expect(res.body.errorMsg).not.toContain("'M1'");
  });

  it('where: conditions on data paths, seq and class, all of which must hold', async () => {
    const ids = async (filters: unknown) => (await query(`limit=0&${where(filters)}`)).data.map((r) => `${r.machineID}:${(r.data as { i?: number; code?: string }).i ?? (r.data as { code: string }).code}`);
    expect(await ids([{ field: 'data.state', op: '=', value: 'alarm' }])).toEqual(['M1:3', 'M1:4', 'M1:5']);
    expect(await ids([{ field: 'data.state', op: 'in', value: ['alarm', 'idle'] }, { field: 'data.i', op: '<', value: 4 }])).toEqual(['M2:0', 'M2:1', 'M2:2', 'M1:3']);
    expect(await ids([{ field: 'data.ok', op: '=', value: true }, { field: 'class', op: '=', value: 'State' }])).toEqual(['M1:0', 'M1:2', 'M1:4']);
    expect(await ids([{ field: 'data.axes[0].name', op: '=', value: 'X' }])).toEqual(['M1:1', 'M1:3', 'M1:5']);
    expect(await ids([{ field: 'data.note', op: '!=', value: null }])).toEqual(['M1:5']);
    expect(await ids([{ field: 'data.code', op: 'like', value: 'EX%' }])).toEqual(['GONE:EX1']);
    expect(await ids([{ field: 'class', op: 'notIn', value: ['State', 'Heartbeat'] }])).toEqual(['GONE:EX1']);
    const all = await query('limit=0');
    const third = all.data[2] as Row;
    expect(await ids([{ field: 'seq', op: '=', value: third.seq }])).toEqual([`${third.machineID}:${(third.data as { i: number }).i}`]);
  });

  it('fields selects what each row carries; seq, time and timeText always come', async () => {
    const a = await query(`machineIDs=M1&limit=2&fields=data.state,data.axes[0],data.missing,machineID`);
    expect(a.data[0]).toEqual({ seq: expect.any(Number), time: BASE, timeText: '2025-01-10T00:00:00.000+00:00', machineID: 'M1', 'data.state': 'running', 'data.axes[0]': { name: 'Y' }, 'data.missing': null });
  });

  it('afterSeq resumes after a seq, and limit/limitReached work as in the history interfaces', async () => {
    const first = await query('machineIDs=M1&limit=4');
    expect([first.count, first.limitReached]).toEqual([4, true]);
    const rest = await query(`machineIDs=M1&limit=4&afterSeq=${first.data[3]?.seq}`);
    expect([rest.count, rest.limitReached]).toEqual([2, false]);
    expect(rest.data.map((r) => (r.data as { i: number }).i)).toEqual([4, 5]);
  });

  it('a composite caller passes where as an array through the registry and gets the same answer as HTTP', async () => {
    const filters = [{ field: 'data.state', op: '=', value: 'alarm' }];
    const input = { start: new Date(BASE).toISOString(), end: new Date(BASE + 60 * MIN).toISOString(), machineIDs: ['M1'], classes: ['State'], order: 'desc', limit: 2, where: filters };
    const called = await gw.gateway.context.interfaces.call(HISTORY.query, input as EntryInput<typeof HISTORY.query>, { principal: { username: 'admin', isAdmin: true, method: 'internal' } });
    expect(called.ok).toBe(true);
    const http = await query(`machineIDs=M1&classes=State&order=desc&limit=2&${where(filters)}`);
    expect(called.ok && (called.data as Answer).data).toEqual(http.data);
  });

  it('GW-95 unknown tables, fields, operators and classes answer 400 listing the accepted values', async () => {
    const cases: [string, RegExp[]][] = [
      ['table=machines', [/table/, /history/]],
      ['table=users', [/table/, /history/]],
      [where([{ field: 'password', op: '=', value: 'x' }]), [/where\[0\]\.field: found "password"/, /seq, machineID, class, data\.<path>/]],
      [where([{ field: 'data.state', op: 'regexp', value: 'x' }]), [/where\[0\]\.op: found "regexp"/, /=, !=, <, <=, >, >=, in, notIn, like/]],
      [where([{ field: 'data.state', op: 'in', value: 'x' }]), [/where\[0\]\.value/, /list of 1 to 100/]],
      [where([{ field: 'seq', op: '=', value: 'x' }]), [/where\[0\]\.value/, /numbers/]],
      [where([{ field: 'data.i', op: '<', value: null }]), [/where\[0\]\.value/, /null is accepted only/]],
      [where([{ field: 'data.state', op: '=', value: 'x', extra: 1 }]), [/extra/]],
      ['where=data.state%3Dalarm', [/where/, /JSON array/]],
      ['fields=password', [/fields\[0\]/, /machineID, class, data, data\.<path>/]],
      ['classes=Nope', [/classes: found "Nope"/, /AlarmHistory, AlarmLog, CNCStatus, Count, Heartbeat, Motion, State/]],
      ['order=sideways', [/order/, /asc/, /desc/]],
    ];
    for (const [params, patterns] of cases) {
      const res = await gw.request('GET', `/api/db/query?${WINDOW}&${params}`);
      expect(res.status, params).toBe(400);
      expect(res.body.errorCode).toBe(2);
      for (const p of patterns) expect(res.body.errorMsg, params).toMatch(p);
    }
  });

  it('SQL injection in every string field is inert: refused by validation or compared as a plain value', async () => {
    const before = await historyRowCount();
    const hostile = ["' OR '1'='1", "x'); DROP TABLE history; --", '1; DELETE FROM history', '" OR 1=1 --', 'State UNION SELECT * FROM users'];
    const outcomes: string[] = [];
    for (const h of hostile) {
      const e = encodeURIComponent(h);
      const attempts = [
        `machineIDs=${e}`,
        `classes=${e}`,
        `table=${e}`,
        `order=${e}`,
        `start=${e}`,
        `end=${e}`,
        `fields=${e}`,
        `fields=${encodeURIComponent(`data.state${h}`)}`,
        where([{ field: h, op: '=', value: 'x' }]),
        where([{ field: `data.state${h}`, op: '=', value: 'x' }]),
        where([{ field: 'data.state', op: h, value: 'x' }]),
        where([{ field: 'data.state', op: '=', value: h }]),
        where([{ field: 'machineID', op: 'in', value: [h, 'M1'] }]),
        where([{ field: 'data.state', op: 'like', value: `%${h}%` }]),
      ];
      for (const params of attempts) {
        const res = await gw.request('GET', `/api/db/query?start=${new Date(BASE).toISOString()}&${params}`);
        // Refused (400/404), or run with the text as a value: then only M1's rows can match, never more.
        const rows = (res.body.data as Answer | undefined)?.data ?? [];
        const inert = res.status === 400 || res.status === 404 || (res.status === 200 && rows.every((r) => r.machineID === 'M1'));
        if (!inert || res.status >= 500) outcomes.push(`${params}: ${res.status} ${res.raw.slice(0, 120)}`);
        if (res.status === 200 && !params.startsWith('where') && params.includes(encodeURIComponent(h))) outcomes.push(`${params}: accepted`);
      }
    }
    expect(outcomes).toEqual([]);
    expect(await historyRowCount()).toBe(before);
    const tables = await gw.gateway.context.db.all<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'table' AND name IN ('history', 'users')");
    expect(tables.map((t) => t.name).sort()).toEqual(['history', 'users']);
  });

  it('the builder puts client text only into parameters: hostile values leave the SQL text unchanged', () => {
    const spec = (v: string, path: string): HistoryCursorSpec => ({
      machineID: v,
      cls: v,
      startMs: 0,
      endMs: 1,
      order: 'asc',
      withData: true,
      dataPaths: [path],
      filters: [
        { field: 'data.state', op: '=', value: v },
        { field: 'machineID', op: 'in', value: [v, v] },
        { field: 'data.a', op: 'like', value: v },
      ],
    });
    const benign = buildCursorQuery(spec('M1', 'data.x'), null, 10);
    for (const h of ["' OR 1=1 --", "'); DROP TABLE history; --", "$.x') OR 1=1 --"]) {
      const built = buildCursorQuery(spec(h, 'data.y'), { ts: 1, seq: 2 }, 10);
      expect(built.sql).not.toContain(h);
      expect(built.params).toContain(h);
      expect(built.sql.replace(/ AND ts >= \? AND \(ts > \? OR seq > \?\)/, '')).toBe(benign.sql);
    }
  });

  it('a write is impossible: the builder only builds one SELECT, refuses non-whitelisted names, and the read connection refuses writes', async () => {
    const base: HistoryCursorSpec = { machineID: 'M1', cls: 'State', startMs: 0, endMs: 1, order: 'desc', withData: false };
    for (const op of ['=', '!=', '<', '<=', '>', '>=', 'in', 'notIn', 'like'] as const) {
      const value = op === 'in' || op === 'notIn' ? ['a'] : 'a';
      const { sql } = buildCursorQuery({ ...base, filters: [{ field: 'data.s', op, value }] }, null, 5);
      expect(sql).toMatch(/^SELECT /);
      expect(sql).not.toMatch(/;|\b(INSERT|UPDATE|DELETE|DROP|ATTACH|PRAGMA|CREATE|ALTER|REPLACE)\b/i);
    }
    // Called directly, past the interface's validation, the builder still refuses anything off its whitelists.
    const bypass: HistoryFilter[] = [
      { field: 'seq; DELETE FROM history', op: '=', value: 1 },
      { field: 'data.s', op: '= 1; DELETE FROM history; --' as HistoryFilter['op'], value: 1 },
    ];
    for (const filter of bypass) expect(() => buildCursorQuery({ ...base, filters: [filter] }, null, 5)).toThrow(GatewayError);
    expect(() => buildCursorQuery({ ...base, dataPaths: ["data.x') AS p0; DELETE FROM history; --"] }, null, 5)).toThrow(GatewayError);
    // And the connection every read runs on is read-only (query_only), whatever SQL reached it.
    const { db } = gw.gateway.context;
    await expect(db.all('DELETE FROM history')).rejects.toThrow(/readonly|read-only|query_only/i);
    await expect(db.all("INSERT INTO meta (key, value) VALUES ('x', 'y')")).rejects.toThrow(/readonly|read-only|query_only/i);
    expect(await historyRowCount()).toBe(10);
  });

  it('GW-76 /api/db/query has its own permission entry: its path', async () => {
    const addUserKey = async (username: string, authorizedApis: string[]) => {
      const add = await gw.request('POST', '/api/security/user/add', { username, password: `${username}-password-1`, authorizedApis });
      expect(add.status, add.raw).toBe(200);
      return ((await gw.request('POST', '/api/security/secret-key/create', { username })).body.data as { key: string }).key;
    };
    const historyOnly = await addUserKey('historian', ['/api/history/machine']);
    const queryOnly = await addUserKey('analyst', ['/api/db/query']);
    const url = `/api/db/query?${WINDOW}&machineIDs=M1`;
    const refused = await gw.request('GET', url, undefined, { token: historyOnly });
    expect([refused.status, refused.body.errorCode]).toEqual([403, 5]);
    const allowed = await gw.request('GET', url, undefined, { token: queryOnly });
    expect(allowed.status).toBe(200);
    const machine = await gw.request('GET', `/api/history/machine?${WINDOW}&machineID=M1&type=State`, undefined, { token: historyOnly });
    expect(machine.status).toBe(200);
  });
});

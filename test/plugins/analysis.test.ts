/**
 * The analysis interfaces over HTTP, on a real gateway whose history is seeded
 * through ctx.history (the HistoryWriter) with the worked example of
 * docs/analysis.md: 2026-01-05, UTC, machine M1.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../core/roles/index.js';
import { Gateway } from '../../core/roles/gateway/gateway.js';
import { DRIVERS } from '../../drivers/registry.js';
import { TEST_PLUGINS } from '../fixtures/gateway.js';
import { simMachine, TEST_ADMIN_PASSWORD } from '../fixtures/gateway.js';

interface Response {
  status: number;
  body: { errorCode: number; errorMsg: string; data?: unknown; hint?: string };
}
type Data = Record<string, unknown> & { intervals?: Record<string, unknown>[] };
/** What an analysis interface answers under `data`. */
interface Analysis {
  kind: string;
  machineID?: string;
  groupID?: string;
  window: unknown;
  data: Data;
}

let gateway: Gateway;
let dataDir = '';
let token = '';

async function get(url: string): Promise<Response> {
  const res = await gateway.http.inject({ method: 'GET', url, headers: { authorization: `Bearer ${token}` } });
  return { status: res.statusCode, body: res.json() };
}

/** `data` of a successful analysis call, with the envelope checked. */
async function analysis(url: string): Promise<Analysis> {
  const res = await get(url);
  expect(res.status, res.body.errorMsg).toBe(200);
  expect(res.body).toMatchObject({ errorCode: 0, errorMsg: 'OK' });
  return res.body.data as Analysis;
}

const at = (hhmm: string) => Date.parse(`2026-01-05T${hhmm}:00Z`);
const HOUR = 'start=2026-01-05T10:00:00Z&end=2026-01-05T11:00:00Z';

function seed(): void {
  const push = (machineID: string, cls: string, hhmm: string, data: unknown) => gateway.context.history.push({ machineID, cls, ts: at(hhmm), data });
  const state = (machineID: string, hhmm: string, s: string) => push(machineID, 'State', hhmm, { state: s, reason: `${s}: seeded`, connection: 'online' });
  let partsTotal = 100;
  const part = (hhmm: string, delta: number, lastCycleTime: number | null, program: string | null) => {
    partsTotal += delta;
    push('M1', 'Count', hhmm, { delta, partCount: partsTotal, partsTotal, lastCycleTime, program });
  };
  const alarm = (code: string, level: string, from: string, to: string | null) => {
    const base = { code, message: `${code} text`, level };
    push('M1', 'AlarmLog', from, { event: 'start', ...base, since: at(from) });
    if (to === null) return;
    push('M1', 'AlarmLog', to, { event: 'end', ...base, since: at(from) });
    push('M1', 'AlarmHistory', to, { ...base, start: at(from), end: at(to), durationSec: (at(to) - at(from)) / 1000 });
  };
  for (let t = at('09:00'); t <= at('11:10'); t += 60_000) {
    for (const machineID of ['M1', 'M2']) gateway.context.history.push({ machineID, cls: 'Heartbeat', ts: t, data: { state: 'idle', connection: 'online', statusStale: false } });
  }
  state('M1', '09:50', 'idle');
  state('M1', '10:10', 'running');
  state('M1', '10:30', 'alarm');
  state('M1', '10:35', 'running');
  state('M1', '10:50', 'setup');
  part('10:15', 1, 120, 'O1');
  part('10:20', 1, 110, 'O1');
  part('10:25', 2, 100, 'O2');
  part('10:40', 1, 90, 'O2');
  // No program on the Count row: the latest CNCStatus row (10:44) names it.
  push('M1', 'CNCStatus', '10:44', { adjustedStatus: 'RUNNING', mode: 'AUTO', program: 'O9' });
  part('10:45', 1, null, null);
  alarm('W7', 'warning', '09:55', '10:05');
  alarm('A1', 'alarm', '10:30', '10:35');
  // Never ended and not active now: counted until the end of the analysed range.
  alarm('X5', 'alarm', '10:50', null);
  state('M2', '09:00', 'running');
  gateway.context.history.push({ machineID: 'M2', cls: 'Count', ts: at('10:30'), data: { delta: 10, partCount: 10, partsTotal: 10, lastCycleTime: 300, program: 'P' } });
}

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'gw-analysis-'));
  const config = parseConfig({
    logLevel: 'silent',
    gateway: { dataDir, timeZone: 'UTC' },
    history: { heartbeatSec: 60 },
    machines: [
      simMachine('M1', { idealCycleTimeSec: 60 }),
      simMachine('M2', { idealCycleTimeSec: 300 }),
      simMachine('M3', { isActive: false }),
      simMachine('M4'),
    ],
    groups: [
      { groupID: 'G1', name: 'Line 1', machineIDs: ['M1', 'M2', 'M4'] },
      { groupID: 'G2', name: 'Line 2', machineIDs: ['M1', 'M3'] },
    ],
  });
  // Once in the list whether or not the gateway's plugin list registers the analysis plugin yet.
  const plugins = TEST_PLUGINS;
  gateway = await Gateway.create({ config, drivers: DRIVERS, plugins, logger: pino({ level: 'silent' }), env: { GATEWAY_ADMIN_PASSWORD: TEST_ADMIN_PASSWORD } });
  const login = await gateway.http.inject({ method: 'POST', url: '/api/auth/login', payload: { username: 'admin', password: TEST_ADMIN_PASSWORD } });
  token = (login.json() as { data: { token: string } }).data.token;
  seed();
  await gateway.context.history.flush();
});

afterAll(async () => {
  await gateway?.stop();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

describe('/api/analysis/machine', () => {
  it('GW-59 GW-16 overall answers {kind, machineID, window, data} with the hand-computed figures', async () => {
    const { kind, machineID, window, data, ...rest } = await analysis(`/api/analysis/machine?kind=overall&machineID=M1&${HOUR}`);
    expect({ kind, machineID, rest }).toEqual({ kind: 'overall', machineID: 'M1', rest: {} });
    expect(window).toEqual({ startUnix: at('10:00') / 1000, endUnix: at('11:00') / 1000, start: '2026-01-05T10:00:00+00:00', end: '2026-01-05T11:00:00+00:00', timeZone: 'UTC' });
    expect(data.stateTimeSec).toEqual({ running: 2100, idle: 600, alarm: 300, setup: 600, offline: 0, noData: 0, inactive: 0 });
    expect(data.e10TimeSec).toEqual({ productive: 2100, standby: 600, engineering: 600, scheduledDowntime: 0, unscheduledDowntime: 300, nonScheduled: 0 });
    expect((data.oee as Record<string, number>).oee).toBe(0.1);
    // W7 clipped to 300 s, A1 300 s, X5 (no end) from 10:50 to the window end: 600 s.
    expect(data.alarm).toMatchObject({ alarmCount: 3, alarmDurationSec: 1200, alarmStops: 1, mtbfSec: 2100, mttrSec: 300 });
    expect(data.cycle).toMatchObject({ count: 4, minSec: 90, avgSec: 105, p50Sec: 100, p90Sec: 120, maxSec: 120 });
  });

  it('GW-59 every kind answers; count splits by program on request, naming the CNCStatus program for a Count row without one', async () => {
    for (const kind of ['oee', 'alarm', 'count', 'cycle', 'overall']) {
      expect((await analysis(`/api/analysis/machine?kind=${kind}&machineID=M1&${HOUR}`)).kind).toBe(kind);
    }
    const { data } = await analysis(`/api/analysis/machine?kind=count&machineID=M1&${HOUR}&enableCountPerProgram=true`);
    expect(data).toEqual({
      totalCount: 6,
      countRows: 5,
      perProgram: [
        { program: 'O2', totalCount: 3 },
        { program: 'O1', totalCount: 2 },
        { program: 'O9', totalCount: 1 },
      ],
    });
  });

  it('GW-59 interval: sub-windows add up to the whole', async () => {
    const { data } = await analysis(`/api/analysis/machine?kind=overall&machineID=M1&${HOUR}&interval=1500`);
    const parts = data.intervals as { timeSec: number; stateTimeSec: Record<string, number>; count: { totalCount: number }; alarm: { alarmCount: number } }[];
    expect(parts.map((p) => p.timeSec)).toEqual([1500, 1500, 600]);
    expect(parts.reduce((s, p) => s + p.stateTimeSec.running!, 0)).toBe(2100);
    expect(parts.reduce((s, p) => s + p.count.totalCount, 0)).toBe((data.count as { totalCount: number }).totalCount);
    expect(parts.reduce((s, p) => s + p.alarm.alarmCount, 0)).toBe((data.alarm as { alarmCount: number }).alarmCount);
  });

  it('GW-16 GW-95 a window of 31 days or more is refused naming start/end and listing the accepted forms; 30 days is accepted', async () => {
    const res = await get('/api/analysis/machine?kind=oee&machineID=M1&start=2026-01-01&end=2026-02-01');
    expect(res.status).toBe(400);
    expect(res.body.errorCode).toBe(2);
    expect(res.body.errorMsg).toMatch(/start\/end: .*a window of 31 days; the window must be shorter than 31 days; accepted: unix seconds/);
    expect(res.body.errorMsg).toMatch(/-30m/);
    expect(res.body.errorMsg).toMatch(/ISO-8601/);
    const ok = await get('/api/analysis/machine?kind=oee&machineID=M1&start=2026-01-01&end=2026-01-31');
    expect(ok.status).toBe(200);
  });

  it('GW-95 an invalid kind is refused listing the valid values; a missing start, a bad start or a too fine interval names the field', async () => {
    const kind = await get(`/api/analysis/machine?kind=oeee&machineID=M1&${HOUR}`);
    expect(kind.status).toBe(400);
    expect(kind.body.errorMsg).toMatch(/kind: found "oeee"/);
    for (const k of ['oee', 'alarm', 'count', 'cycle', 'overall']) expect(kind.body.errorMsg).toContain(`"${k}"`);
    const noStart = await get('/api/analysis/machine?kind=oee&machineID=M1');
    expect([noStart.status, noStart.body.errorMsg]).toEqual([400, expect.stringMatching(/start/)]);
    const badStart = await get('/api/analysis/machine?kind=oee&machineID=M1&start=last%20tuesday');
    expect(badStart.status).toBe(400);
    expect(badStart.body.errorMsg).toMatch(/start: found "last tuesday".*accepted: unix seconds/);
    const fine = await get('/api/analysis/machine?kind=oee&machineID=M1&start=2026-01-05&end=2026-01-06&interval=60');
    expect(fine.status).toBe(400);
    expect(fine.body.errorMsg).toMatch(/interval: found 60 .*at least 87 seconds/);
    const word = await get(`/api/analysis/machine?kind=oee&machineID=M1&${HOUR}&interval=hourly`);
    expect([word.status, word.body.errorMsg]).toEqual([400, expect.stringMatching(/interval/)]);
  });

  it('GW-94 an unknown or inactive machineID answers 10003 with the hint to list the machines, whatever the window', async () => {
    for (const id of ['NOPE', 'M3']) {
      const res = await get(`/api/analysis/machine?kind=oee&machineID=${id}&start=x`);
      expect(res.status).toBe(404);
      expect(res.body.errorCode).toBe(10003);
      expect(res.body.errorMsg).toContain(`'${id}'`);
      expect(res.body.hint).toMatch(/list_machines/);
    }
  });
});

describe('/api/analysis/group', () => {
  it('GW-59 sums the members, recomputes the ratios and lists members without data (none in the window, or inactive)', async () => {
    const { kind, groupID, data } = await analysis(`/api/analysis/group?kind=oee&groupID=G1&${HOUR}`);
    expect({ kind, groupID }).toEqual({ kind: 'oee', groupID: 'G1' });
    // M1: planned 3600, running 2100, 6 parts × 60 s; M2: running 3600, 10 parts × 300 s. M4 has nothing on 2026-01-05.
    expect(data).toMatchObject({ plannedTimeSec: 7200, runningTimeSec: 5700, totalCount: 16, idealProductionTimeSec: 3360 });
    expect(data.oee).toBe(0.4667);
    expect((data.members as { machineID: string }[]).map((m) => m.machineID)).toEqual(['M1', 'M2']);
    expect(data.membersWithoutData).toEqual([{ machineID: 'M4', reason: 'noData', detail: 'no known state, part or alarm in the window' }]);

    const g2 = await analysis(`/api/analysis/group?kind=count&groupID=G2&${HOUR}`);
    expect(g2.data).toMatchObject({ totalCount: 6, membersWithoutData: [{ machineID: 'M3', reason: 'inactive' }] });
  });

  it('GW-59 interval: each sub-window of a group is the sum of its members’ sub-windows', async () => {
    const { data } = await analysis(`/api/analysis/group?kind=overall&groupID=G1&${HOUR}&interval=1800`);
    const parts = data.intervals as { oee: { plannedTimeSec: number; totalCount: number } }[];
    expect(parts.map((p) => p.oee.plannedTimeSec)).toEqual([3600, 3600]);
    expect(parts.map((p) => p.oee.totalCount)).toEqual([4, 12]);
  });

  it('GW-95 an unknown groupID answers 10005; an invalid kind lists the valid values', async () => {
    const res = await get(`/api/analysis/group?kind=oee&groupID=NOPE&${HOUR}`);
    expect([res.status, res.body.errorCode]).toEqual([404, 10005]);
    expect(res.body.hint).toMatch(/list_groups/);
    const kind = await get(`/api/analysis/group?kind=speed&groupID=G1&${HOUR}`);
    expect(kind.status).toBe(400);
    expect(kind.body.errorMsg).toMatch(/kind: found "speed".*"oee".*"alarm".*"count".*"cycle".*"overall"/);
  });
});

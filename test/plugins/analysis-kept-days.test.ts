/**
 * Settled days kept between analyses, on a real SQLite database written by
 * the HistoryWriter: a second analysis uses the kept days and answers the
 * same; a late row, an alarm ending long after it started, or retention makes
 * them stale, and the next analysis equals one computed from scratch.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { overallFigures } from '../../plugins/analysis/compute/figures.js';
import type { AlarmRecord } from '../../plugins/analysis/compute/model.js';
import { splitWindow } from '../../plugins/analysis/compute/sub-windows.js';
import type { Tally } from '../../plugins/analysis/compute/tally.js';
import { Database } from '../../core/store/database.js';
import { HistoryRevisions, settleMsFor } from '../../core/roles/gateway/history/revisions.js';
import { HistoryWriter } from '../../core/roles/gateway/history/writer.js';
import { migrateGatewayStore as migrate } from '../../core/roles/gateway/store/schema.js';
import { HistoryReader } from '../../plugins/analysis/history-reader.js';
import { DayCellCache, MachineTallies, type MachineTallyRequest } from '../../plugins/analysis/machine-tallies.js';

const MIN = 60_000;
const DAY = 86_400_000;
const HEARTBEAT_SEC = 60;
const NOW = Date.parse('2026-01-10T12:00:00Z');
const at = (iso: string) => Date.parse(`2026-01-${iso}Z`);

let dir = '';
let db: Database;
let writer: HistoryWriter;
let revisions: HistoryRevisions;
let reader: HistoryReader;

function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

/** Five and a half days of one machine: heartbeats (one 30-minute silence), states, parts, ended and open alarms. */
async function seedHistory(): Promise<void> {
  const rnd = random(11);
  const push = (cls: string, ts: number, data: unknown) => writer.push({ machineID: 'M1', cls, ts, data });
  const from = at('05T00:00:00');
  for (let t = from; t < NOW; t += MIN) if (t < at('07T03:00:00') || t > at('07T03:30:00')) push('Heartbeat', t, { state: 'idle' });
  const states = ['running', 'idle', 'alarm', 'setup', 'offline'];
  for (let t = from + 7 * MIN; t < NOW; t += (5 + Math.floor(rnd() * 60)) * MIN) push('State', t, { state: states[Math.floor(rnd() * states.length)] });
  for (let t = from + 3 * MIN; t < NOW; t += (2 + Math.floor(rnd() * 9)) * MIN) {
    push('Count', t, { delta: 1, lastCycleTime: 40 + Math.floor(rnd() * 20), program: rnd() < 0.1 ? undefined : `O${Math.floor(rnd() * 3)}` });
    if (rnd() < 0.05) push('CNCStatus', t - 1000, { program: 'O7' });
  }
  for (let t = from + 20 * MIN; t < NOW - DAY; t += (60 + Math.floor(rnd() * 300)) * MIN) {
    const base = { code: `E${Math.floor(rnd() * 5)}`, message: 'spindle', level: 'alarm' };
    const end = t + (5 + Math.floor(rnd() * 400)) * MIN;
    push('AlarmLog', t, { event: 'start', ...base, since: t });
    push('AlarmHistory', end, { ...base, start: t, end });
  }
  // Logged and never ended: one lost, one still shown by the machine.
  push('AlarmLog', at('08T09:00:00'), { event: 'start', code: 'L1', message: 'lost', level: 'warning', since: at('08T09:00:00') });
  push('AlarmLog', at('09T14:00:00'), { event: 'start', code: 'A9', message: 'door', level: 'alarm', since: at('09T14:00:00') });
  await writer.flush();
}

const LIVE: AlarmRecord[] = [{ code: 'A9', message: 'door', level: 'alarm', startMs: at('09T14:00:00'), endMs: null, loggedMs: NOW, activeNow: true }];

function request(intervalSec?: number, timeZone = 'UTC', from = at('05T06:30:00')): MachineTallyRequest {
  const window = { startUnix: from / 1000, endUnix: at('10T11:00:00') / 1000, start: '', end: '', timeZone };
  return {
    timeZone,
    machineID: 'M1',
    subWindows: splitWindow(window, intervalSec),
    nowMs: NOW,
    heartbeatSec: HEARTBEAT_SEC,
    needs: { timeline: true, counts: true, alarms: true },
    liveAlarms: LIVE,
    idealCycleTimeSec: 45,
  };
}

const figures = (tallies: readonly Tally[]) => tallies.map((t) => overallFigures(t, { idealCycleTimeSec: 45, source: 'machineConfig' }, true));
/** The same analysis with nothing kept. */
const fromScratch = async (intervalSec?: number) => figures(await new MachineTallies(reader, revisions).tallies(request(intervalSec)));
/** The same, read in one piece: a cache that keeps nothing. */
const fromScratchIn = async (intervalSec: number, timeZone: string, from: number) =>
  figures(await new MachineTallies(reader, revisions, new DayCellCache(0)).tallies(request(intervalSec, timeZone, from)));

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'gw-kept-days-'));
  db = await Database.open(join(dir, 'gateway.db'));
  await migrate(db);
  revisions = new HistoryRevisions(settleMsFor(HEARTBEAT_SEC));
  writer = await HistoryWriter.open(db, { revisions, now: () => NOW });
  reader = new HistoryReader(db);
  await seedHistory();
});

afterEach(async () => {
  await writer.close();
  await db.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('analysis of kept days', () => {
  it('GW-59 a second analysis uses the settled days kept by the first and answers exactly the same, with or without interval', async () => {
    for (const interval of [undefined, 2 * 86_400, 3 * 3600]) {
      const cache = new DayCellCache();
      const tallies = new MachineTallies(reader, revisions, cache);
      const first = figures(await tallies.tallies(request(interval)));
      const keptAfterFirst = cache.size;
      const second = figures(await tallies.tallies(request(interval)));
      expect(second).toEqual(first);
      // Whole UTC days inside one sub-window: 6th to 9th without interval; 7th to 8th... inside 2-day sub-windows; none in 3-hour ones.
      expect(keptAfterFirst, `interval ${interval}`).toBe(interval === undefined ? 4 : interval === 3 * 3600 ? 0 : 2);
      expect(cache.hits).toBe(keptAfterFirst);
    }
    const overall = (await fromScratch())[0]!;
    // The seeded history is all there: parts, alarms, a lost and a live alarm, the heartbeat silence.
    expect(overall.count.totalCount).toBeGreaterThan(500);
    expect(overall.gatewayDownSec).toBeGreaterThan(25 * 60);
    expect(overall.alarm.topByCount.map((a) => a.code)).toEqual(expect.arrayContaining(['L1', 'A9']));
  });

  it('GW-59 kept days are the gateway time zone’s days: daily sub-windows from local midnight keep every settled day', async () => {
    // Europe/Berlin is UTC+1 in January: local days run 23:00Z to 23:00Z.
    const berlinMidnight = Date.parse('2026-01-04T23:00:00Z');
    const cache = new DayCellCache();
    const tallies = new MachineTallies(reader, revisions, cache);
    const first = figures(await tallies.tallies(request(86_400, 'Europe/Berlin', berlinMidnight)));
    // The 5th to the 9th, local; the 10th is today.
    expect(cache.size).toBe(5);
    expect(figures(await tallies.tallies(request(86_400, 'Europe/Berlin', berlinMidnight)))).toEqual(first);
    expect(cache.hits).toBe(5);
    expect(first).toEqual(await fromScratchIn(86_400, 'Europe/Berlin', berlinMidnight));
    // The same window in UTC days: no UTC day lies inside one Berlin day.
    const utc = new DayCellCache();
    await new MachineTallies(reader, revisions, utc).tallies({ ...request(86_400, 'Europe/Berlin', berlinMidnight), timeZone: 'UTC' });
    expect(utc.size).toBe(0);
  });

  it('GW-59 a late row in a kept day makes it stale: the next analysis counts the row, as one from scratch does', async () => {
    const tallies = new MachineTallies(reader, revisions, new DayCellCache());
    const before = figures(await tallies.tallies(request()))[0]!;
    writer.push({ machineID: 'M1', cls: 'Count', ts: at('07T10:00:30'), data: { delta: 7, lastCycleTime: 41, program: 'O1' } });
    writer.push({ machineID: 'M1', cls: 'State', ts: at('08T01:00:30'), data: { state: 'alarm' } });
    await writer.flush();
    const after = figures(await tallies.tallies(request()));
    expect(after[0]!.count.totalCount).toBe(before.count.totalCount + 7);
    expect(after).toEqual(await fromScratch());
    expect(after[0]).not.toEqual(before);
  });

  it('GW-59 an alarm that ends today after starting in a kept day makes that day stale; rows of the present do not', async () => {
    const cache = new DayCellCache();
    const tallies = new MachineTallies(reader, revisions, cache);
    const before = figures(await tallies.tallies(request()))[0]!;
    const lost = before.alarm.topByCount.find((a) => a.code === 'L1')!;
    // Rows of the unsettled present leave kept days alone.
    writer.push({ machineID: 'M1', cls: 'Count', ts: NOW - 2 * MIN, data: { delta: 1, lastCycleTime: 40 } });
    await writer.flush();
    const hits = cache.hits;
    await tallies.tallies(request());
    expect(cache.hits).toBe(hits + 4);
    // The lost alarm's end arrives at last (written now, started on the 8th).
    writer.push({ machineID: 'M1', cls: 'AlarmHistory', ts: at('08T09:20:00') + DAY * 2, data: { code: 'L1', message: 'lost', level: 'warning', start: at('08T09:00:00'), end: at('10T09:20:00') } });
    await writer.flush();
    const after = figures(await tallies.tallies(request()));
    expect(after).toEqual(await fromScratch());
    expect(after[0]!.alarm.topByCount.find((a) => a.code === 'L1')!.durationSec).not.toBe(lost.durationSec);
  });

  it('GW-59 after retention (every revision moves) nothing kept is used', async () => {
    const cache = new DayCellCache();
    const tallies = new MachineTallies(reader, revisions, cache);
    const first = figures(await tallies.tallies(request()));
    await db.write((tx) => tx.run(`DELETE FROM history WHERE class = 'Count' AND ts < ?`, [at('07T00:00:00')]));
    revisions.bumpAll();
    const hits = cache.hits;
    const after = figures(await tallies.tallies(request()));
    expect(cache.hits).toBe(hits);
    expect(after).toEqual(await fromScratch());
    expect(after[0]!.count.totalCount).toBeLessThan(first[0]!.count.totalCount);
  });

  it('GW-59 kept days stay within their memory bound, least recently used dropped first', async () => {
    const cache = new DayCellCache(20_000);
    await new MachineTallies(reader, revisions, cache).tallies(request());
    expect(cache.estimatedBytes).toBeLessThanOrEqual(20_000);
    expect(cache.size).toBeLessThan(4);
    expect(cache.size).toBeGreaterThan(0);
  });
});

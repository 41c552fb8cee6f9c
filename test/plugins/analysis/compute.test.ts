/**
 * Analysis as pure functions over small synthetic histories whose figures are
 * computed by hand in the comments (docs/analysis.md has the same worked
 * example). Times are UTC on 2026-01-05.
 */
import { describe, expect, it } from 'vitest';
import { analyseGroup, analyseMachine, type AnalysisSpec, type MachineSubject } from '../../../plugins/analysis/compute/analyse.js';
import { nearestRank } from '../../../plugins/analysis/compute/figures.js';
import type { AlarmRecord, CountRecord, StateChange } from '../../../plugins/analysis/compute/model.js';
import { gatewayGaps, stateSegments } from '../../../plugins/analysis/compute/timeline.js';
import type { AnalysisKind } from '../../../plugins/analysis/compute/model.js';
import { GatewayError } from '../../../core/interfaces/errors.js';
import type { DerivedStateName } from '../../../core/roles/gateway/fleet/derive-state.js';
import { resolveWindow, type TimeWindow } from '../../../core/interfaces/time-params.js';
import { historyIn, type Rows } from '../../fixtures/analysis-history.js';

const at = (hhmm: string) => Date.parse(`2026-01-05T${hhmm}:00Z`);
const NOW = Date.parse('2026-06-01T00:00:00Z');
const HEARTBEAT_SEC = 60;

const state = (hhmm: string, s: DerivedStateName): StateChange => ({ ts: at(hhmm), state: s });
const count = (hhmm: string, delta: number, cycleTimeSec: number | null, program: string | null): CountRecord => ({ ts: at(hhmm), delta, cycleTimeSec, program });
const ended = (code: string, level: string, from: string, to: string): AlarmRecord => ({
  code,
  message: `${code} text`,
  level,
  startMs: at(from),
  endMs: at(to),
  loggedMs: at(from),
  activeNow: false,
});

/** A heartbeat every minute over [from, to], leaving out the minutes inside `silent`. */
function heartbeats(from: string, to: string, silent: [string, string][] = []): number[] {
  const out: number[] = [];
  for (let t = at(from); t <= at(to); t += HEARTBEAT_SEC * 1000) {
    if (!silent.some(([a, b]) => t > at(a) && t < at(b))) out.push(t);
  }
  return out;
}

function windowOf(from: string, to: string): TimeWindow {
  return resolveWindow({ start: `2026-01-05T${from}:00Z`, end: `2026-01-05T${to}:00Z` }, { timeZone: 'UTC', now: NOW, requireStart: true, maxDays: 31 });
}

function spec(kind: AnalysisKind, window: TimeWindow, extra: Partial<AnalysisSpec> = {}): AnalysisSpec {
  return { kind, window, perProgram: false, nowMs: NOW, heartbeatSec: HEARTBEAT_SEC, ...extra };
}

function subject(rows: Rows, window: TimeWindow, idealCycleTimeSec: number | null = 60, machineID = 'M1', nowMs = NOW): MachineSubject {
  const range = { startMs: window.startUnix * 1000, endMs: Math.min(window.endUnix * 1000, nowMs) };
  return { machineID, idealCycleTimeSec, history: historyIn(rows, range) };
}

/**
 * The worked example of docs/analysis.md. Idle since 09:50; 10:10 running,
 * 10:30 alarm, 10:35 running, 10:50 setup. Parts at 10:15 (1, 120 s, O1),
 * 10:20 (1, 110 s, O1), 10:25 (2, 100 s, O2), 10:40 (1, 90 s, O2), 10:45 (1,
 * no cycle time, no program). Alarm A1 10:30-10:35; warning W7 09:55-10:05.
 *
 * Window 10:00-11:00: idle 600 s, running 1200 + 900 = 2100 s, alarm 300 s,
 * setup 600 s. Planned 3600 s. Parts 6. Ideal cycle 60 s:
 * availability 2100/3600, performance 360/2100, quality 1, OEE 360/3600 = 0.1.
 */
const EXAMPLE: Rows = {
  states: [state('09:50', 'idle'), state('10:10', 'running'), state('10:30', 'alarm'), state('10:35', 'running'), state('10:50', 'setup')],
  heartbeats: heartbeats('09:50', '11:10'),
  counts: [count('10:15', 1, 120, 'O1'), count('10:20', 1, 110, 'O1'), count('10:25', 2, 100, 'O2'), count('10:40', 1, 90, 'O2'), count('10:45', 1, null, null)],
  alarms: [ended('A1', 'alarm', '10:30', '10:35'), ended('W7', 'warning', '09:55', '10:05')],
};

type Figures = Record<string, unknown> & { intervals?: Record<string, unknown>[] };
const HOUR = windowOf('10:00', '11:00');

describe('analysis of one machine', () => {
  it('GW-59 overall: a timeline with known durations gives known state times, E10 buckets and OEE', () => {
    const data = analyseMachine(spec('overall', HOUR), subject(EXAMPLE, HOUR)) as Figures;
    expect(data.timeSec).toBe(3600);
    expect(data.stateTimeSec).toEqual({ running: 2100, idle: 600, alarm: 300, setup: 600, offline: 0, noData: 0, inactive: 0 });
    expect(data.e10TimeSec).toEqual({ productive: 2100, standby: 600, engineering: 600, scheduledDowntime: 0, unscheduledDowntime: 300, nonScheduled: 0 });
    expect(data.gatewayDownSec).toBe(0);
    const oee = data.oee as Record<string, number | null>;
    expect(oee).toMatchObject({ plannedTimeSec: 3600, runningTimeSec: 2100, totalCount: 6, goodCount: 6, goodCountSource: 'assumedAllGood', idealCycleTimeSec: 60 });
    expect(oee.availability).toBe(0.5833);
    expect(oee.performance).toBe(0.1714);
    expect(oee.quality).toBe(1);
    expect(oee.oee).toBe(0.1);
  });

  it('GW-59 oee: reports its inputs and the E10 buckets; without an ideal cycle time performance and OEE are null', () => {
    const data = analyseMachine(spec('oee', HOUR), subject(EXAMPLE, HOUR)) as Figures;
    expect(data).toMatchObject({ idealCycleTimeSource: 'machineConfig', idealProductionTimeSec: 360, runningTimeWithIdealSec: 2100 });
    expect(data.e10TimeSec).toMatchObject({ productive: 2100, unscheduledDowntime: 300 });
    const none = analyseMachine(spec('oee', HOUR), subject(EXAMPLE, HOUR, null)) as Figures;
    expect(none).toMatchObject({ idealCycleTimeSource: 'notConfigured', idealCycleTimeSec: null, performance: null, oee: null, quality: 1 });
    expect(none.availability).toBe(0.5833);
  });

  it('GW-59 alarm: occurrences clipped to the window, top lists, MTBF = running / stops and MTTR = alarm time / stops', () => {
    const data = analyseMachine(spec('alarm', HOUR), subject(EXAMPLE, HOUR)) as Figures;
    // W7 started 09:55, before the window: counted, with its 300 s inside the window.
    expect(data).toMatchObject({ alarmCount: 2, alarmCountByLevel: { alarm: 1, warning: 1 }, alarmDurationSec: 600, alarmStops: 1 });
    expect(data).toMatchObject({ alarmStateTimeSec: 300, runningTimeSec: 2100, mtbfSec: 2100, mttrSec: 300 });
    expect(data.topByCount).toEqual([
      { code: 'A1', message: 'A1 text', level: 'alarm', count: 1, durationSec: 300 },
      { code: 'W7', message: 'W7 text', level: 'warning', count: 1, durationSec: 300 },
    ]);
    const noStops = analyseMachine(spec('alarm', windowOf('10:40', '10:50')), subject(EXAMPLE, windowOf('10:40', '10:50'))) as Figures;
    expect(noStops).toMatchObject({ alarmStops: 0, mtbfSec: null, mttrSec: null, alarmCount: 0 });
  });

  it('GW-59 count: parts are Σ delta, split by program on request (most first, no program last)', () => {
    expect(analyseMachine(spec('count', HOUR), subject(EXAMPLE, HOUR))).toEqual({ totalCount: 6, countRows: 5 });
    const split = analyseMachine(spec('count', HOUR, { perProgram: true }), subject(EXAMPLE, HOUR)) as Figures;
    expect(split.perProgram).toEqual([
      { program: 'O2', totalCount: 3 },
      { program: 'O1', totalCount: 2 },
      { program: null, totalCount: 1 },
    ]);
  });

  it('GW-59 cycle: count, min, avg, p50, p90 and max of the cycle times, overall and per program', () => {
    const data = analyseMachine(spec('cycle', HOUR), subject(EXAMPLE, HOUR)) as Figures;
    // 90, 100, 110, 120: p50 is rank ceil(0.5·4) = 2, p90 rank ceil(0.9·4) = 4.
    expect(data).toMatchObject({ count: 4, minSec: 90, avgSec: 105, p50Sec: 100, p90Sec: 120, maxSec: 120 });
    expect(data.perProgram).toEqual([
      { program: 'O1', count: 2, minSec: 110, avgSec: 115, p50Sec: 110, p90Sec: 120, maxSec: 120 },
      { program: 'O2', count: 2, minSec: 90, avgSec: 95, p50Sec: 90, p90Sec: 100, maxSec: 100 },
    ]);
    expect(nearestRank([], 50)).toBeNull();
    expect(nearestRank([7], 90)).toBe(7);
  });

  it('GW-59 interval: sub-windows have their own figures, times and counts add up to the whole, ratios come from the sums', () => {
    // 25-minute sub-windows: 10:00-10:25, 10:25-10:50, and a shorter last one 10:50-11:00.
    const data = analyseMachine(spec('overall', HOUR, { intervalSec: 1500 }), subject(EXAMPLE, HOUR)) as Figures;
    const parts = data.intervals as { window: TimeWindow; timeSec: number; stateTimeSec: Record<string, number>; oee: Record<string, number | null> }[];
    expect(data.intervalSec).toBe(1500);
    expect(parts.map((p) => [p.window.start, p.window.end])).toEqual([
      ['2026-01-05T10:00:00+00:00', '2026-01-05T10:25:00+00:00'],
      ['2026-01-05T10:25:00+00:00', '2026-01-05T10:50:00+00:00'],
      ['2026-01-05T10:50:00+00:00', '2026-01-05T11:00:00+00:00'],
    ]);
    expect(parts.map((p) => p.timeSec)).toEqual([1500, 1500, 600]);
    expect(parts.map((p) => p.stateTimeSec.running)).toEqual([900, 1200, 0]);
    expect(parts.map((p) => p.oee.totalCount)).toEqual([2, 4, 0]);
    for (const key of ['running', 'idle', 'alarm', 'setup'] as const) {
      expect(parts.reduce((s, p) => s + (p.stateTimeSec[key] ?? 0), 0)).toBe((data.stateTimeSec as Record<string, number>)[key]);
    }
    // Sub-window OEE: 0.6·(120/900) = 0.08 and 0.8·(240/1200) = 0.16; the whole is 0.1 from the sums, not their mean.
    expect(parts[0]!.oee.oee).toBe(0.08);
    expect(parts[1]!.oee.oee).toBe(0.16);
    expect(parts[2]!.oee).toMatchObject({ availability: 0, performance: null, quality: null, oee: null });
    expect((data.oee as Record<string, number>).oee).toBe(0.1);
    const alarmParts = (analyseMachine(spec('alarm', HOUR, { intervalSec: 1500 }), subject(EXAMPLE, HOUR)) as Figures).intervals!;
    expect(alarmParts.map((p) => [p.alarmCount, p.alarmStops, p.alarmDurationSec])).toEqual([
      [1, 0, 300],
      [1, 1, 300],
      [0, 0, 0],
    ]);
  });

  it('GW-59 a window cutting a state interval in the middle counts only the part inside it', () => {
    // 10:32-10:45: alarm since 10:30 (known from the last State row before the window), running from 10:35.
    const w = windowOf('10:32', '10:45');
    const data = analyseMachine(spec('overall', w), subject(EXAMPLE, w)) as Figures;
    expect(data.stateTimeSec).toMatchObject({ alarm: 180, running: 600, idle: 0 });
    // The stop in progress at the window start counts once; A1 counts with its 180 s inside.
    expect(data.alarm).toMatchObject({ alarmStops: 1, mttrSec: 180, alarmCount: 1, alarmDurationSec: 180 });
    // The part at 10:40 is inside; the one at 10:45 is at the window end, which is exclusive.
    expect((data.count as Record<string, number>).totalCount).toBe(1);
  });

  it('GW-59 an offline period counts as offline and unscheduled downtime, not as running', () => {
    const rows: Rows = { ...EXAMPLE, states: [state('09:00', 'running'), state('10:20', 'offline'), state('10:40', 'running')], counts: [], alarms: [] };
    const data = analyseMachine(spec('overall', HOUR), subject(rows, HOUR)) as Figures;
    expect(data.stateTimeSec).toMatchObject({ running: 2400, offline: 1200 });
    expect(data.e10TimeSec).toMatchObject({ productive: 2400, unscheduledDowntime: 1200 });
    expect((data.oee as Record<string, number>).availability).toBe(0.6667);
  });

  it('GW-59 a gateway-down gap (no heartbeat for more than 2 × heartbeatSec) is noData, not running, and outside planned time', () => {
    const rows: Rows = { ...EXAMPLE, states: [state('09:00', 'running')], heartbeats: heartbeats('09:00', '11:10', [['10:20', '10:40']]), counts: [], alarms: [] };
    const data = analyseMachine(spec('overall', HOUR), subject(rows, HOUR)) as Figures;
    expect(data.stateTimeSec).toMatchObject({ running: 2400, noData: 1200 });
    expect(data.gatewayDownSec).toBe(1200);
    expect(data.e10TimeSec).toMatchObject({ productive: 2400, nonScheduled: 1200 });
    expect(data.oee).toMatchObject({ plannedTimeSec: 2400, availability: 1 });
  });

  it('GW-59 gap threshold: a silence of exactly 2 × heartbeatSec is no gap, a longer one is; silence up to now is one too', () => {
    const range = { startMs: at('10:00'), endMs: at('11:00') };
    const base = { before: at('09:59'), after: at('11:00') };
    expect(gatewayGaps({ ...base, within: [at('10:10'), at('10:12')] }, range, NOW, 120_000)).toEqual([
      { startMs: at('10:00'), endMs: at('10:10'), silentFromMs: at('09:59') },
      { startMs: at('10:12'), endMs: at('11:00'), silentFromMs: at('10:12') },
    ]);
    expect(gatewayGaps({ ...base, within: [at('10:01'), at('10:03')] }, range, NOW, 120_000)).toHaveLength(1);
    expect(gatewayGaps({ before: null, within: [at('10:30')], after: null }, range, at('10:31'), 120_000)).toEqual([]);
    expect(gatewayGaps({ before: null, within: [at('10:30')], after: null }, range, NOW, 120_000)).toEqual([{ startMs: at('10:30'), endMs: at('11:00'), silentFromMs: at('10:30') }]);
  });

  it('GW-59 before the first stored heartbeat nothing is judged a gap (retention), and an inactive machine stays inactive in a gap', () => {
    const range = { startMs: at('10:00'), endMs: at('11:00') };
    const gaps = gatewayGaps({ before: null, within: [at('10:30'), at('10:31')], after: at('11:00') }, range, NOW, 120_000);
    expect(gaps).toEqual([{ startMs: at('10:31'), endMs: at('11:00'), silentFromMs: at('10:31') }]);
    const segments = stateSegments({ stateBefore: 'inactive', states: [] }, range, gaps);
    expect(segments).toEqual([{ startMs: at('10:00'), endMs: at('11:00'), state: 'inactive', gap: false }]);
    const unknown = stateSegments({ stateBefore: null, states: [state('10:15', 'idle')] }, range, []);
    expect(unknown.map((s) => [s.state, (s.endMs - s.startMs) / 1000])).toEqual([
      ['noData', 900],
      ['idle', 2700],
    ]);
  });

  it('GW-59 time after now is not analysed', () => {
    const now = at('10:30');
    const data = analyseMachine(spec('overall', HOUR, { nowMs: now }), subject({ ...EXAMPLE, heartbeats: heartbeats('09:50', '10:30') }, HOUR, 60, 'M1', now)) as Figures;
    expect(data.timeSec).toBe(1800);
    expect(data.stateTimeSec).toMatchObject({ idle: 600, running: 1200 });
  });

  it('GW-59 an alarm without an end counts until now when still active, else until the gateway lost sight of it', () => {
    const open = (activeNow: boolean): AlarmRecord => ({ code: 'X9', message: 'X9 text', level: 'alarm', startMs: at('10:10'), endMs: null, loggedMs: at('10:10'), activeNow });
    const rows: Rows = { ...EXAMPLE, heartbeats: heartbeats('09:50', '11:10', [['10:40', '10:50']]) };
    for (const [activeNow, seconds] of [
      [true, 3000],
      [false, 1800],
    ] as const) {
      const data = analyseMachine(spec('alarm', HOUR), subject({ ...rows, alarms: [open(activeNow), { ...open(false), loggedMs: at('10:20') }] }, HOUR)) as Figures;
      expect(data.alarmCount).toBe(1);
      expect(data.alarmDurationSec).toBe(seconds);
    }
  });

  it('GW-59 an interval making more than 1,000 sub-windows is refused naming interval and the smallest accepted value', () => {
    const day = resolveWindow({ start: '2026-01-05', end: '2026-01-06' }, { timeZone: 'UTC', now: NOW });
    const refuse = () => analyseMachine(spec('oee', day, { intervalSec: 60 }), subject(EXAMPLE, day));
    expect(refuse).toThrow(GatewayError);
    expect(refuse).toThrow(/interval: found 60 .*1440 sub-windows.*at most 1000.*at least 87 seconds/);
    expect((analyseMachine(spec('oee', day, { intervalSec: 87 }), subject(EXAMPLE, day)) as Figures).intervals).toHaveLength(994);
  });
});

describe('analysis of a group', () => {
  it('GW-59 sums members’ times and counts, recomputes ratios from the sums, and lists members without data', () => {
    // M2 runs the whole hour and makes 10 parts at an ideal 300 s: ideal production 3000 s.
    const m2: Rows = { states: [state('09:00', 'running')], heartbeats: heartbeats('09:00', '11:10'), counts: [count('10:30', 10, 300, 'P')], alarms: [] };
    const empty: Rows = { states: [], heartbeats: [], counts: [], alarms: [] };
    const data = analyseGroup(spec('oee', HOUR, { intervalSec: 1800 }), [subject(EXAMPLE, HOUR), subject(m2, HOUR, 300, 'M2'), subject(empty, HOUR, 60, 'M3')], [
      { machineID: 'M4', reason: 'inactive', detail: "machineID 'M4' is inactive" },
    ]) as Figures;
    // Planned 7200 s, running 5700 s, parts 16, ideal production 360 + 3000 = 3360 s: OEE 3360/7200.
    expect(data).toMatchObject({ plannedTimeSec: 7200, runningTimeSec: 5700, totalCount: 16, idealProductionTimeSec: 3360, idealCycleTimeSource: 'groupMembers' });
    expect(data.availability).toBe(0.7917);
    expect(data.performance).toBe(0.5895);
    expect(data.oee).toBe(0.4667);
    expect((data.members as { machineID: string }[]).map((m) => m.machineID)).toEqual(['M1', 'M2']);
    expect(data.membersWithoutData).toEqual([
      { machineID: 'M4', reason: 'inactive', detail: "machineID 'M4' is inactive" },
      { machineID: 'M3', reason: 'noData', detail: 'no known state, part or alarm in the window' },
    ]);
    const parts = data.intervals as { plannedTimeSec: number; totalCount: number }[];
    expect(parts.map((p) => p.plannedTimeSec)).toEqual([3600, 3600]);
    expect(parts.map((p) => p.totalCount)).toEqual([4, 12]);
  });
});

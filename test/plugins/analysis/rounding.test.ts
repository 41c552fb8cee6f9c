/**
 * Property test over random histories: no number the analysis returns has
 * more decimals than docs/analysis.md ("Rounding") allows — durations in
 * seconds (`…Sec`, and the members of `stateTimeSec`/`e10TimeSec`) 3,
 * ratios (availability, performance, quality, oee) 4, everything else
 * (counts, window bounds) none. Random millisecond timestamps, cycle times
 * with three decimals and ideal cycle times make the float noise
 * (34.867000000000004) that unrounded figures show.
 */
import { describe, expect, it } from 'vitest';
import { analyseGroup, analyseMachine, type AnalysisSpec, type MachineSubject } from '../../../plugins/analysis/compute/analyse.js';
import { ANALYSIS_KINDS, type AlarmRecord, type CountRecord, type StateChange } from '../../../plugins/analysis/compute/model.js';
import { DERIVED_STATES } from '../../../core/roles/gateway/fleet/derive-state.js';
import { resolveWindow } from '../../../core/interfaces/time-params.js';
import { historyIn, type Rows } from '../../fixtures/analysis-history.js';

const DAY0 = Date.parse('2026-01-05T00:00:00Z');
const NOW = Date.parse('2026-06-01T00:00:00Z');
const HEARTBEAT_SEC = 60;
const RATIOS = new Set(['availability', 'performance', 'quality', 'oee']);

/** mulberry32: a small seeded generator, so a failing seed can be replayed. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function randomRows(rand: () => number, spanMs: number): Rows {
  const int = (n: number) => Math.floor(rand() * n);
  const pick = <T>(list: readonly T[]): T => list[int(list.length)]!;
  const times = (n: number) => Array.from({ length: n }, () => DAY0 + int(spanMs)).sort((a, b) => a - b);
  const states: StateChange[] = times(5 + int(40)).map((ts) => ({ ts, state: pick(DERIVED_STATES) }));
  const heartbeats: number[] = [];
  for (let t = DAY0 - 60_000; t < DAY0 + spanMs + 120_000; t += HEARTBEAT_SEC * 1000 + int(7)) {
    if (rand() > 0.03) heartbeats.push(t + int(999));
  }
  const programs = ['O1', 'O2', 'O3', null];
  const counts: CountRecord[] = times(int(60)).map((ts) => ({
    ts,
    delta: 1 + int(3),
    cycleTimeSec: rand() < 0.15 ? null : Math.round((20 + rand() * 100) * 1000) / 1000,
    program: pick(programs),
  }));
  const alarms: AlarmRecord[] = times(int(15)).map((startMs) => {
    const endMs = rand() < 0.8 ? startMs + 1 + int(3_600_000) : null;
    return { code: `A${int(9)}`, message: 'text', level: pick(['warning', 'alarm', 'emergency']), startMs, endMs, loggedMs: startMs + int(999), activeNow: endMs === null && rand() < 0.5 };
  });
  return { states, heartbeats, counts, alarms };
}

function decimals(n: number): number {
  const [, fraction = ''] = String(n).split('.');
  return fraction.length;
}

/** Every number in `value` whose decimals exceed what its key allows, with its path. */
function overPrecise(value: unknown, path: string, allowed: number, out: string[]): string[] {
  if (typeof value === 'number') {
    if (!Number.isFinite(value) || decimals(value) > allowed) out.push(`${path} = ${value} (at most ${allowed} decimals)`);
  } else if (Array.isArray(value)) {
    value.forEach((v, i) => overPrecise(v, `${path}[${i}]`, allowed, out));
  } else if (value !== null && typeof value === 'object') {
    for (const [key, v] of Object.entries(value)) {
      const own = key.endsWith('Sec') ? 3 : RATIOS.has(key) ? 4 : allowed === 3 ? 3 : 0;
      overPrecise(v, `${path}.${key}`, own, out);
    }
  }
  return out;
}

describe('analysis rounding', () => {
  it('over 60 random histories, every figure of every kind has at most the documented decimals', () => {
    const problems: string[] = [];
    let sawUnroundedInput = 0;
    for (let seed = 1; seed <= 60; seed++) {
      const rand = prng(seed);
      const spanMs = 6 * 3_600_000;
      const rows = [randomRows(rand, spanMs), randomRows(rand, spanMs)];
      sawUnroundedInput += rows.flatMap((r) => r.counts).filter((c) => c.cycleTimeSec !== null && decimals(c.cycleTimeSec) === 3).length;
      const startMin = Math.floor(rand() * 60);
      const window = resolveWindow(
        { start: new Date(DAY0 + startMin * 60_000).toISOString(), end: new Date(DAY0 + spanMs).toISOString() },
        { timeZone: 'UTC', now: NOW, requireStart: true, maxDays: 31 },
      );
      const range = { startMs: window.startUnix * 1000, endMs: window.endUnix * 1000 };
      const ideal = [Math.round(rand() * 90_000) / 1000, null];
      const subjects: MachineSubject[] = rows.map((r, i) => ({ machineID: `M${i}`, idealCycleTimeSec: ideal[i]!, history: historyIn(r, range) }));
      const intervalSec = [undefined, 600 + Math.floor(rand() * 3000)][seed % 2];
      for (const kind of ANALYSIS_KINDS) {
        const spec: AnalysisSpec = { kind, window, perProgram: seed % 3 === 0, nowMs: NOW, heartbeatSec: HEARTBEAT_SEC, ...(intervalSec ? { intervalSec } : {}) };
        overPrecise(analyseMachine(spec, subjects[0]!), `seed ${seed} machine ${kind}`, 0, problems);
        overPrecise(analyseGroup(spec, subjects), `seed ${seed} group ${kind}`, 0, problems);
      }
    }
    expect(sawUnroundedInput).toBeGreaterThan(100);
    expect(problems.slice(0, 10)).toEqual([]);
  });
});

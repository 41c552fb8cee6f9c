/**
 * Analysis assembled from cells (stretches tallied on their own, as the
 * settled-day cache keeps them) must equal one pass over the whole range.
 * Random histories with states, gateway gaps, parts and alarms (ended, still
 * active, lost) are analysed both ways over random windows, intervals, cut
 * points and "now" inside or after the window.
 */
import { describe, expect, it } from 'vitest';
import { kindFigures } from '../../../plugins/analysis/compute/analyse.js';
import type { TimeSpan } from '../../../plugins/analysis/compute/model.js';
import { splitWindow } from '../../../plugins/analysis/compute/sub-windows.js';
import { analysedRange, tallyCells, tallyMachine, tallySubWindows, type Cell, type Tally } from '../../../plugins/analysis/compute/tally.js';
import { DERIVED_STATES } from '../../../core/roles/gateway/fleet/derive-state.js';
import { historyIn, type Rows } from '../../fixtures/analysis-history.js';

const MIN = 60_000;
const HEARTBEAT_SEC = 60;
const T0 = Date.parse('2026-03-01T00:00:00Z');

function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

/** About two days of one machine, minute-grained so that cuts and state changes often meet. */
function randomRows(rnd: () => number, nowMs: number): Rows {
  const int = (n: number) => Math.floor(rnd() * n);
  const endMs = T0 + 2 * 1440 * MIN;
  const rows: Rows = { states: [], heartbeats: [], counts: [], alarms: [] };
  for (let t = T0 + int(60) * MIN; t < endMs; t += (1 + int(90)) * MIN) rows.states.push({ ts: t, state: DERIVED_STATES[int(DERIVED_STATES.length)]! });
  // Heartbeats every minute from a random first one, with silences of 1 to 40 minutes.
  for (let t = T0 + int(120) * MIN; t < Math.min(endMs, nowMs); t += MIN) {
    if (rnd() < 0.01) t += int(40) * MIN;
    rows.heartbeats.push(t);
  }
  for (let t = T0 + int(30) * MIN; t < endMs; t += (1 + int(20)) * MIN) {
    rows.counts.push({ ts: t, delta: 1 + int(3), cycleTimeSec: rnd() < 0.2 ? null : 30 + int(200), program: rnd() < 0.15 ? null : `O${int(4)}` });
  }
  for (let i = 0; i < 40; i++) {
    const startMs = T0 - 600 * MIN + int(3500) * MIN;
    const code = `A${int(6)}`;
    const common = { code, message: `${code} text`, level: code < 'A3' ? 'alarm' : 'warning', startMs };
    const kind = rnd();
    if (kind < 0.7) {
      const end = startMs + (1 + int(600)) * MIN;
      rows.alarms.push({ ...common, endMs: end, loggedMs: end, activeNow: false });
    } else {
      // Without an end: still active, or lost when the gateway went quiet; some logged twice (after a restart).
      const loggedMs = startMs + int(30) * MIN;
      const record = { ...common, endMs: null, loggedMs, activeNow: kind > 0.85 };
      rows.alarms.push(record);
      if (rnd() < 0.3) rows.alarms.push({ ...record, loggedMs: loggedMs + int(200) * MIN });
    }
  }
  return rows;
}

/** Cuts [startMs, endMs) at every sub-window border and at random points, then tallies runs of cells from their own history. */
function cellsOf(rnd: () => number, rows: Rows, subWindows: readonly TimeSpan[], range: TimeSpan, nowMs: number): Cell[] {
  const borders = new Set<number>([range.startMs, range.endMs]);
  for (const w of subWindows) if (w.startMs > range.startMs && w.startMs < range.endMs) borders.add(w.startMs);
  for (let i = 0; i < 6; i++) borders.add(range.startMs + Math.floor(rnd() * ((range.endMs - range.startMs) / MIN)) * MIN);
  const cuts = [...borders].sort((a, b) => a - b);
  const spans = cuts.slice(1).map((endMs, i) => ({ startMs: cuts[i]!, endMs }));
  const ended = rows.alarms.filter((a) => a.endMs !== null);
  const cells: Cell[] = [];
  // Runs of one to three cells, each run read as one history, like one fetch of several missing days.
  for (let i = 0; i < spans.length; ) {
    const run = spans.slice(i, i + 1 + Math.floor(rnd() * 3));
    const runSpan = { startMs: run[0]!.startMs, endMs: run[run.length - 1]!.endMs };
    cells.push(...tallyCells(historyIn(rows, runSpan, ended), run, nowMs, HEARTBEAT_SEC));
    i += run.length;
  }
  return cells;
}

const figures = (tallies: Tally[]) => tallies.map((t) => kindFigures('overall', t, { idealCycleTimeSec: 45, source: 'machineConfig' }, true));

describe('analysis from cells', () => {
  it('GW-59 tallies joined from cells equal one pass over the whole window: states, stops, gaps, parts, cycles, alarms', () => {
    let compared = 0;
    for (let seed = 1; seed <= 250; seed++) {
      const rnd = random(seed);
      const nowMs = rnd() < 0.3 ? T0 + Math.floor(rnd() * 2880) * MIN : T0 + 5 * 1440 * MIN;
      const rows = randomRows(rnd, nowMs);
      const startMs = T0 + Math.floor(rnd() * 1440) * MIN;
      const endMs = startMs + (30 + Math.floor(rnd() * 1800)) * MIN;
      const interval = rnd() < 0.5 ? undefined : (20 + Math.floor(rnd() * 600)) * 60;
      const window = { startUnix: startMs / 1000, endUnix: endMs / 1000, start: '', end: '', timeZone: 'UTC' };
      const subWindows = splitWindow(window, interval);
      const range = analysedRange(subWindows, nowMs);
      // As the reader gives them: no record of an occurrence that has a recorded end.
      const ended = rows.alarms.filter((a) => a.endMs !== null);
      const open = rows.alarms.filter((a) => a.endMs === null && !ended.some((e) => e.code === a.code && e.message === a.message && e.startMs === a.startMs));
      const whole = tallyMachine(historyIn(rows, range, [...ended, ...open]), { subWindows, nowMs, heartbeatSec: HEARTBEAT_SEC, idealCycleTimeSec: 45 });
      if (range.endMs <= range.startMs) continue;
      const cells = cellsOf(rnd, rows, subWindows, range, nowMs);
      const joined = tallySubWindows(subWindows, cells, open, range, 45);
      expect(figures(joined), `seed ${seed}`).toEqual(figures(whole));
      compared++;
    }
    // Most seeds give a window that starts before now.
    expect(compared).toBeGreaterThan(150);
  });
});

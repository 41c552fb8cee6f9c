/**
 * The additive record of one (sub-)window: milliseconds per derived state,
 * alarm stops, parts, cycle times and alarm pieces. Every field adds up, so a
 * window's tally is the sum of its sub-windows' tallies and a group's is the
 * sum of its members'; ratios are computed from a tally only at the end.
 */
import { DERIVED_STATES, type DerivedStateName } from '../fleet/derive-state.js';
import { clipAlarms, type AlarmPiece } from './alarms.js';
import type { MachineHistory, TimeSpan } from './model.js';
import { spanIndex } from './sub-windows.js';
import { forEachSegment, gatewayGaps } from './timeline.js';

export interface Tally {
  stateMs: Record<DerivedStateName, number>;
  /** Part of noData during which the gateway was down. */
  gapMs: number;
  /** Entries into the alarm state, each counted in the window where it starts (or the first window, if in progress). */
  alarmStops: number;
  totalCount: number;
  countRows: number;
  countByProgram: Map<string | null, number>;
  cycleTimes: number[];
  cycleTimesByProgram: Map<string | null, number[]>;
  /** Σ idealCycleTime × parts, over machines that have an ideal cycle time. */
  idealProductionMs: number;
  /** Running time of the machines that have an ideal cycle time. */
  runningWithIdealMs: number;
  alarms: AlarmPiece[];
}

export function emptyTally(): Tally {
  return {
    stateMs: Object.fromEntries(DERIVED_STATES.map((s) => [s, 0])) as Record<DerivedStateName, number>,
    gapMs: 0,
    alarmStops: 0,
    totalCount: 0,
    countRows: 0,
    countByProgram: new Map(),
    cycleTimes: [],
    cycleTimesByProgram: new Map(),
    idealProductionMs: 0,
    runningWithIdealMs: 0,
    alarms: [],
  };
}

/** Adds `from` into `into`. */
export function addTally(into: Tally, from: Tally): Tally {
  for (const s of DERIVED_STATES) into.stateMs[s] += from.stateMs[s];
  into.gapMs += from.gapMs;
  into.alarmStops += from.alarmStops;
  into.totalCount += from.totalCount;
  into.countRows += from.countRows;
  for (const [program, n] of from.countByProgram) into.countByProgram.set(program, (into.countByProgram.get(program) ?? 0) + n);
  for (const v of from.cycleTimes) into.cycleTimes.push(v);
  for (const [program, values] of from.cycleTimesByProgram) {
    const list = into.cycleTimesByProgram.get(program);
    if (list) for (const v of values) list.push(v);
    else into.cycleTimesByProgram.set(program, [...values]);
  }
  into.idealProductionMs += from.idealProductionMs;
  into.runningWithIdealMs += from.runningWithIdealMs;
  for (const a of from.alarms) into.alarms.push(a);
  return into;
}

/** The sum of `tallies`. */
export function sumTallies(tallies: readonly Tally[]): Tally {
  return tallies.reduce(addTally, emptyTally());
}

export interface MachineTallyOptions {
  /** Contiguous sub-windows covering the window, ascending. */
  subWindows: readonly TimeSpan[];
  nowMs: number;
  heartbeatSec: number;
  idealCycleTimeSec: number | null;
}

/** The analysed range: the window up to now. */
export function analysedRange(subWindows: readonly TimeSpan[], nowMs: number): TimeSpan {
  const startMs = subWindows[0]?.startMs ?? 0;
  const endMs = Math.max(startMs, Math.min(subWindows[subWindows.length - 1]?.endMs ?? 0, nowMs));
  return { startMs, endMs };
}

/** One tally per sub-window for one machine; time after `nowMs` is not analysed. */
export function tallyMachine(history: MachineHistory, opts: MachineTallyOptions): Tally[] {
  const { subWindows } = opts;
  const tallies = subWindows.map(() => emptyTally());
  const range = analysedRange(subWindows, opts.nowMs);
  if (range.endMs <= range.startMs) return tallies;

  const gaps = gatewayGaps(history.heartbeats, range, opts.nowMs, 2 * opts.heartbeatSec * 1000);
  let previous: DerivedStateName | null = null;
  let k = 0;
  forEachSegment(history, range, gaps, (startMs, endMs, state, gap) => {
    while (subWindows[k]!.endMs <= startMs) k++;
    if (state === 'alarm' && previous !== 'alarm') tallies[k]!.alarmStops++;
    previous = state;
    for (let j = k; j < subWindows.length && subWindows[j]!.startMs < endMs; j++) {
      const ms = Math.min(endMs, subWindows[j]!.endMs) - Math.max(startMs, subWindows[j]!.startMs);
      tallies[j]!.stateMs[state] += ms;
      if (gap) tallies[j]!.gapMs += ms;
    }
  });

  for (const c of history.counts) {
    if (c.ts < range.startMs || c.ts >= range.endMs) continue;
    const t = tallies[spanIndex(subWindows, c.ts)]!;
    t.totalCount += c.delta;
    t.countRows++;
    t.countByProgram.set(c.program, (t.countByProgram.get(c.program) ?? 0) + c.delta);
    if (c.cycleTimeSec !== null && c.cycleTimeSec > 0) {
      t.cycleTimes.push(c.cycleTimeSec);
      const list = t.cycleTimesByProgram.get(c.program);
      if (list) list.push(c.cycleTimeSec);
      else t.cycleTimesByProgram.set(c.program, [c.cycleTimeSec]);
    }
  }

  for (const { index, piece } of clipAlarms(history.alarms, subWindows, range, gaps)) tallies[index]!.alarms.push(piece);

  if (opts.idealCycleTimeSec !== null) {
    for (const t of tallies) {
      t.idealProductionMs = opts.idealCycleTimeSec * 1000 * t.totalCount;
      t.runningWithIdealMs = t.stateMs.running;
    }
  }
  return tallies;
}

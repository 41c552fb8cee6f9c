/**
 * The additive record of one (sub-)window: milliseconds per derived state,
 * alarm stops, parts, cycle times and alarm pieces. Every field adds up, so a
 * window's tally is the sum of its sub-windows' tallies and a group's is the
 * sum of its members'; ratios are computed from a tally only at the end.
 */
import { DERIVED_STATES, type DerivedStateName } from '../../../core/roles/gateway/fleet/derive-state.js';
import { clipAlarms, type AlarmPiece } from './alarms.js';
import type { AlarmRecord, MachineHistory, TimeSpan } from './model.js';
import { spanIndex } from './sub-windows.js';
import { forEachSegment, gatewayGaps, type Gap } from './timeline.js';

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

/**
 * The tally of one stretch of time, computed as if that stretch were a whole
 * window: an alarm state in force at its start is a stop, and every alarm
 * occurrence overlapping it is counted. What joining cells needs to undo that
 * is kept beside the tally: the first and last state shown, each alarm
 * piece's start, and the gateway gaps inside. A cell depends only on history,
 * so the cells of settled days can be kept and reused (plugins/analysis).
 */
export interface Cell {
  span: TimeSpan;
  tally: Tally;
  /** The state shown at the start and at the end of the analysed part; null when nothing of the cell was analysed (after now). */
  firstShown: DerivedStateName | null;
  lastShown: DerivedStateName | null;
  /** Gateway gaps overlapping the span, clipped to it, ascending. */
  gaps: Gap[];
}

/** Gateway gaps of consecutive cells covering `range` as one list: the pieces of one silence joined again. */
export function joinedGaps(cells: readonly Cell[]): TimeSpan[] {
  const out: Gap[] = [];
  for (const cell of cells) {
    for (const g of cell.gaps) {
      const last = out[out.length - 1];
      if (last && last.silentFromMs === g.silentFromMs && last.endMs === g.startMs) out[out.length - 1] = { ...last, endMs: g.endMs };
      else out.push(g);
    }
  }
  return out;
}

/**
 * Adds the pieces of `alarms` to consecutive cells covering `range`; `gaps`
 * are the gateway gaps of the whole range (an alarm without an end is taken
 * to end at the first gap after it was logged).
 */
export function addAlarmPieces(cells: readonly Cell[], alarms: readonly AlarmRecord[], range: TimeSpan, gaps: readonly TimeSpan[]): void {
  if (alarms.length === 0 || cells.length === 0) return;
  const spans = cells.map((c) => c.span);
  for (const { index, piece } of clipAlarms(alarms, spans, range, gaps)) cells[index]!.tally.alarms.push({ ...piece, counted: true });
}

/**
 * One cell per span for one machine's history; `spans` are contiguous and
 * ascending, and time after `nowMs` is not analysed.
 */
export function tallyCells(history: MachineHistory, spans: readonly TimeSpan[], nowMs: number, heartbeatSec: number): Cell[] {
  const cells: Cell[] = spans.map((span) => ({ span, tally: emptyTally(), firstShown: null, lastShown: null, gaps: [] }));
  const range = analysedRange(spans, nowMs);
  if (range.endMs <= range.startMs) return cells;

  const gaps = gatewayGaps(history.heartbeats, range, nowMs, 2 * heartbeatSec * 1000);
  let k = 0;
  forEachSegment(history, range, gaps, (startMs, endMs, state, gap) => {
    while (spans[k]!.endMs <= startMs) k++;
    for (let j = k; j < spans.length && spans[j]!.startMs < endMs; j++) {
      const cell = cells[j]!;
      const ms = Math.min(endMs, spans[j]!.endMs) - Math.max(startMs, spans[j]!.startMs);
      cell.tally.stateMs[state] += ms;
      if (gap) cell.tally.gapMs += ms;
      if (state === 'alarm' && cell.lastShown !== 'alarm') cell.tally.alarmStops++;
      if (cell.firstShown === null) cell.firstShown = state;
      cell.lastShown = state;
    }
  });
  let g = 0;
  for (const cell of cells) {
    for (; g < gaps.length && gaps[g]!.startMs < cell.span.endMs; g++) {
      const gap = gaps[g]!;
      cell.gaps.push({ startMs: Math.max(gap.startMs, cell.span.startMs), endMs: Math.min(gap.endMs, cell.span.endMs), silentFromMs: gap.silentFromMs });
      if (gap.endMs > cell.span.endMs) break;
    }
  }

  for (const c of history.counts) {
    if (c.ts < range.startMs || c.ts >= range.endMs) continue;
    const t = cells[spanIndex(spans, c.ts)]!.tally;
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

  addAlarmPieces(cells, history.alarms, range, gaps);
  return cells;
}

/**
 * Joins consecutive cells covering a range that starts at `rangeStartMs` into
 * tallies as one pass over the whole range would give: an alarm state running
 * on from the previous cell is no new stop, and an occurrence carried into a
 * cell is counted only in the cell at the range start. Cells are not changed.
 */
export function stitchCells(cells: readonly Cell[], rangeStartMs: number): Tally[] {
  let previous: DerivedStateName | null = null;
  return cells.map((cell) => {
    const continued = cell.firstShown === 'alarm' && previous === 'alarm';
    if (cell.lastShown !== null) previous = cell.lastShown;
    const atStart = cell.span.startMs <= rangeStartMs;
    return {
      ...cell.tally,
      alarmStops: cell.tally.alarmStops - (continued ? 1 : 0),
      alarms: cell.tally.alarms.map((p) => ({ ...p, counted: atStart || p.startMs >= cell.span.startMs })),
    };
  });
}

/** Sets the ideal production time of a tally from its parts and running time (machines with an ideal cycle time). */
export function applyIdealCycleTime(t: Tally, idealCycleTimeSec: number | null): Tally {
  if (idealCycleTimeSec !== null) {
    t.idealProductionMs = idealCycleTimeSec * 1000 * t.totalCount;
    t.runningWithIdealMs = t.stateMs.running;
  }
  return t;
}

/** One tally per sub-window for one machine; time after `nowMs` is not analysed. */
export function tallyMachine(history: MachineHistory, opts: MachineTallyOptions): Tally[] {
  // One cell per sub-window, every alarm (open ones too) already in the cells.
  const cells = tallyCells(history, opts.subWindows, opts.nowMs, opts.heartbeatSec);
  return tallySubWindows(opts.subWindows, cells, [], analysedRange(opts.subWindows, opts.nowMs), opts.idealCycleTimeSec);
}

/**
 * One tally per sub-window from `cells`: consecutive cells covering the
 * analysed range, each inside one sub-window, holding states, parts and ended
 * alarms. `openAlarms` (no recorded end, and none of them an occurrence that
 * has an ended record: a recorded end wins) are clipped over the whole range
 * here, since where they end depends on gaps and on now. Gives what
 * tallyMachine gives for the same history; cells are not changed.
 */
export function tallySubWindows(
  subWindows: readonly TimeSpan[],
  cells: readonly Cell[],
  openAlarms: readonly AlarmRecord[],
  range: TimeSpan,
  idealCycleTimeSec: number | null,
): Tally[] {
  let joined: readonly Cell[] = cells;
  if (openAlarms.length > 0) {
    const own = cells.map((c) => ({ ...c, tally: { ...c.tally, alarms: [...c.tally.alarms] } }));
    addAlarmPieces(own, openAlarms, range, joinedGaps(cells));
    joined = own;
  }
  const tallies = subWindows.map(() => emptyTally());
  stitchCells(joined, range.startMs).forEach((t, k) => addTally(tallies[spanIndex(subWindows, joined[k]!.span.startMs)]!, t));
  return tallies.map((t) => applyIdealCycleTime(t, idealCycleTimeSec));
}

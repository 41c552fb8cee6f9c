/**
 * The figures of each analysis kind, computed from one tally. Times are
 * reported in seconds (millisecond resolution); ratios are recomputed from the
 * tally's sums, never averaged. Formulas: docs/analysis.md.
 */
import { DERIVED_STATES, type DerivedStateName } from '../../../core/roles/gateway/fleet/derive-state.js';
import { summariseAlarms, type AlarmSummary } from './alarms.js';
import { E10_BUCKETS, E10_OF_STATE, NON_SCHEDULED_STATES, TOP_ALARMS, type E10Bucket } from './model.js';
import type { Tally } from './tally.js';

const sec = (ms: number): number => ms / 1000;
const ratio = (numerator: number, denominator: number): number | null => (denominator > 0 ? numerator / denominator : null);

/** Where the ideal cycle time came from: the machine's config, nowhere, or (groups) each member's config. */
export type IdealCycleTimeSource = 'machineConfig' | 'notConfigured' | 'groupMembers';

export function timeSec(t: Tally): number {
  return sec(DERIVED_STATES.reduce((sum, s) => sum + t.stateMs[s], 0));
}

export function stateTimeSec(t: Tally): Record<DerivedStateName, number> {
  return Object.fromEntries(DERIVED_STATES.map((s) => [s, sec(t.stateMs[s])])) as Record<DerivedStateName, number>;
}

/** Time per SEMI E10-style bucket. */
export function e10TimeSec(t: Tally): Record<E10Bucket, number> {
  const ms = Object.fromEntries(E10_BUCKETS.map((b) => [b, 0])) as Record<E10Bucket, number>;
  for (const s of DERIVED_STATES) ms[E10_OF_STATE[s]] += t.stateMs[s];
  return Object.fromEntries(E10_BUCKETS.map((b) => [b, sec(ms[b])])) as Record<E10Bucket, number>;
}

/** The p-th percentile (0-100) by nearest rank: the value at rank ceil(p/100 × n) of the sorted values. */
export function nearestRank(sorted: ArrayLike<number>, p: number): number | null {
  if (sorted.length === 0) return null;
  return sorted[Math.min(sorted.length, Math.max(1, Math.ceil((p / 100) * sorted.length))) - 1]!;
}

/** OEE = availability × performance × quality. */
export function oeeFigures(t: Tally, ideal: { idealCycleTimeSec: number | null; source: IdealCycleTimeSource }) {
  const plannedMs = DERIVED_STATES.filter((s) => !NON_SCHEDULED_STATES.has(s)).reduce((sum, s) => sum + t.stateMs[s], 0);
  const runningMs = t.stateMs.running;
  // No scrap signal exists yet, so every part counts as good.
  const goodCount = t.totalCount;
  const availability = ratio(runningMs, plannedMs);
  const performanceRaw = ratio(t.idealProductionMs, t.runningWithIdealMs);
  const performance = performanceRaw === null ? null : Math.min(1, performanceRaw);
  const quality = ratio(goodCount, t.totalCount);
  const oee = availability !== null && performance !== null && quality !== null ? availability * performance * quality : null;
  return {
    timeSec: timeSec(t),
    plannedTimeSec: sec(plannedMs),
    runningTimeSec: sec(runningMs),
    idealCycleTimeSec: ideal.idealCycleTimeSec,
    idealCycleTimeSource: ideal.source,
    idealProductionTimeSec: sec(t.idealProductionMs),
    runningTimeWithIdealSec: sec(t.runningWithIdealMs),
    totalCount: t.totalCount,
    goodCount,
    goodCountSource: 'assumedAllGood' as const,
    availability,
    performance,
    quality,
    oee,
  };
}

const byDuration = (a: AlarmSummary, b: AlarmSummary) => b.durationSec - a.durationSec || b.count - a.count || a.code.localeCompare(b.code);
const byCount = (a: AlarmSummary, b: AlarmSummary) => b.count - a.count || b.durationSec - a.durationSec || a.code.localeCompare(b.code);

/** Alarm occurrences, alarm stops, MTBF = running time / stops, MTTR = alarm-state time / stops. */
export function alarmFigures(t: Tally) {
  const counted = t.alarms.filter((p) => p.counted);
  const byLevel: Record<string, number> = {};
  for (const p of counted) byLevel[p.level] = (byLevel[p.level] ?? 0) + 1;
  const summaries = summariseAlarms(t.alarms);
  const durationMs = t.alarms.reduce((sum, p) => sum + p.durationMs, 0);
  const mtbf = ratio(t.stateMs.running, t.alarmStops);
  const mttr = ratio(t.stateMs.alarm, t.alarmStops);
  return {
    timeSec: timeSec(t),
    alarmCount: counted.length,
    alarmCountByLevel: byLevel,
    alarmDurationSec: sec(durationMs),
    alarmStops: t.alarmStops,
    alarmStateTimeSec: sec(t.stateMs.alarm),
    runningTimeSec: sec(t.stateMs.running),
    mtbfSec: mtbf === null ? null : sec(mtbf),
    mttrSec: mttr === null ? null : sec(mttr),
    topByDuration: [...summaries].sort(byDuration).slice(0, TOP_ALARMS),
    topByCount: [...summaries].sort(byCount).slice(0, TOP_ALARMS),
  };
}

/** Programs in a stable order: most first, then by name, the unnamed (null) last among equals. */
function programOrder<T>(entries: Iterable<[string | null, T]>, weight: (v: T) => number): [string | null, T][] {
  return [...entries].sort((a, b) => weight(b[1]) - weight(a[1]) || (a[0] ?? '\uffff').localeCompare(b[0] ?? '\uffff'));
}

/** Parts: Σ Count.delta, optionally split by program. */
export function countFigures(t: Tally, perProgram: boolean) {
  const base = { totalCount: t.totalCount, countRows: t.countRows };
  if (!perProgram) return base;
  return { ...base, perProgram: programOrder(t.countByProgram, (n) => n).map(([program, totalCount]) => ({ program, totalCount })) };
}

function cycleStats(values: readonly number[]) {
  // A typed array sorts numerically without a comparator, several times faster for 30 days of parts.
  const sorted = Float64Array.from(values).sort();
  const count = sorted.length;
  return {
    count,
    minSec: count ? sorted[0]! : null,
    avgSec: count ? sorted.reduce((sum, v) => sum + v, 0) / count : null,
    p50Sec: nearestRank(sorted, 50),
    p90Sec: nearestRank(sorted, 90),
    maxSec: count ? sorted[count - 1]! : null,
  };
}

/** Cycle times (Count.lastCycleTime > 0): count, min, avg, p50, p90, max, overall and per program. */
export function cycleFigures(t: Tally) {
  return {
    ...cycleStats(t.cycleTimes),
    perProgram: programOrder(t.cycleTimesByProgram, (v) => v.length).map(([program, values]) => ({ program, ...cycleStats(values) })),
  };
}

/** Time in each state and E10 bucket, with the oee, alarm, count and cycle figures. */
export function overallFigures(t: Tally, ideal: { idealCycleTimeSec: number | null; source: IdealCycleTimeSource }, perProgram: boolean) {
  return {
    timeSec: timeSec(t),
    stateTimeSec: stateTimeSec(t),
    gatewayDownSec: sec(t.gapMs),
    e10TimeSec: e10TimeSec(t),
    oee: oeeFigures(t, ideal),
    alarm: alarmFigures(t),
    count: countFigures(t, perProgram),
    cycle: cycleFigures(t),
  };
}

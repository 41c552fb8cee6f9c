/**
 * What analysis reads and what it reports: the history of one machine over a
 * range, the analysis kinds, and the SEMI E10-style time buckets. The
 * formulas are in docs/analysis.md.
 */
import type { DerivedStateName } from '../../../core/roles/gateway/fleet/derive-state.js';

/** GW-59: the analysis kinds. */
export { ANALYSIS_KINDS } from '../../../core/roles/gateway/contract/analysis.js';
import type { ANALYSIS_KINDS } from '../../../core/roles/gateway/contract/analysis.js';
export type AnalysisKind = (typeof ANALYSIS_KINDS)[number];

/** At most this many sub-windows per request; a finer interval is refused. */
export const MAX_SUB_WINDOWS = 1000;

/** How many entries the top-alarm lists hold. */
export const TOP_ALARMS = 10;

/** SEMI E10-style buckets, in the order E10 lists them. */
export const E10_BUCKETS = ['productive', 'standby', 'engineering', 'scheduledDowntime', 'unscheduledDowntime', 'nonScheduled'] as const;
export type E10Bucket = (typeof E10_BUCKETS)[number];

/**
 * Derived state → E10 bucket. No signal marks scheduled maintenance yet, so
 * scheduledDowntime stays 0. noData is non-scheduled, as it is outside planned
 * time (the same split as the live OEE task); docs/analysis.md argues both.
 */
export const E10_OF_STATE: Readonly<Record<DerivedStateName, E10Bucket>> = {
  running: 'productive',
  idle: 'standby',
  setup: 'engineering',
  alarm: 'unscheduledDowntime',
  offline: 'unscheduledDowntime',
  inactive: 'nonScheduled',
  noData: 'nonScheduled',
};

/** States outside planned production time. */
export const NON_SCHEDULED_STATES: ReadonlySet<DerivedStateName> = new Set(['inactive', 'noData']);

/** A State history row: the derived state changed at `ts` (unix ms). */
export interface StateChange {
  ts: number;
  state: DerivedStateName;
}

/** A Count history row. */
export interface CountRecord {
  ts: number;
  /** Parts made since the previous Count row. */
  delta: number;
  /** Count.lastCycleTime in seconds; null when the controller gives none. */
  cycleTimeSec: number | null;
  /** Count.program, else the program of the latest CNCStatus row; null when neither names one. */
  program: string | null;
}

/** One alarm occurrence as history records it. */
export interface AlarmRecord {
  code: string;
  message: string;
  level: string;
  /** When the alarm became active (the controller's `since`), unix ms. */
  startMs: number;
  /** When it ended (AlarmHistory.end); null when no end is recorded. */
  endMs: number | null;
  /** When the gateway logged it (the AlarmLog start row), for alarms without an end. */
  loggedMs: number;
  /** The machine's live status still shows it. */
  activeNow: boolean;
}

/** Heartbeat timestamps around and inside the range, ascending. */
export interface HeartbeatEvidence {
  /** The last heartbeat before the range start, if any is stored. */
  before: number | null;
  within: readonly number[];
  /** The first heartbeat at or after the range end; null when none (then `now` closes the evidence). */
  after: number | null;
}

/** Everything analysis needs about one machine over a range. */
export interface MachineHistory {
  /** The state of the last State row before the range start; null when there is none. */
  stateBefore: DerivedStateName | null;
  /** State rows inside the range, ascending. */
  states: readonly StateChange[];
  heartbeats: HeartbeatEvidence;
  counts: readonly CountRecord[];
  alarms: readonly AlarmRecord[];
}

/** A half-open stretch of time [startMs, endMs), unix ms. */
export interface TimeSpan {
  startMs: number;
  endMs: number;
}

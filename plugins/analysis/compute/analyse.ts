/**
 * Analysis of one machine or one group over a window: pure functions from
 * history to figures. The window is split into sub-windows first; every
 * figure of the whole window is computed from the sum of the sub-windows'
 * tallies, so sub-window times and counts add up to the whole exactly.
 */
import type { TimeWindow } from '../../../core/interfaces/time-params.js';
import { alarmFigures, countFigures, cycleFigures, e10TimeSec, oeeFigures, overallFigures, type IdealCycleTimeSource } from './figures.js';
import type { AnalysisKind, MachineHistory, TimeSpan } from './model.js';
import { roundFigures } from './rounding.js';
import { splitWindow, subWindowObject } from './sub-windows.js';
import { sumTallies, tallyMachine, type Tally } from './tally.js';

export interface AnalysisSpec {
  kind: AnalysisKind;
  window: TimeWindow;
  /** Sub-window length in seconds; absent for the whole window only. */
  intervalSec?: number;
  /** Split counts by program (count and overall). */
  perProgram: boolean;
  /** Unix ms; time after it is not analysed. */
  nowMs: number;
  heartbeatSec: number;
}

/** One machine with its history over the window, or with its tallies per sub-window already made (plugins/analysis). */
export type MachineSubject = { machineID: string; idealCycleTimeSec: number | null } & ({ history: MachineHistory } | { tallies: readonly Tally[] });

interface IdealCycleTime {
  idealCycleTimeSec: number | null;
  source: IdealCycleTimeSource;
}

/** A group member left out of the sums, and why. */
export interface MemberWithoutData {
  machineID: string;
  reason: 'noData' | 'inactive' | 'unknown';
  detail: string;
}

/** The figures of `kind` for one tally, rounded as they leave the analysis (every figure returned passes here). */
export function kindFigures(kind: AnalysisKind, tally: Tally, ideal: IdealCycleTime, perProgram: boolean) {
  return roundFigures(exactFigures(kind, tally, ideal, perProgram));
}

function exactFigures(kind: AnalysisKind, tally: Tally, ideal: IdealCycleTime, perProgram: boolean) {
  switch (kind) {
    case 'oee':
      return { ...oeeFigures(tally, ideal), e10TimeSec: e10TimeSec(tally) };
    case 'alarm':
      return alarmFigures(tally);
    case 'count':
      return countFigures(tally, perProgram);
    case 'cycle':
      return cycleFigures(tally);
    case 'overall':
      return overallFigures(tally, ideal, perProgram);
  }
}

/** The whole window's figures, and each sub-window's when an interval was asked for. */
function report(spec: AnalysisSpec, subWindows: readonly TimeSpan[], tallies: readonly Tally[], ideal: IdealCycleTime) {
  const whole = kindFigures(spec.kind, tallies.length === 1 ? tallies[0]! : sumTallies(tallies), ideal, spec.perProgram);
  if (spec.intervalSec === undefined) return whole;
  return {
    ...whole,
    intervalSec: spec.intervalSec,
    intervals: tallies.map((t, k) => ({
      window: subWindowObject(subWindows[k]!, spec.window.timeZone),
      ...kindFigures(spec.kind, t, ideal, spec.perProgram),
    })),
  };
}

function machineIdeal(subject: MachineSubject): IdealCycleTime {
  return { idealCycleTimeSec: subject.idealCycleTimeSec, source: subject.idealCycleTimeSec === null ? 'notConfigured' : 'machineConfig' };
}

function tallies(spec: AnalysisSpec, subWindows: readonly TimeSpan[], subject: MachineSubject): readonly Tally[] {
  if ('tallies' in subject) return subject.tallies;
  return tallyMachine(subject.history, { subWindows, nowMs: spec.nowMs, heartbeatSec: spec.heartbeatSec, idealCycleTimeSec: subject.idealCycleTimeSec });
}

/** Whether any analysed time has a known state, or any part or alarm was recorded. */
function hasData(list: readonly Tally[]): boolean {
  return list.some((t) => Object.entries(t.stateMs).some(([s, ms]) => s !== 'noData' && ms > 0) || t.countRows > 0 || t.alarms.length > 0);
}

/** The figures of one machine. Throws INVALID_PARAMETER when the interval makes too many sub-windows. */
export function analyseMachine(spec: AnalysisSpec, subject: MachineSubject) {
  const subWindows = splitWindow(spec.window, spec.intervalSec);
  return report(spec, subWindows, tallies(spec, subWindows, subject), machineIdeal(subject));
}

/**
 * The figures of a group as if it were one machine: times, counts and ideal
 * production time added per sub-window, ratios recomputed from the sums.
 * Members with no known state, part or alarm in the window are left out and
 * listed under membersWithoutData, beside `excluded` (inactive or unknown).
 */
export function analyseGroup(spec: AnalysisSpec, subjects: readonly MachineSubject[], excluded: readonly MemberWithoutData[] = []) {
  const subWindows = splitWindow(spec.window, spec.intervalSec);
  const perSubWindow = subWindows.map(() => [] as Tally[]);
  const members: ({ machineID: string } & ReturnType<typeof kindFigures>)[] = [];
  const membersWithoutData: MemberWithoutData[] = [...excluded];
  for (const subject of subjects) {
    const own = tallies(spec, subWindows, subject);
    if (!hasData(own)) {
      membersWithoutData.push({ machineID: subject.machineID, reason: 'noData', detail: 'no known state, part or alarm in the window' });
      continue;
    }
    own.forEach((t, k) => perSubWindow[k]!.push(t));
    const memberWhole = own.length === 1 ? own[0]! : sumTallies(own);
    members.push({ machineID: subject.machineID, ...kindFigures(spec.kind, memberWhole, machineIdeal(subject), spec.perProgram) });
  }
  const groupTallies = perSubWindow.map(sumTallies);
  const ideal: IdealCycleTime = { idealCycleTimeSec: null, source: 'groupMembers' };
  return { ...report(spec, subWindows, groupTallies, ideal), members, membersWithoutData };
}

/** Checks the interval against the window before any history is read. */
export function checkInterval(window: TimeWindow, intervalSec?: number): void {
  splitWindow(window, intervalSec);
}

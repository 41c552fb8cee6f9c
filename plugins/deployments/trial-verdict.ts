/**
 * A trial's verdict from what the machine reported: the cycle times of the
 * program before the trial (the baseline: the previous version on the same
 * machine) and during it, and the alarms raised during it, judged by the
 * trial's rules. Pure: the watcher reads the rows through the gateway.
 */
import { z } from 'zod';
import { ACTIVE_ALARM_LEVELS } from '../../core/driver-seam/driver.js';

export const trialRulesSchema = z
  .object({
    failOnAlarmLevels: z.array(z.enum(ACTIVE_ALARM_LEVELS)).max(ACTIVE_ALARM_LEVELS.length).default(['alarm', 'emergency'])
      .describe('An alarm of one of these levels raised on the machine during the trial fails it (empty: alarms do not judge).'),
    maxCycleTimeIncreasePct: z.number().min(0).max(1000).nullable().default(10)
      .describe('The trial fails when its median cycle time exceeds the baseline median by more than this many percent (null: cycle times do not judge).'),
    minCycles: z.number().int().min(1).max(10_000).default(3)
      .describe('Cycles needed in the trial and in the baseline before cycle times can pass or fail it; with fewer, the verdict is inconclusive.'),
    baselineHours: z.number().positive().max(24 * 90).default(168)
      .describe('How far before the trial the baseline reaches.'),
    evaluateEverySec: z.number().min(0.05).max(86_400).default(60).describe('How often the machine is read while the trial is watched.'),
  })
  .strict();
export type TrialRules = z.output<typeof trialRulesSchema>;
export type TrialRulesInput = z.input<typeof trialRulesSchema>;

export type Verdict = 'pass' | 'fail' | 'inconclusive';

export interface TrialAlarm {
  code: string;
  message: string;
  level: string;
  at: number;
}

export interface TrialEvidence {
  verdict: Verdict;
  /** Which rules failed, in words. */
  failedRules: string[];
  /** Why the verdict is inconclusive, when it is. */
  inconclusiveBecause: string | null;
  baseline: { cycles: number; medianSec: number | null; from: number; to: number };
  trial: { cycles: number; medianSec: number | null; from: number; to: number };
  /** Median trial cycle against the baseline's, in percent (positive: slower). */
  cycleChangePct: number | null;
  /** Alarms of a failing level raised during the trial (at most 20 kept). */
  alarms: TrialAlarm[];
  alarmCount: number;
  /** The program name the cycles were matched by. */
  program: string;
  /** True when a read stopped at its bound (the figures cover the first rows only). */
  truncated: boolean;
}

export function median(values: readonly number[]): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

/** How a file name and a counter's program name are compared: the base name, upper case, without an extension. */
export function programKey(name: string): string {
  const base = name.split(/[\\/]/).pop() ?? name;
  return base.replace(/\.[^.]*$/, '').trim().toUpperCase();
}

const round = (n: number, digits: number) => Math.round(n * 10 ** digits) / 10 ** digits;

export function judge(
  rules: TrialRules,
  input: {
    program: string;
    baseline: { cycleSecs: number[]; from: number; to: number };
    trial: { cycleSecs: number[]; from: number; to: number };
    alarms: TrialAlarm[];
    truncated: boolean;
  },
): TrialEvidence {
  const failing = new Set<string>(rules.failOnAlarmLevels);
  const alarms = input.alarms.filter((a) => failing.has(a.level));
  const baseMedian = median(input.baseline.cycleSecs);
  const trialMedian = median(input.trial.cycleSecs);
  const enoughCycles = input.baseline.cycleSecs.length >= rules.minCycles && input.trial.cycleSecs.length >= rules.minCycles;
  const changePct = baseMedian !== null && trialMedian !== null && baseMedian > 0 ? round(((trialMedian - baseMedian) / baseMedian) * 100, 2) : null;
  const failedRules: string[] = [];
  if (alarms.length > 0) {
    failedRules.push(`${alarms.length} alarm(s) of level ${[...new Set(alarms.map((a) => a.level))].join('/')} during the trial, the first ${alarms[0]?.code} ${JSON.stringify(alarms[0]?.message ?? '')}`);
  }
  if (rules.maxCycleTimeIncreasePct !== null && enoughCycles && changePct !== null && changePct > rules.maxCycleTimeIncreasePct) {
    failedRules.push(`median cycle time ${trialMedian} s is ${changePct} % above the baseline's ${baseMedian} s (at most ${rules.maxCycleTimeIncreasePct} % allowed)`);
  }
  let verdict: Verdict;
  let inconclusiveBecause: string | null = null;
  if (failedRules.length > 0) verdict = 'fail';
  else if (rules.maxCycleTimeIncreasePct === null) verdict = input.trial.cycleSecs.length >= rules.minCycles ? 'pass' : 'inconclusive';
  else verdict = enoughCycles ? 'pass' : 'inconclusive';
  if (verdict === 'inconclusive') {
    inconclusiveBecause =
      input.trial.cycleSecs.length < rules.minCycles
        ? `${input.trial.cycleSecs.length} cycle(s) of ${input.program} during the trial; ${rules.minCycles} needed`
        : `${input.baseline.cycleSecs.length} cycle(s) of ${input.program} in the baseline; ${rules.minCycles} needed`;
  }
  return {
    verdict, failedRules, inconclusiveBecause,
    baseline: { cycles: input.baseline.cycleSecs.length, medianSec: baseMedian, from: input.baseline.from, to: input.baseline.to },
    trial: { cycles: input.trial.cycleSecs.length, medianSec: trialMedian, from: input.trial.from, to: input.trial.to },
    cycleChangePct: changePct, alarms: alarms.slice(0, 20), alarmCount: alarms.length, program: input.program, truncated: input.truncated,
  };
}

/** The trial verdict's rules on given cycle times and alarms. */
import { describe, expect, it } from 'vitest';
import { judge, median, programKey, trialRulesSchema } from '../../../plugins/deployments/trial-verdict.js';

const rules = (over: Record<string, unknown> = {}) => trialRulesSchema.parse(over);
const window = (cycleSecs: number[]) => ({ cycleSecs, from: 0, to: 1 });
const input = (baseline: number[], trial: number[], alarms: { code: string; message: string; level: string; at: number }[] = []) => ({
  program: 'O1000', baseline: window(baseline), trial: window(trial), alarms, truncated: false,
});

describe('trial verdict', () => {
  it('PV-25 a median cycle time within the allowed increase passes; beyond it fails, saying by how much', () => {
    expect(judge(rules(), input([60, 60, 62], [64, 65, 66])).verdict).toBe('pass');
    const worse = judge(rules(), input([60, 60, 62], [67, 66, 70]));
    expect(worse).toMatchObject({ verdict: 'fail', cycleChangePct: 11.67 });
    expect(worse.failedRules[0]).toMatch(/median cycle time 67 s is 11.67 % above the baseline's 60 s \(at most 10 % allowed\)/);
  });

  it('PV-25 an alarm of a failing level fails the trial whatever the cycles; a warning only when listed', () => {
    const alarm = { code: '1204', message: 'SPINDLE OVERLOAD', level: 'alarm', at: 5 };
    const warning = { code: '3201', message: 'Lubrication oil low', level: 'warning', at: 6 };
    expect(judge(rules(), input([60, 60, 60], [60, 60, 60], [warning])).verdict).toBe('pass');
    const failed = judge(rules(), input([60, 60, 60], [60, 60, 60], [warning, alarm]));
    expect(failed).toMatchObject({ verdict: 'fail', alarmCount: 1, alarms: [alarm] });
    expect(judge(rules({ failOnAlarmLevels: ['warning'] }), input([60, 60, 60], [60, 60, 60], [warning])).verdict).toBe('fail');
    expect(judge(rules({ failOnAlarmLevels: [] }), input([60], [], [alarm])).verdict).toBe('inconclusive');
  });

  it('PV-25 too few cycles in the trial or the baseline is inconclusive, saying which', () => {
    expect(judge(rules(), input([60, 60, 60], [61, 62])).inconclusiveBecause).toBe('2 cycle(s) of O1000 during the trial; 3 needed');
    expect(judge(rules(), input([60], [61, 62, 60])).inconclusiveBecause).toBe('1 cycle(s) of O1000 in the baseline; 3 needed');
    // Without a cycle rule, enough trial cycles pass on their own.
    expect(judge(rules({ maxCycleTimeIncreasePct: null }), input([], [90, 95, 99])).verdict).toBe('pass');
  });

  it('medians and program names as the rules compare them', () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(median([4, 1, 2, 3])).toBe(2.5);
    expect(median([])).toBeNull();
    expect(programKey('//CNC_MEM/USER/PATH1/o1000.nc')).toBe('O1000');
    expect(programKey('O1000')).toBe('O1000');
  });
});

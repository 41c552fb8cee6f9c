/**
 * What a trial's watching reads: the machine's cycle times and alarms from
 * its gateway's history, for the trial's window and the baseline before it,
 * judged by the trial's rules (trial-verdict.ts).
 */
import type { GatewayLink, LinkHistoryRow } from '../../core/gateway-link/types.js';
import type { ProgramsContext } from '../../core/roles/programs/context.js';
import { SYSTEM } from './common.js';
import type { TrialRow } from './trial-store.js';
import { judge, programKey, type TrialAlarm, type TrialEvidence } from './trial-verdict.js';

/** Rows read per history call, and at most per window. */
const HISTORY_PAGE = 1000;
const HISTORY_MAX = 5000;

/**
 * Reads one class of rows for [from, to), page by page, up to HISTORY_MAX.
 * The gateway's windows are whole seconds, so the read covers the seconds
 * around the window and the rows are cut to it by their own times (in ms).
 */
async function historyRows(link: GatewayLink, machineID: string, type: string, from: number, to: number): Promise<{ rows: LinkHistoryRow[]; truncated: boolean }> {
  const rows: LinkHistoryRow[] = [];
  if (to <= from) return { rows, truncated: false };
  const start = Math.floor(from / 1000) * 1000;
  const end = Math.ceil(to / 1000) * 1000 + 1000;
  let afterSeq: number | undefined;
  for (;;) {
    const page = await link.history(machineID, type, start, end, HISTORY_PAGE, afterSeq);
    rows.push(...page.rows.filter((r) => r.time >= from && r.time < to));
    if (!page.limitReached || page.rows.length === 0) return { rows, truncated: false };
    if (rows.length >= HISTORY_MAX) return { rows, truncated: true };
    afterSeq = page.rows[page.rows.length - 1]?.seq;
  }
}

/** Reads the machine and judges the trial now. */
export async function evaluateTrial(ctx: Pick<ProgramsContext, 'services' | 'now'>, t: TrialRow): Promise<TrialEvidence> {
  const fleet = ctx.services.get('gateway-machines');
  const machine = await fleet.machine(t.machineId, SYSTEM);
  if (!machine) throw new Error(`machine ${t.machineId} is no longer in the fleet`);
  const link = await fleet.linkFor(machine);
  const started = t.startedAt ?? t.createdAt;
  const now = ctx.now();
  const trialTo = Math.max(started, Math.min(now, t.endsAt ?? now));
  const baselineFrom = t.createdAt - t.rules.baselineHours * 3_600_000;
  const program = programKey(t.fileName);
  const cycles = (rows: LinkHistoryRow[]) =>
    rows.filter((r) => typeof r.data.program === 'string' && programKey(r.data.program) === program && typeof r.data.lastCycleTime === 'number' && r.data.lastCycleTime > 0)
      .map((r) => r.data.lastCycleTime as number);
  const [baseline, trial, alarmRows] = await Promise.all([
    historyRows(link, machine.machineId, 'Count', baselineFrom, t.createdAt),
    historyRows(link, machine.machineId, 'Count', started, trialTo + 1),
    historyRows(link, machine.machineId, 'AlarmLog', started, trialTo + 1),
  ]);
  const alarms: TrialAlarm[] = alarmRows.rows
    .filter((r) => r.data.event === 'start')
    .map((r) => ({ code: String(r.data.code ?? ''), message: String(r.data.message ?? '').slice(0, 200), level: String(r.data.level ?? ''), at: r.time }));
  return judge(t.rules, {
    program,
    baseline: { cycleSecs: cycles(baseline.rows), from: baselineFrom, to: t.createdAt },
    trial: { cycleSecs: cycles(trial.rows), from: started, to: trialTo },
    alarms,
    truncated: baseline.truncated || trial.truncated || alarmRows.truncated,
  });
}

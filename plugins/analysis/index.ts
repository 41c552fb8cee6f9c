/**
 * History analysis (GW-59): OEE, alarm, count, cycle and overall figures over
 * a window shorter than 31 days, for one machine or one group, optionally
 * split into sub-windows of `interval` seconds. Figures are computed by the
 * pure functions in ./compute/ from the history table; formulas and
 * decisions are in docs/analysis.md.
 */
import { ANALYSIS, MAX_WINDOW_DAYS } from '../../core/roles/gateway/contract/analysis.js';
import { analyseGroup, analyseMachine, checkInterval, type AnalysisSpec, type MachineSubject, type MemberWithoutData } from './compute/analyse.js';
import type { AlarmRecord, AnalysisKind, TimeSpan } from './compute/model.js';
import { splitWindow } from './compute/sub-windows.js';
import type { GatewayContext } from '../../core/roles/gateway/context.js';
import { GatewayError, quote } from '../../core/interfaces/errors.js';
import { definePlugin } from '../../core/runtime/plugin-host.js';
import { resolveWindow, type TimeWindow } from '../../core/interfaces/time-params.js';
import { HistoryReader, type HistoryNeeds } from './history-reader.js';
import { MachineTallies } from './machine-tallies.js';

/** What each kind reads; a group always reads the timeline, to tell members without data. */
const NEEDS: Record<AnalysisKind, HistoryNeeds> = {
  oee: { timeline: true, counts: true, alarms: false },
  alarm: { timeline: true, counts: false, alarms: true },
  count: { timeline: false, counts: true, alarms: false },
  cycle: { timeline: false, counts: true, alarms: false },
  overall: { timeline: true, counts: true, alarms: true },
};

interface AnalysisInput {
  kind: AnalysisKind;
  start: string | number;
  end?: string | number | undefined;
  interval?: number | undefined;
  enableCountPerProgram?: boolean | undefined;
}

/** The window and the spec; refuses a bad window or interval before any history is read. */
function plan(ctx: GatewayContext, input: AnalysisInput): AnalysisSpec {
  const nowMs = ctx.now();
  const window: TimeWindow = resolveWindow(
    { start: input.start, ...(input.end !== undefined ? { end: input.end } : {}) },
    { timeZone: ctx.timeZone, now: nowMs, requireStart: true, maxDays: MAX_WINDOW_DAYS },
  );
  checkInterval(window, input.interval);
  return {
    kind: input.kind,
    window,
    ...(input.interval !== undefined ? { intervalSec: input.interval } : {}),
    perProgram: input.enableCountPerProgram ?? false,
    nowMs,
    heartbeatSec: ctx.heartbeatMs / 1000,
  };
}

/** Alarms the machine's live status shows now, when it is online (an offline machine's cache is old). */
function liveAlarms(ctx: GatewayContext, machineID: string, nowMs: number): AlarmRecord[] {
  if (!ctx.fleet.has(machineID)) return [];
  const view = ctx.fleet.snapshot(machineID);
  if (view.connection.state !== 'online') return [];
  return (view.cache.CNCStatus?.value?.alarms ?? []).map((a) => ({
    code: a.code,
    message: a.message,
    level: a.level,
    startMs: a.since,
    endMs: null,
    loggedMs: nowMs,
    activeNow: true,
  }));
}

export const analysisPlugin = definePlugin<GatewayContext>({
  name: 'analysis',
  register(ctx) {
    const machineTallies = new MachineTallies(new HistoryReader(ctx.db), ctx.history.revisions);

    const subject = async (machineID: string, spec: AnalysisSpec, subWindows: readonly TimeSpan[], needs: HistoryNeeds): Promise<MachineSubject> => {
      const idealCycleTimeSec = ctx.store.getMachine(machineID).idealCycleTimeSec ?? null;
      const tallies = await machineTallies.tallies({
        machineID,
        subWindows,
        nowMs: spec.nowMs,
        heartbeatSec: spec.heartbeatSec,
        needs,
        liveAlarms: needs.alarms ? liveAlarms(ctx, machineID, spec.nowMs) : [],
        timeZone: spec.window.timeZone,
        idealCycleTimeSec,
      });
      return { machineID, idealCycleTimeSec, tallies };
    };

    ctx.interfaces.implement(ANALYSIS.machine, {
    handler: async (input) => {
        const config = ctx.store.getMachine(input.machineID);
        if (!config.isActive) throw new GatewayError('GENERAL_MACHINE_ID_NOT_EXISTED', `machineID ${quote(input.machineID)} is inactive`);
        const spec = plan(ctx, input);
        const data = analyseMachine(spec, await subject(input.machineID, spec, splitWindow(spec.window, spec.intervalSec), NEEDS[input.kind]));
        return { kind: input.kind, machineID: input.machineID, window: spec.window, data };
      },
    });

    ctx.interfaces.implement(ANALYSIS.group, {
    handler: async (input) => {
        const group = ctx.store.getGroup(input.groupID);
        const spec = plan(ctx, input);
        const subWindows = splitWindow(spec.window, spec.intervalSec);
        const needs: HistoryNeeds = { ...NEEDS[input.kind], timeline: true };
        const subjects: MachineSubject[] = [];
        const excluded: MemberWithoutData[] = [];
        for (const machineID of group.machineIDs) {
          if (!ctx.store.hasMachine(machineID)) excluded.push({ machineID, reason: 'unknown', detail: `machineID '${machineID}' does not exist` });
          else if (!ctx.store.getMachine(machineID).isActive) excluded.push({ machineID, reason: 'inactive', detail: `machineID '${machineID}' is inactive` });
          else subjects.push(await subject(machineID, spec, subWindows, needs));
        }
        const data = analyseGroup(spec, subjects, excluded);
        return { kind: input.kind, groupID: input.groupID, window: spec.window, data };
      },
    });
  },
});

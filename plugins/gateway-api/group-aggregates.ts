/**
 * Group task data: figures for a whole group computed on demand from its
 * members' cached samples (Count, TimeData, OEE). Nothing is stored and no
 * machine is contacted; a member without a cached sample is listed with the
 * reason instead of counting as zero.
 */
import { ERRORS } from '../../core/errors.js';
import type { MachineView } from '../../core/fleet/fleet.js';
import type { TaskValues } from '../../core/fleet/task-samplers.js';
import { taskDataEntry } from './fleet-snapshot.js';

export const GROUP_TASK_TYPES = ['GroupCount', 'GroupCumulativeTime', 'GroupOEE'] as const;
export type GroupTaskType = (typeof GROUP_TASK_TYPES)[number];

/** A member that contributed nothing, and why. */
export interface MemberWithoutData {
  machineID: string;
  errorCode: number;
  errorMsg: string;
}

interface MemberSample<K extends keyof TaskValues> {
  machineID: string;
  /** When the member's sample was taken, unix ms. */
  time: number;
  value: TaskValues[K];
}

/** Splits the members into those with a cached sample of `cls` and those without. */
function memberSamples<K extends 'Count' | 'TimeData' | 'OEE'>(
  members: readonly (MachineView | string)[],
  cls: K,
): { samples: MemberSample<K>[]; withoutData: MemberWithoutData[] } {
  const samples: MemberSample<K>[] = [];
  const withoutData: MemberWithoutData[] = [];
  for (const member of members) {
    if (typeof member === 'string') {
      const e = ERRORS.GENERAL_MACHINE_ID_NOT_EXISTED;
      withoutData.push({ machineID: member, errorCode: e.code, errorMsg: `${e.description} machineID '${member}' is not in the fleet` });
      continue;
    }
    const cached = member.cache[cls];
    if (member.config.isActive && cached?.value !== undefined && cached.sampledAt !== undefined) {
      samples.push({ machineID: member.config.machineID, time: cached.sampledAt, value: cached.value as TaskValues[K] });
      continue;
    }
    const entry = taskDataEntry(member, cls);
    withoutData.push({
      machineID: member.config.machineID,
      errorCode: entry.error?.errorCode ?? ERRORS.TASK_NOT_READY.code,
      errorMsg: entry.error?.errorMsg ?? `${ERRORS.TASK_NOT_READY.description} (${cls})`,
    });
  }
  return { samples, withoutData };
}

const sum = <T>(items: readonly T[], pick: (item: T) => number): number => items.reduce((total, item) => total + pick(item), 0);

/** Parts: the members' counters added up. */
function groupCount(members: readonly (MachineView | string)[]) {
  const { samples, withoutData } = memberSamples(members, 'Count');
  const rows = samples.map((s) => ({ machineID: s.machineID, time: s.time, partCount: s.value.partCount, partsTotal: s.value.partsTotal }));
  return { partCount: sum(rows, (r) => r.partCount), partsTotal: sum(rows, (r) => r.partsTotal), members: rows, membersWithoutData: withoutData };
}

/** Controller timers in seconds, added up. */
function groupCumulativeTime(members: readonly (MachineView | string)[]) {
  const { samples, withoutData } = memberSamples(members, 'TimeData');
  const rows = samples.map((s) => ({
    machineID: s.machineID,
    time: s.time,
    powerOnTime: s.value.powerOnTime,
    operatingTime: s.value.operatingTime,
    cuttingTime: s.value.cuttingTime,
  }));
  return {
    powerOnTime: sum(rows, (r) => r.powerOnTime),
    operatingTime: sum(rows, (r) => r.operatingTime),
    cuttingTime: sum(rows, (r) => r.cuttingTime),
    members: rows,
    membersWithoutData: withoutData,
  };
}

const ratio = (numerator: number, denominator: number): number | null => (denominator > 0 ? numerator / denominator : null);

/**
 * OEE of the group as if it were one machine: times and counts are added and
 * the factors recomputed from the sums, so a member idle all day weighs as
 * much as its planned time, not as one vote among many. Performance uses only
 * the members that have an ideal cycle time.
 */
function groupOee(members: readonly (MachineView | string)[]) {
  const { samples, withoutData } = memberSamples(members, 'OEE');
  const rows = samples.map((s) => {
    const { plannedTimeSec, runningTimeSec, idealCycleTimeSec, totalCount, goodCount, availability, performance, quality, oee } = s.value;
    return { machineID: s.machineID, time: s.time, since: s.value.since, plannedTimeSec, runningTimeSec, idealCycleTimeSec, totalCount, goodCount, availability, performance, quality, oee };
  });
  const plannedTimeSec = sum(rows, (r) => r.plannedTimeSec);
  const runningTimeSec = sum(rows, (r) => r.runningTimeSec);
  const totalCount = sum(rows, (r) => r.totalCount);
  const goodCount = sum(rows, (r) => r.goodCount);
  const timed = rows.filter((r) => r.idealCycleTimeSec !== null);
  const idealSec = sum(timed, (r) => (r.idealCycleTimeSec ?? 0) * r.totalCount);
  const timedRunningSec = sum(timed, (r) => r.runningTimeSec);
  const availability = ratio(runningTimeSec, plannedTimeSec);
  const performanceRaw = ratio(idealSec, timedRunningSec);
  const performance = performanceRaw === null ? null : Math.min(1, performanceRaw);
  const quality = ratio(goodCount, totalCount);
  const oee = availability !== null && performance !== null && quality !== null ? availability * performance * quality : null;
  return { plannedTimeSec, runningTimeSec, totalCount, goodCount, availability, performance, quality, oee, members: rows, membersWithoutData: withoutData };
}

const AGGREGATES = { GroupCount: groupCount, GroupCumulativeTime: groupCumulativeTime, GroupOEE: groupOee } as const;

/** The aggregate of `type` over `members`; a member given as a string is one the fleet does not know. */
export function groupAggregate(type: GroupTaskType, members: readonly (MachineView | string)[]) {
  return AGGREGATES[type](members);
}

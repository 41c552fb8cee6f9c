/**
 * Group figures computed from the members' cached samples (Count, TimeData,
 * OEE). Pure: no machine is contacted and nothing is stored here; the group
 * task scheduler caches what these return. A member without a cached sample
 * is listed with the reason instead of counting as zero.
 */
import type { GroupTaskClass, MachineTaskClass } from '../machine-config.js';
import { ERRORS } from '../../../interfaces/errors.js';
import type { MachineSnapshot } from './machine-snapshot.js';
import type { TaskValues } from './task-samplers.js';

/** A member as the aggregation sees it: its live view, or the machineID of one the fleet does not know. */
export type GroupMember = MachineSnapshot | string;

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

const shortfall = (name: 'MACHINE_INACTIVE' | 'TASK_NOT_ENABLED' | 'TASK_NOT_READY', cls: MachineTaskClass) => {
  const e = ERRORS[name];
  return { errorCode: e.code, errorMsg: name === 'MACHINE_INACTIVE' ? e.description : `${e.description} (${cls})` };
};

/**
 * Why a member has no usable sample of `cls`, in the order a machine read
 * reports it: inactive, task disabled, latest attempt failed, no sample yet.
 */
export function memberShortfall(view: MachineSnapshot, cls: MachineTaskClass): { errorCode: number; errorMsg: string } {
  const cached = view.cache[cls];
  if (!view.config.isActive) return shortfall('MACHINE_INACTIVE', cls);
  if (!view.config.tasks[cls].enabled) return shortfall('TASK_NOT_ENABLED', cls);
  if (cached?.error) return { errorCode: cached.error.errorCode, errorMsg: cached.error.message };
  return shortfall('TASK_NOT_READY', cls);
}

/** Splits the members into those with a cached sample of `cls` and those without. */
function memberSamples<K extends 'Count' | 'TimeData' | 'OEE'>(
  members: readonly GroupMember[],
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
    if (member.config.isActive && member.config.tasks[cls].enabled && cached?.value !== undefined && cached.sampledAt !== undefined) {
      samples.push({ machineID: member.config.machineID, time: cached.sampledAt, value: cached.value as TaskValues[K] });
      continue;
    }
    withoutData.push({ machineID: member.config.machineID, ...memberShortfall(member, cls) });
  }
  return { samples, withoutData };
}

const sum = <T>(items: readonly T[], pick: (item: T) => number): number => items.reduce((total, item) => total + pick(item), 0);

/** Parts: the members' counters added up. */
function groupCount(members: readonly GroupMember[]) {
  const { samples, withoutData } = memberSamples(members, 'Count');
  const rows = samples.map((s) => ({ machineID: s.machineID, time: s.time, partCount: s.value.partCount, partsTotal: s.value.partsTotal }));
  return { partCount: sum(rows, (r) => r.partCount), partsTotal: sum(rows, (r) => r.partsTotal), members: rows, membersWithoutData: withoutData };
}

/** Controller timers in seconds, added up. */
function groupCumulativeTime(members: readonly GroupMember[]) {
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
function groupOee(members: readonly GroupMember[]) {
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

const AGGREGATES = { GroupCount: groupCount, GroupCumulativeTime: groupCumulativeTime, GroupOEE: groupOee } as const satisfies Record<
  GroupTaskClass,
  (members: readonly GroupMember[]) => unknown
>;

/** The figures of each group class, with the number of members they were computed over. */
export type GroupTaskValues = { [K in GroupTaskClass]: { memberCount: number } & ReturnType<(typeof AGGREGATES)[K]> };

/** The aggregate of `type` over `members`. */
export function groupAggregate<K extends GroupTaskClass>(type: K, members: readonly GroupMember[]): GroupTaskValues[K] {
  return { memberCount: members.length, ...AGGREGATES[type](members) } as GroupTaskValues[K];
}

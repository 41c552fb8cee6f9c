/**
 * Group task classes (GroupCount, GroupCumulativeTime, GroupOEE), cached like
 * the machine classes: every active group refreshes each enabled class on its
 * own fixed-rate schedule and keeps the latest value with its time and the
 * error of the latest attempt. Reads serve the cache, so two reads between
 * refreshes answer the same figures even while the members' caches move on.
 *
 * A plain timer per task rather than an XState actor: a group task has no
 * connection, no retries and no I/O in flight (the aggregation is a pure,
 * synchronous function of the members' caches), so a state machine would
 * only wrap a setTimeout.
 */
import type { Logger } from 'pino';
import { GROUP_TASK_CLASSES, type GroupConfig, type GroupTaskClass } from '../machine-config.js';
import { toGatewayError } from '../../../interfaces/errors.js';
import { groupAggregate, type GroupMember, type GroupTaskValues } from './group-aggregates.js';
import type { CacheEntry } from './machine-actor.js';
import { schedulePhase } from './schedule-phase.js';

/** The cached latest refresh of one group class. */
export type GroupTaskEntry<K extends GroupTaskClass = GroupTaskClass> = CacheEntry<GroupTaskValues[K]>;

/** Each class's entry; entry() narrows the value type again by class. */
type GroupEntries = Partial<Record<GroupTaskClass, GroupTaskEntry>>;

/** The latest value of every group task, per group and class; written by the scheduler, read by the interfaces. */
export class GroupTaskCache {
  private readonly groups = new Map<string, GroupEntries>();

  /** The entry of one group class; empty before its first refresh. */
  entry<K extends GroupTaskClass>(groupID: string, cls: K): GroupTaskEntry<K> {
    return (this.groups.get(groupID)?.[cls] as GroupTaskEntry<K> | undefined) ?? {};
  }

  /** Records a successful refresh; clears the error of an earlier attempt. */
  store<K extends GroupTaskClass>(groupID: string, cls: K, value: GroupTaskValues[K], at: number): void {
    this.entries(groupID)[cls] = { value, sampledAt: at };
  }

  /** Records a failed refresh, keeping the earlier value beside the error. */
  fail(groupID: string, cls: GroupTaskClass, err: unknown, at: number): void {
    const e = toGatewayError(err);
    const entries = this.entries(groupID);
    entries[cls] = { ...entries[cls], error: { errorCode: e.errorCode, errorName: e.errorName, message: e.message, at } };
  }

  /** Forgets one class of a group, or the whole group. */
  clear(groupID: string, cls?: GroupTaskClass): void {
    if (cls === undefined) {
      this.groups.delete(groupID);
      return;
    }
    const entries = this.groups.get(groupID);
    if (entries) delete entries[cls];
  }

  private entries(groupID: string): GroupEntries {
    let entries = this.groups.get(groupID);
    if (!entries) {
      entries = {};
      this.groups.set(groupID, entries);
    }
    return entries;
  }
}

/** What the scheduler needs from its surroundings. */
export interface GroupTaskSchedulerDeps {
  cache: GroupTaskCache;
  /** The group's members as the aggregation should see them at refresh time. */
  members: (group: GroupConfig) => readonly GroupMember[];
  now: () => number;
  logger?: Logger;
}

interface Schedule {
  intervalMs: number;
  /** When the next refresh is due, unix ms. */
  nextDue: number;
  timer?: ReturnType<typeof setTimeout>;
}

interface ScheduledGroup {
  config: GroupConfig;
  schedules: Map<GroupTaskClass, Schedule>;
}

const sameMembers = (a: readonly string[], b: readonly string[]): boolean => a.length === b.length && a.every((id, i) => id === b[i]);

/** Runs one fixed-rate timer per enabled class of every active group and writes each refresh to the cache. */
export class GroupTaskScheduler {
  private readonly groups = new Map<string, ScheduledGroup>();
  private stopped = false;

  constructor(private readonly deps: GroupTaskSchedulerDeps) {}

  /**
   * Brings a group's schedules in line with `config`. An inactive group or a
   * disabled class loses its timer and its cached value. A newly enabled
   * class or a changed interval (re)starts that class's schedule, keeping any
   * cached value until its first refresh. A changed member list refreshes the
   * running classes at once, so that no answer describes the old membership;
   * their schedules keep their phase.
   */
  apply(config: GroupConfig): void {
    if (this.stopped) return;
    if (!config.isActive) {
      this.remove(config.groupID);
      return;
    }
    const existing = this.groups.get(config.groupID);
    const group: ScheduledGroup = existing ?? { config, schedules: new Map() };
    const membersChanged = existing !== undefined && !sameMembers(existing.config.machineIDs, config.machineIDs);
    group.config = config;
    this.groups.set(config.groupID, group);
    for (const cls of GROUP_TASK_CLASSES) {
      const task = config.tasks[cls];
      const running = group.schedules.get(cls);
      if (!task.enabled) {
        if (running) this.cancel(group, cls);
        this.deps.cache.clear(config.groupID, cls);
        continue;
      }
      if (running?.intervalMs !== task.intervalMs) {
        if (running) this.cancel(group, cls);
        this.start(group, cls);
      }
      if (membersChanged) this.refresh(group, cls);
    }
  }

  /** Stops a group's timers and forgets its cached values (the group was deleted or deactivated). */
  remove(groupID: string): void {
    const group = this.groups.get(groupID);
    if (group) for (const cls of [...group.schedules.keys()]) this.cancel(group, cls);
    this.groups.delete(groupID);
    this.deps.cache.clear(groupID);
  }

  /** Refreshes every running class of a group now, off schedule, e.g. after a member was (de)activated. */
  refreshNow(groupID: string): void {
    const group = this.groups.get(groupID);
    if (group) for (const cls of group.schedules.keys()) this.refresh(group, cls);
  }

  /** The classes of a group that hold a timer. */
  scheduled(groupID: string): GroupTaskClass[] {
    return [...(this.groups.get(groupID)?.schedules.keys() ?? [])];
  }

  /** Clears every timer; the scheduler accepts nothing afterwards. */
  stop(): void {
    this.stopped = true;
    for (const groupID of [...this.groups.keys()]) this.remove(groupID);
  }

  private start(group: ScheduledGroup, cls: GroupTaskClass): void {
    const intervalMs = group.config.tasks[cls].intervalMs;
    const nextDue = this.deps.now() + schedulePhase(group.config.groupID, intervalMs);
    const schedule: Schedule = { intervalMs, nextDue };
    group.schedules.set(cls, schedule);
    this.arm(group, cls, schedule);
  }

  private arm(group: ScheduledGroup, cls: GroupTaskClass, schedule: Schedule): void {
    schedule.timer = setTimeout(() => this.due(group, cls, schedule), Math.max(0, schedule.nextDue - this.deps.now()));
  }

  private due(group: ScheduledGroup, cls: GroupTaskClass, schedule: Schedule): void {
    if (group.schedules.get(cls) !== schedule) return;
    const due = schedule.nextDue;
    this.refresh(group, cls);
    // Fixed rate: the next slot counts from this one's due time, not from when it ran.
    const now = this.deps.now();
    let next = due + schedule.intervalMs;
    // Fell behind (e.g. the process was paused): skip the missed slots, keep the phase.
    if (next <= now) next += Math.ceil((now - next + 1) / schedule.intervalMs) * schedule.intervalMs;
    schedule.nextDue = next;
    this.arm(group, cls, schedule);
  }

  private refresh(group: ScheduledGroup, cls: GroupTaskClass): void {
    const { groupID } = group.config;
    const at = this.deps.now();
    try {
      this.deps.cache.store(groupID, cls, groupAggregate(cls, this.deps.members(group.config)), at);
    } catch (err) {
      this.deps.logger?.error({ err, groupID, task: cls }, 'group task refresh failed');
      this.deps.cache.fail(groupID, cls, err, at);
    }
  }

  private cancel(group: ScheduledGroup, cls: GroupTaskClass): void {
    const schedule = group.schedules.get(cls);
    if (schedule) clearTimeout(schedule.timer);
    group.schedules.delete(cls);
  }
}

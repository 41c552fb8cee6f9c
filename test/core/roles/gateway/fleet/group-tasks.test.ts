import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  DEFAULT_GROUP_TASK_INTERVAL_MS,
  GROUP_TASK_CLASSES,
  groupConfigSchema,
  machineConfigSchema,
  type GroupConfig,
  type GroupTaskClass,
} from '../../../../../core/roles/gateway/machine-config.js';
import { GatewayError } from '../../../../../core/interfaces/errors.js';
import { deriveState } from '../../../../../core/roles/gateway/fleet/derive-state.js';
import type { MachineSnapshot } from '../../../../../core/roles/gateway/fleet/machine-snapshot.js';
import type { GroupMember } from '../../../../../core/roles/gateway/fleet/group-aggregates.js';
import { GroupTaskCache, GroupTaskScheduler } from '../../../../../core/roles/gateway/fleet/group-tasks.js';
import { schedulePhase } from '../../../../../core/roles/gateway/fleet/schedule-phase.js';

const T0 = Date.UTC(2026, 10, 20, 8, 0, 0);

/** An active member whose Count cache holds `partsTotal`. */
function memberWithParts(machineID: string, partsTotal: number): MachineSnapshot {
  const config = machineConfigSchema.parse({ machineID, name: machineID });
  return {
    config,
    connection: { state: 'online', since: T0, attempts: 0, failures: 0 },
    cache: { Count: { value: { partCount: partsTotal, partsTotal }, sampledAt: Date.now() } },
    derived: deriveState({ isActive: true, statusTaskEnabled: true, connection: { state: 'online' }, statusIntervalMs: 1000, now: Date.now() }),
  };
}

function groupOf(raw: Record<string, unknown> = {}): GroupConfig {
  return groupConfigSchema.parse({ groupID: 'cell', name: 'Cell', ...raw });
}

/** Only `cls` enabled, refreshing every `intervalMs`. */
function only(cls: GroupTaskClass, intervalMs: number): Record<string, unknown> {
  return Object.fromEntries(GROUP_TASK_CLASSES.map((c) => [c, c === cls ? { enabled: true, intervalMs } : { enabled: false }]));
}

interface Harness {
  cache: GroupTaskCache;
  scheduler: GroupTaskScheduler;
  /** Every cache write: group, class and when. */
  refreshes: { groupID: string; cls: GroupTaskClass; at: number }[];
}

let scheduler: GroupTaskScheduler | undefined;

function harness(members: (group: GroupConfig) => readonly GroupMember[] = (g) => g.machineIDs): Harness {
  const cache = new GroupTaskCache();
  const refreshes: Harness['refreshes'] = [];
  const store = cache.store.bind(cache);
  vi.spyOn(cache, 'store').mockImplementation((groupID, cls, value, at) => {
    refreshes.push({ groupID, cls, at });
    store(groupID, cls, value, at);
  });
  scheduler = new GroupTaskScheduler({ cache, members, now: () => Date.now() });
  return { cache, scheduler, refreshes };
}

beforeEach(() => {
  vi.useFakeTimers({ now: T0 });
});
afterEach(() => {
  scheduler?.stop();
  scheduler = undefined;
  vi.useRealTimers();
});

describe('group task schedule', () => {
  it('refreshes at a fixed rate: each refresh is due one interval after the previous due time, however long the last one took', () => {
    const slowMembers = (group: GroupConfig) => {
      // Each refresh takes 37 ms; a schedule that counted from the end of a refresh would drift by that much each time.
      vi.setSystemTime(Date.now() + 37);
      return group.machineIDs;
    };
    const h = harness(slowMembers);
    h.scheduler.apply(groupOf({ tasks: only('GroupCount', 10_000) }));
    const phase = schedulePhase('cell', 10_000);
    vi.advanceTimersByTime(phase + 40_000);
    // Counting from the end of each refresh would give phase + k * 10 037.
    expect(h.refreshes.map((r) => r.at - T0)).toEqual([0, 1, 2, 3, 4].map((k) => phase + k * 10_000));
  });

  it('starts each group on its own phase within the interval, so that many groups do not refresh at once', () => {
    const h = harness();
    for (const groupID of ['line-1', 'line-2', 'line-3']) h.scheduler.apply(groupOf({ groupID, tasks: only('GroupCount', 10_000) }));
    vi.advanceTimersByTime(10_000);
    const firsts = Object.fromEntries(h.refreshes.map((r) => [r.groupID, r.at - T0]));
    expect(firsts).toEqual(Object.fromEntries(['line-1', 'line-2', 'line-3'].map((id) => [id, schedulePhase(id, 10_000)])));
    expect(new Set(Object.values(firsts)).size).toBe(3);
    for (const at of Object.values(firsts)) expect(at).toBeLessThan(10_000);
  });

  it('runs each class on its own interval: 10 s, 30 s and 60 s by default', () => {
    const h = harness();
    h.scheduler.apply(groupOf());
    expect(h.scheduler.scheduled('cell')).toEqual([...GROUP_TASK_CLASSES]);
    expect(vi.getTimerCount()).toBe(3);
    vi.advanceTimersByTime(180_000);
    for (const cls of GROUP_TASK_CLASSES) {
      const interval = DEFAULT_GROUP_TASK_INTERVAL_MS[cls];
      const times = h.refreshes.filter((r) => r.cls === cls).map((r) => r.at - T0);
      const phase = schedulePhase('cell', interval);
      expect(times, cls).toEqual(Array.from({ length: Math.floor((180_000 - phase) / interval) + 1 }, (_, k) => phase + k * interval));
    }
  });

  it('a disabled class holds no timer and is never refreshed; enabling it starts one', () => {
    const h = harness();
    h.scheduler.apply(groupOf({ tasks: { GroupOEE: { enabled: false } } }));
    expect(h.scheduler.scheduled('cell')).toEqual(['GroupCount', 'GroupCumulativeTime']);
    expect(vi.getTimerCount()).toBe(2);
    vi.advanceTimersByTime(300_000);
    expect(h.refreshes.filter((r) => r.cls === 'GroupOEE')).toEqual([]);
    expect(h.cache.entry('cell', 'GroupOEE')).toEqual({});

    h.scheduler.apply(groupOf());
    expect(vi.getTimerCount()).toBe(3);
    vi.advanceTimersByTime(60_000);
    expect(h.cache.entry('cell', 'GroupOEE').sampledAt).toBeDefined();
  });

  it('disabling a class stops its timer and forgets its value; an inactive group holds no timer at all', () => {
    const h = harness();
    h.scheduler.apply(groupOf({ tasks: only('GroupCount', 1000) }));
    vi.advanceTimersByTime(1000);
    expect(h.cache.entry('cell', 'GroupCount').value).toBeDefined();
    h.scheduler.apply(groupOf({ tasks: { ...only('GroupCount', 1000), GroupCount: { enabled: false } } }));
    expect(vi.getTimerCount()).toBe(0);
    expect(h.cache.entry('cell', 'GroupCount')).toEqual({});

    h.scheduler.apply(groupOf({ groupID: 'idle', isActive: false }));
    expect(h.scheduler.scheduled('idle')).toEqual([]);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('caches the value with the time it was computed and keeps it unchanged until the next refresh', () => {
    let parts = 5;
    const h = harness(() => [memberWithParts('A', parts)]);
    h.scheduler.apply(groupOf({ machineIDs: ['A'], tasks: only('GroupCount', 10_000) }));
    const phase = schedulePhase('cell', 10_000);
    expect(h.cache.entry('cell', 'GroupCount')).toEqual({});
    vi.advanceTimersByTime(phase);
    const first = h.cache.entry('cell', 'GroupCount');
    expect(first).toMatchObject({ sampledAt: T0 + phase, value: { memberCount: 1, partsTotal: 5 } });
    parts = 9;
    vi.advanceTimersByTime(9_999);
    expect(h.cache.entry('cell', 'GroupCount')).toEqual(first);
    vi.advanceTimersByTime(1);
    expect(h.cache.entry('cell', 'GroupCount')).toMatchObject({ sampledAt: T0 + phase + 10_000, value: { partsTotal: 9 } });
  });

  it('a failed refresh is cached beside the last value, and the next success clears it', () => {
    let failing = false;
    const h = harness((group) => {
      if (failing) throw new GatewayError('UNKNOWN_ERROR', 'members unreadable');
      return group.machineIDs;
    });
    h.scheduler.apply(groupOf({ tasks: only('GroupCount', 1000) }));
    const phase = schedulePhase('cell', 1000);
    vi.advanceTimersByTime(phase);
    const good = h.cache.entry('cell', 'GroupCount');
    expect(good.error).toBeUndefined();

    failing = true;
    vi.advanceTimersByTime(1000);
    const failed = h.cache.entry('cell', 'GroupCount');
    expect(failed.value).toEqual(good.value);
    expect(failed.sampledAt).toBe(good.sampledAt);
    expect(failed.error).toEqual({ errorCode: 1, errorName: 'UNKNOWN_ERROR', message: 'Internal error. members unreadable', at: T0 + phase + 1000 });

    failing = false;
    vi.advanceTimersByTime(1000);
    const recovered = h.cache.entry('cell', 'GroupCount');
    expect(recovered.error).toBeUndefined();
    expect(recovered.sampledAt).toBe(T0 + phase + 2000);
  });

  it('a first refresh that fails leaves an error and no value', () => {
    const h = harness(() => {
      throw new Error('boom');
    });
    h.scheduler.apply(groupOf({ tasks: only('GroupCount', 1000) }));
    vi.advanceTimersByTime(1000);
    const entry = h.cache.entry('cell', 'GroupCount');
    expect(entry.value).toBeUndefined();
    // An unexpected error is cached without its internals.
    expect(entry.error).toMatchObject({ errorCode: 1, errorName: 'UNKNOWN_ERROR', message: 'Internal error.' });
  });
});

describe('group task changes', () => {
  it('a changed member list refreshes the running classes at once, and the schedule keeps its phase', () => {
    const h = harness();
    h.scheduler.apply(groupOf({ machineIDs: ['A'], tasks: only('GroupCount', 10_000) }));
    const phase = schedulePhase('cell', 10_000);
    vi.advanceTimersByTime(phase + 2_500);
    h.scheduler.apply(groupOf({ machineIDs: ['A', 'B'], tasks: only('GroupCount', 10_000) }));
    expect(h.cache.entry('cell', 'GroupCount')).toMatchObject({ sampledAt: T0 + phase + 2_500, value: { memberCount: 2 } });
    vi.advanceTimersByTime(7_500);
    expect(h.refreshes.map((r) => r.at - T0)).toEqual([phase, phase + 2_500, phase + 10_000]);
  });

  it('a saved group with the same members and settings keeps its schedule and its value', () => {
    const h = harness();
    h.scheduler.apply(groupOf({ tasks: only('GroupCount', 10_000) }));
    vi.advanceTimersByTime(10_000);
    const before = h.cache.entry('cell', 'GroupCount');
    h.scheduler.apply(groupOf({ name: 'Renamed', tasks: only('GroupCount', 10_000) }));
    expect(h.cache.entry('cell', 'GroupCount')).toBe(before);
    expect(h.refreshes).toHaveLength(1);
  });

  it('a changed interval restarts the schedule on the new interval and keeps the value until then', () => {
    const h = harness();
    h.scheduler.apply(groupOf({ tasks: only('GroupCount', 1000) }));
    vi.advanceTimersByTime(1000);
    const kept = h.cache.entry('cell', 'GroupCount');
    const restartedAt = Date.now();
    h.scheduler.apply(groupOf({ tasks: only('GroupCount', 5000) }));
    expect(h.cache.entry('cell', 'GroupCount')).toBe(kept);
    vi.advanceTimersByTime(15_000);
    const phase = schedulePhase('cell', 5000);
    expect(h.refreshes.slice(1).map((r) => r.at - restartedAt)).toEqual([phase, phase + 5000, phase + 10_000]);
  });

  it('refreshNow refreshes every running class of a group off schedule', () => {
    const h = harness();
    h.scheduler.apply(groupOf({ tasks: { GroupOEE: { enabled: false } } }));
    h.scheduler.refreshNow('cell');
    expect(h.refreshes.map((r) => [r.cls, r.at])).toEqual([
      ['GroupCount', T0],
      ['GroupCumulativeTime', T0],
    ]);
    h.scheduler.refreshNow('unknown');
    expect(h.refreshes).toHaveLength(2);
  });

  it('removing a group clears its timers and its values; stop clears every timer and accepts nothing after', () => {
    const h = harness();
    h.scheduler.apply(groupOf());
    h.scheduler.apply(groupOf({ groupID: 'other' }));
    vi.advanceTimersByTime(60_000);
    expect(vi.getTimerCount()).toBe(6);
    h.scheduler.remove('cell');
    expect(vi.getTimerCount()).toBe(3);
    expect(h.scheduler.scheduled('cell')).toEqual([]);
    for (const cls of GROUP_TASK_CLASSES) expect(h.cache.entry('cell', cls)).toEqual({});
    h.scheduler.stop();
    expect(vi.getTimerCount()).toBe(0);
    h.scheduler.apply(groupOf());
    expect(vi.getTimerCount()).toBe(0);
  });
});

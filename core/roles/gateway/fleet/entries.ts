/**
 * A machine's fleet entries, built from its snapshot: the batchReadTaskData
 * entry of a class (for CNCStatus with the derived state) and the
 * batchReadErrors entry. The fleet's rows (rows.ts) keep these per machine;
 * the property order here is the order of the JSON the interfaces answer.
 */
import { ERRORS } from '../../../interfaces/errors.js';
import { MACHINE_TASK_CLASSES, type MachineTaskClass } from '../machine-config.js';
import type { HealthEntry, StatusEntry, TaskDataEntry } from '../api-outputs.js';
import type { MachineSnapshot } from './machine-snapshot.js';
import { memberShortfall } from './group-aggregates.js';

/** Why an entry of `type` has nothing usable, in the order a group task reports it; null when its cached sample is usable. */
function shortfall(view: MachineSnapshot, type: MachineTaskClass): { errorCode: number; errorMsg: string } | null {
  const cached = view.cache[type];
  const usable = view.config.isActive && view.config.tasks[type].enabled && !cached?.error && cached?.sampledAt !== undefined;
  return usable ? null : memberShortfall(view, type);
}

/** The CNCStatus entry: the cached status sample with the derived state, its reason and statusStale. */
export function statusEntry(view: MachineSnapshot): StatusEntry {
  const cached = view.cache.CNCStatus;
  const { state, reason, statusStale } = view.derived;
  return {
    machineID: view.config.machineID,
    type: 'CNCStatus',
    time: cached?.sampledAt ?? null,
    data: cached?.value ?? null,
    error: shortfall(view, 'CNCStatus'),
    state,
    reason,
    statusStale,
  };
}

/** One machine's cached sample of one class, with the derived state for CNCStatus. */
export function taskDataEntry(view: MachineSnapshot, type: MachineTaskClass): TaskDataEntry {
  if (type === 'CNCStatus') return statusEntry(view);
  const cached = view.cache[type];
  return { machineID: view.config.machineID, type, time: cached?.sampledAt ?? null, data: cached?.value ?? null, error: shortfall(view, type) };
}

/** Connection health and the latest error of each task. */
export function healthEntry(view: MachineSnapshot): HealthEntry {
  const c = view.connection;
  const tasks: HealthEntry['tasks'] = {};
  for (const cls of MACHINE_TASK_CLASSES) {
    const error = view.cache[cls]?.error;
    if (error) tasks[cls] = { errorCode: error.errorCode, errorMsg: error.message, at: error.at };
  }
  return {
    machineID: view.config.machineID,
    connection: {
      state: c.state,
      since: c.since || null,
      attempts: c.attempts,
      errorCode: c.state === 'online' ? 0 : (c.error?.errorCode ?? ERRORS.MACHINE_NOT_CONNECTED.code),
      error: c.state === 'online' ? null : (c.error?.message ?? `connection ${c.state}`),
    },
    tasks,
  };
}

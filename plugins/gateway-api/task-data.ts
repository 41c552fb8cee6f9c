/**
 * Task data for one machine or one group, served from the machine actors'
 * caches and the group task cache; no machine is contacted. readTaskData
 * answers the same entry as one element of batchReadTaskData, but fails with
 * the entry's error when there is nothing to show, so an information-level
 * error (1301, 1303, ...) reaches the caller as an HTTP 200 with that
 * errorCode (GW-91). readGroupTaskData does the same for a group class.
 */
import type { GroupConfig, GroupTaskClass, MachineTaskClass } from '../../core/roles/gateway/machine-config.js';
import { TASK_DATA } from '../../core/roles/gateway/contract/task-data.js';
import type { GatewayContext } from '../../core/roles/gateway/context.js';
import { ERRORS, GatewayError } from '../../core/interfaces/errors.js';
import type { MachineSnapshot } from '../../core/roles/gateway/fleet/machine-snapshot.js';
import type { GroupTaskEntry } from '../../core/roles/gateway/fleet/group-tasks.js';
import { taskDataEntry } from '../../core/roles/gateway/fleet/entries.js';
import { activeMachineSnapshot, errorDetail } from './machine-reads.js';
import { defineTaskSwitchInterface } from './task-switch.js';

/** The cached error of the latest attempt as a GatewayError of its own kind, without repeating its description. */
function cachedFailure(view: MachineSnapshot, type: MachineTaskClass): GatewayError | null {
  const cached = view.cache[type]?.error;
  if (!cached) return null;
  const detail = errorDetail(cached.errorName, cached.message);
  return new GatewayError(cached.errorName, `machine '${view.config.machineID}' ${type}: ${detail || 'no details'}`);
}

/** The error a single-machine read fails with, or null when the entry is the answer. */
function entryFailure(view: MachineSnapshot, type: MachineTaskClass, entry: ReturnType<typeof taskDataEntry>): GatewayError | null {
  const { error } = entry;
  if (!error) return null;
  const machineID = view.config.machineID;
  if (error.errorCode === ERRORS.TASK_NOT_ENABLED.code) {
    return new GatewayError('TASK_NOT_ENABLED', `machine '${machineID}': task ${type} is disabled (tasks.${type}.enabled=false); enable it with POST /api/config/task/update`);
  }
  if (error.errorCode === ERRORS.TASK_NOT_READY.code) {
    const { state } = view.connection;
    return new GatewayError(
      'TASK_NOT_READY',
      `machine '${machineID}': no ${type} sample yet (connection ${state}; the task samples every ${view.config.tasks[type].intervalMs} ms while online)`,
    );
  }
  // A failed latest attempt with an earlier value still cached answers the value, with the error beside it.
  return entry.data === null ? cachedFailure(view, type) : null;
}

/**
 * The error a group read fails with, or null when the cached value is the
 * answer. An inactive group runs no task, so it answers 1301 like a disabled one.
 */
function groupEntryFailure(group: GroupConfig, type: GroupTaskClass, entry: GroupTaskEntry): GatewayError | null {
  const { groupID } = group;
  if (!group.isActive) {
    return new GatewayError('TASK_NOT_ENABLED', `group '${groupID}' is inactive (isActive=false), so none of its tasks runs; activate it with POST /api/config/group/update`);
  }
  const task = group.tasks[type];
  if (!task.enabled) {
    return new GatewayError('TASK_NOT_ENABLED', `group '${groupID}': task ${type} is disabled (tasks.${type}.enabled=false); enable it with POST /api/config/task/update`);
  }
  if (entry.value !== undefined) return null;
  if (entry.error) {
    const detail = errorDetail(entry.error.errorName, entry.error.message);
    return new GatewayError(entry.error.errorName, `group '${groupID}' ${type}: ${detail || 'no details'}`);
  }
  return new GatewayError('TASK_NOT_READY', `group '${groupID}': no ${type} refresh yet (the task refreshes every ${task.intervalMs} ms)`);
}

export function defineTaskDataInterfaces(ctx: GatewayContext): void {
  ctx.interfaces.implement(TASK_DATA.readTaskData, {
    handler: ({ type, machineID, tag }) => {
      const view = activeMachineSnapshot(ctx, machineID);
      const entry = taskDataEntry(view, type);
      const failure = entryFailure(view, type, entry);
      if (failure) throw failure;
      return tag === undefined ? entry : { ...entry, tag };
    },
  });

  ctx.interfaces.implement(TASK_DATA.readGroupTaskData, {
    handler: ({ type, groupID, tag }) => {
      const group = ctx.store.getGroup(groupID);
      const entry = ctx.groupTasks.entry(groupID, type);
      const failure = groupEntryFailure(group, type, entry);
      if (failure) throw failure;
      const { error } = entry;
      return {
        groupID,
        type,
        time: entry.sampledAt,
        ...(tag === undefined ? {} : { tag }),
        error: error ? { errorCode: error.errorCode, errorMsg: error.message, at: error.at } : null,
        ...entry.value,
      };
    },
  });

  defineTaskSwitchInterface(ctx);
}

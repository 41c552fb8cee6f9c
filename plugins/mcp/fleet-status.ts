/**
 * get_fleet_status: merges the machine list, the group (when asked), the
 * cached CNCStatus entries and the connection health into one entry per
 * machine, with counts by derived state. It reads only caches.
 */
import { DERIVED_STATES } from '../../core/fleet/derive-state.js';
import { ToolFailure, type ToolCaller } from './tool-runtime.js';

interface TaskEntry {
  machineID: string;
  time: number | null;
  data: { status?: Record<string, unknown> } | null;
  error: { errorCode: number; errorMsg: string } | null;
  state: string;
  reason: string;
  statusStale: boolean;
}
interface ErrorEntry {
  machineID: string;
  connection: { state: string; errorCode: number; error: string | null; since: number | null };
}

/** The status fields a fleet entry carries (GW-15). */
type StatusField = 'cncStatus' | 'adjustedStatus' | 'alarmStatus' | 'alarmLevel' | 'mode' | 'programStatus' | 'time';

export async function fleetStatus(caller: ToolCaller, groupID: string | undefined) {
  const errors: Record<string, string> = {};
  let machineIDs: string[] | undefined;
  if (groupID !== undefined) {
    const group = await caller.section<{ machineIDs: string[] }>('/api/config/group', { groupID });
    if (!group.ok) {
      if (group.error.errorName !== 'FORBIDDEN') throw new ToolFailure(group.path, group.error);
      errors.group = group.message;
      return { groupID, machines: [], summary: { total: 0 }, errors };
    }
    machineIDs = group.data.machineIDs;
  }
  const ids = machineIDs?.join(',');
  const filter = ids !== undefined ? { machineIDs: ids } : {};
  if (machineIDs && machineIDs.length === 0) return { groupID, machines: [], summary: { total: 0 } };
  const [machines, tasks, health] = await Promise.all([
    caller.section<{ machineID: string; name: string; isActive: boolean }[]>('/api/config/machines'),
    caller.section<TaskEntry[]>('/api/task/batchReadTaskData', { type: 'CNCStatus', ...filter }),
    caller.section<ErrorEntry[]>('/api/task/batchReadErrors', filter),
  ]);
  if (!machines.ok) errors.machines = machines.message;
  const names = new Map(machines.ok ? machines.data.map((m) => [m.machineID, m]) : []);
  const taskBy = new Map(tasks.ok ? tasks.data.map((t) => [t.machineID, t]) : []);
  const healthBy = new Map(health.ok ? health.data.map((h) => [h.machineID, h]) : []);
  const order = machineIDs ?? (machines.ok ? machines.data.map((m) => m.machineID) : tasks.ok ? tasks.data.map((t) => t.machineID) : health.ok ? health.data.map((h) => h.machineID) : []);

  const summary: Record<string, number> = Object.fromEntries(DERIVED_STATES.map((s) => [s, 0]));
  const entries = order.map((machineID) => {
    const entry: Record<string, unknown> = { machineID };
    const meta = names.get(machineID);
    if (meta) Object.assign(entry, { name: meta.name, isActive: meta.isActive });
    const h = healthBy.get(machineID);
    entry.connection = health.ok
      ? h
        ? { errorCode: h.connection.errorCode, state: h.connection.state, ...(h.connection.error ? { error: h.connection.error } : {}) }
        : { errorCode: -1, error: 'no connection entry' }
      : { error: health.message };
    const t = taskBy.get(machineID);
    if (!tasks.ok) entry.statusError = tasks.message;
    else if (t) {
      const status = t.data?.status;
      if (status) {
        entry.status = {
          cncStatus: status.cncStatus,
          adjustedStatus: status.adjustedStatus,
          alarmStatus: status.alarmStatus,
          alarmLevel: status.alarmLevel,
          mode: status.mode,
          programStatus: status.programStatus,
          time: status.time,
        } satisfies Record<StatusField, unknown>;
      }
      else if (t.error) entry.statusError = `${t.error.errorMsg} (errorCode ${t.error.errorCode})`;
      entry.state = t.state;
      entry.reason = t.reason;
      entry.statusStale = t.statusStale;
      summary[t.state] = (summary[t.state] ?? 0) + 1;
    }
    return entry;
  });
  const result: Record<string, unknown> = {
    ...(groupID !== undefined ? { groupID } : {}),
    summary: { total: entries.length, ...summary },
    machines: entries,
  };
  if (Object.keys(errors).length) result.errors = errors;
  return result;
}

/**
 * get_fleet_status: merges the machine list, the group (when asked), the
 * cached CNCStatus entries and the connection health into one entry per
 * machine, with counts by derived state. It reads only caches.
 *
 * A dashboard polls this over the whole fleet, and between two polls most
 * entries are unchanged; so each entry's serialised text is kept with the
 * entry it was made from and reused while a new entry equals it (compared
 * field by field, not by identity). The answer is returned as those parts
 * (core/mcp/frozen-answers.ts), byte for byte the JSON of the merged object.
 */
import { DERIVED_STATES } from '../../core/roles/gateway/fleet/derive-state.js';
import { literalContent, SerialisedAnswer } from '../../core/mcp/frozen-answers.js';
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

type Meta = { machineID: string; name: string; isActive: boolean };

/** One machine's entry as serialised, with what it was made from. */
interface SerialisedEntry {
  hasMeta: boolean;
  name: string | undefined;
  isActive: boolean | undefined;
  connState: string | undefined;
  connCode: number | undefined;
  connError: string | null | undefined;
  hasTask: boolean;
  status: Record<StatusField, unknown> | undefined;
  errorCode: number | undefined;
  errorMsg: string | undefined;
  state: string | undefined;
  reason: string | undefined;
  statusStale: boolean | undefined;
  /** The entry's JSON, escaped as in a string literal. */
  literal: Buffer;
}

const STATUS_FIELDS: readonly StatusField[] = ['cncStatus', 'adjustedStatus', 'alarmStatus', 'alarmLevel', 'mode', 'programStatus', 'time'];

/** Serialised entries by machineID, for one version of the machine list (which is a new array whenever the fleet changes). */
const entriesByList = new WeakMap<object, Map<string, SerialisedEntry>>();

/** Whether `kept` was made from what makes this entry now (values compared, so a sample changed in place is seen too). */
function unchanged(kept: SerialisedEntry, meta: Meta | undefined, h: ErrorEntry | undefined, t: TaskEntry | undefined): boolean {
  if (kept.hasMeta !== (meta !== undefined) || kept.name !== meta?.name || kept.isActive !== meta?.isActive) return false;
  if (kept.connState !== h?.connection.state || kept.connCode !== h?.connection.errorCode || kept.connError !== h?.connection.error) return false;
  if (kept.hasTask !== (t !== undefined)) return false;
  if (t === undefined) return true;
  if (kept.state !== t.state || kept.reason !== t.reason || kept.statusStale !== t.statusStale) return false;
  const status = t.data?.status;
  if ((kept.status === undefined) !== (status === undefined)) return false;
  if (status) return STATUS_FIELDS.every((f) => kept.status![f] === status[f]);
  return kept.errorCode === t.error?.errorCode && kept.errorMsg === t.error?.errorMsg;
}

function serialise(entry: Record<string, unknown>, meta: Meta | undefined, h: ErrorEntry | undefined, t: TaskEntry | undefined): SerialisedEntry {
  return {
    hasMeta: meta !== undefined,
    name: meta?.name,
    isActive: meta?.isActive,
    connState: h?.connection.state,
    connCode: h?.connection.errorCode,
    connError: h?.connection.error,
    hasTask: t !== undefined,
    // The entry's own copy of the status fields.
    status: entry.status as Record<StatusField, unknown> | undefined,
    errorCode: t?.error?.errorCode,
    errorMsg: t?.error?.errorMsg,
    state: t?.state,
    reason: t?.reason,
    statusStale: t?.statusStale,
    literal: literalContent(JSON.stringify(entry)),
  };
}

/** Row `i` of a section when it is the machine's (the sections list machines in the same order), else found by machineID. */
function rowsOf<R extends { machineID: string }>(rows: R[] | undefined): (i: number, machineID: string) => R | undefined {
  let byID: Map<string, R> | undefined;
  return (i, machineID) => {
    if (!rows) return undefined;
    const row = rows[i];
    if (row?.machineID === machineID) return row;
    byID ??= new Map(rows.map((r) => [r.machineID, r]));
    return byID.get(machineID);
  };
}

const COMMA = Buffer.from(',');

export async function fleetStatus(caller: ToolCaller, groupID: string | undefined): Promise<Record<string, unknown> | SerialisedAnswer> {
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
    caller.section<Meta[]>('/api/config/machines'),
    caller.section<TaskEntry[]>('/api/task/batchReadTaskData', { type: 'CNCStatus', ...filter }),
    caller.section<ErrorEntry[]>('/api/task/batchReadErrors', filter),
  ]);
  if (!machines.ok) errors.machines = machines.message;
  const order = machineIDs ?? (machines.ok ? machines.data.map((m) => m.machineID) : tasks.ok ? tasks.data.map((t) => t.machineID) : health.ok ? health.data.map((h) => h.machineID) : []);
  // The machine list is in order when no group is asked; a group's members are found by machineID.
  const metaOf = rowsOf(machines.ok ? machines.data : undefined);
  const taskOf = rowsOf(tasks.ok ? tasks.data : undefined);
  const healthOf = rowsOf(health.ok ? health.data : undefined);

  /** The entry as the tool defines it (GW-15). */
  const entryOf = (machineID: string, meta: Meta | undefined, h: ErrorEntry | undefined, t: TaskEntry | undefined): Record<string, unknown> => {
    const entry: Record<string, unknown> = { machineID };
    if (meta) Object.assign(entry, { name: meta.name, isActive: meta.isActive });
    entry.connection = health.ok
      ? h
        ? { errorCode: h.connection.errorCode, state: h.connection.state, ...(h.connection.error ? { error: h.connection.error } : {}) }
        : { errorCode: -1, error: 'no connection entry' }
      : { error: health.message };
    if (!tasks.ok) entry.statusError = tasks.message;
    else if (t) {
      const status = t.data?.status;
      if (status) entry.status = Object.fromEntries(STATUS_FIELDS.map((f) => [f, status[f]]));
      else if (t.error) entry.statusError = `${t.error.errorMsg} (errorCode ${t.error.errorCode})`;
      entry.state = t.state;
      entry.reason = t.reason;
      entry.statusStale = t.statusStale;
    }
    return entry;
  };

  // Entries are kept only while every section answers: a failed section's message is in every entry.
  const keepable = machines.ok && tasks.ok && health.ok;
  let kept = keepable ? entriesByList.get(machines.data) : undefined;
  if (keepable && !kept) {
    kept = new Map();
    entriesByList.set(machines.data, kept);
  }
  const summary: Record<string, number> = Object.fromEntries(DERIVED_STATES.map((s) => [s, 0]));
  const literals: Buffer[] = [];
  order.forEach((machineID, i) => {
    const meta = metaOf(i, machineID);
    const h = healthOf(i, machineID);
    const t = taskOf(i, machineID);
    if (t) summary[t.state] = (summary[t.state] ?? 0) + 1;
    let serialised = kept?.get(machineID);
    if (serialised === undefined || !unchanged(serialised, meta, h, t)) {
      serialised = serialise(entryOf(machineID, meta, h, t), meta, h, t);
      kept?.set(machineID, serialised);
    }
    if (i > 0) literals.push(COMMA);
    literals.push(serialised.literal);
  });
  // Serialised as JSON.stringify would the object {groupID?, summary, machines, errors?}.
  const head = { ...(groupID !== undefined ? { groupID } : {}), summary: { total: order.length, ...summary } };
  return new SerialisedAnswer([
    literalContent(`${JSON.stringify(head).slice(0, -1)},"machines":[`),
    ...literals,
    literalContent(Object.keys(errors).length ? `],"errors":${JSON.stringify(errors)}}` : ']}'),
  ]);
}

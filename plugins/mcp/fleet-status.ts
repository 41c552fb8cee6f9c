/**
 * get_fleet_status: merges the machine list, the group (when asked), the
 * cached CNCStatus entries and the connection health into one entry per
 * machine, with counts by derived state. It reads only caches.
 *
 * The three sections are asked through their interfaces, so each is
 * authorised on its own and a forbidden one becomes a `Forbidden:` message
 * in every entry (its statusError or connection.error) while the others
 * still answer. `fleetEntry` is the one place an entry is built (GW-15).
 *
 * The answer is returned as its serialised parts (core/mcp/frozen-answers.ts),
 * byte for byte the JSON of the merged object. The status and health rows the
 * interfaces answer are the same frozen objects until the machine changes
 * (core/roles/gateway/fleet/rows.ts), so an entry built from rows that all
 * answered is serialised once and its text kept beside the status row it was
 * built from; a poll of an unchanged fleet serialises only the summary.
 */
import { DERIVED_STATES } from '../../core/roles/gateway/fleet/derive-state.js';
import type { HealthEntry, ListedMachine, StatusEntry, TaskDataEntry, Changes } from '../../core/roles/gateway/api-outputs.js';
import { CONFIGURATION } from '../../core/roles/gateway/contract/configuration.js';
import { TASK_DATA } from '../../core/roles/gateway/contract/task-data.js';
import { literalContent, SerialisedAnswer } from '../../core/mcp/frozen-answers.js';
import { ToolFailure, type Section, type ToolCaller } from './tool-runtime.js';

type Meta = Pick<ListedMachine, 'machineID' | 'name' | 'isActive'>;

/** Row `i` of a section when it is the machine's (the sections list machines in the same order), else found by machineID. */
function rowsOf<R extends { machineID: string }>(rows: readonly R[] | undefined): (i: number, machineID: string) => R | undefined {
  let byID: Map<string, R> | undefined;
  return (i, machineID) => {
    if (!rows) return undefined;
    const row = rows[i];
    if (row?.machineID === machineID) return row;
    byID ??= new Map(rows.map((r) => [r.machineID, r]));
    return byID.get(machineID);
  };
}

/** A section's entries (a batch read answers an array without sinceRevision). */
const entriesOf = <E>(section: Section<E[] | Changes<E>>): E[] | undefined => (section.ok ? (Array.isArray(section.data) ? section.data : section.data.entries) : undefined);

const isStatus = (t: TaskDataEntry | undefined): t is StatusEntry => t?.type === 'CNCStatus';

type Sections = { machines: Section<Meta[]>; tasks: Section<TaskDataEntry[] | Changes<StatusEntry>>; health: Section<HealthEntry[] | Changes<HealthEntry>> };

/** The status fields a fleet entry carries (GW-15). */
const FLEET_STATUS_FIELDS = ['cncStatus', 'adjustedStatus', 'alarmStatus', 'alarmLevel', 'mode', 'programStatus', 'time'] as const;

/** A machine's entry as the tool defines it (GW-15), from whatever each section gave. */
function fleetEntry(sections: Sections, machineID: string, meta: Meta | undefined, h: HealthEntry | undefined, t: StatusEntry | undefined): Record<string, unknown> {
  const { health, tasks } = sections;
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
    if (status) entry.status = Object.fromEntries(FLEET_STATUS_FIELDS.map((f) => [f, status[f]]));
    else if (t.error) entry.statusError = `${t.error.errorMsg} (errorCode ${t.error.errorCode})`;
    entry.state = t.state;
    entry.reason = t.reason;
    entry.statusStale = t.statusStale;
  }
  return entry;
}

/** The serialised entry built from a status row, with the machine's name and activity and the health row it was built with. */
const serialisedEntries = new WeakMap<StatusEntry, { name: string; isActive: boolean; health: HealthEntry; bytes: Buffer }>();

/** An entry's text as escaped JSON-string-literal content: kept per frozen status row while every section answered and the other two inputs are the same. */
function entryBytes(sections: Sections, machineID: string, meta: Meta | undefined, h: HealthEntry | undefined, t: StatusEntry | undefined): Buffer {
  // Only rows that cannot change in place (the fleet's rows are frozen and replaced on a change) are kept by.
  const keepable = sections.machines.ok && sections.tasks.ok && sections.health.ok && meta !== undefined && h !== undefined && t !== undefined && Object.isFrozen(t) && Object.isFrozen(h);
  if (!keepable) return literalContent(JSON.stringify(fleetEntry(sections, machineID, meta, h, t)));
  const kept = serialisedEntries.get(t);
  if (kept && kept.health === h && kept.name === meta.name && kept.isActive === meta.isActive) return kept.bytes;
  const bytes = literalContent(JSON.stringify(fleetEntry(sections, machineID, meta, h, t)));
  serialisedEntries.set(t, { name: meta.name, isActive: meta.isActive, health: h, bytes });
  return bytes;
}

const COMMA = Buffer.from(',');

export async function fleetStatus(caller: ToolCaller, groupID: string | undefined): Promise<Record<string, unknown> | SerialisedAnswer> {
  const errors: Record<string, string> = {};
  let machineIDs: string[] | undefined;
  if (groupID !== undefined) {
    const group = await caller.section(CONFIGURATION.group, { groupID });
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
    caller.section(CONFIGURATION.machines),
    caller.section(TASK_DATA.batchReadTaskData, { type: 'CNCStatus', ...filter }),
    caller.section(TASK_DATA.batchReadErrors, filter),
  ]);
  const sections: Sections = { machines, tasks, health };
  if (!machines.ok) errors.machines = machines.message;
  const taskRows = entriesOf(tasks);
  const healthRows = entriesOf(health);
  const order = machineIDs ?? (machines.ok ? machines.data : (taskRows ?? healthRows ?? [])).map((m) => m.machineID);
  // The machine list is in order when no group is asked; a group's members are found by machineID.
  const metaOf = rowsOf(machines.ok ? machines.data : undefined);
  const taskOf = rowsOf<TaskDataEntry>(taskRows);
  const healthOf = rowsOf(healthRows);

  const summary: Record<string, number> = Object.fromEntries(DERIVED_STATES.map((s) => [s, 0]));
  const parts: Buffer[] = [];
  order.forEach((machineID, i) => {
    const found = taskOf(i, machineID);
    const t = isStatus(found) ? found : undefined;
    if (t) summary[t.state] = (summary[t.state] ?? 0) + 1;
    if (i > 0) parts.push(COMMA);
    parts.push(entryBytes(sections, machineID, metaOf(i, machineID), healthOf(i, machineID), t));
  });
  // Serialised as JSON.stringify would the object {groupID?, summary, machines, errors?}.
  const head = { ...(groupID !== undefined ? { groupID } : {}), summary: { total: order.length, ...summary } };
  return new SerialisedAnswer([
    literalContent(`${JSON.stringify(head).slice(0, -1)},"machines":[`),
    ...parts,
    literalContent(Object.keys(errors).length ? `],"errors":${JSON.stringify(errors)}}` : ']}'),
  ]);
}

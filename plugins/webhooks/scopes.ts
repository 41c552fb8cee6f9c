/**
 * A webhook's scopes (PV-54): an endpoint carries the libraries and machine
 * groups of the administrator who made it, receives only the events about
 * objects within them, and is seen and managed (listed, its deliveries read)
 * only by callers whose own scopes cover them. An event is about a library
 * (version.published) or about a machine (the rest), and is within scopes as
 * that object is seen at its own endpoint: a library by its id, a machine by
 * the groups it belongs to when the event is raised.
 * docs/programs-webhooks.md, "Scopes".
 */
import { scopesWithin, type Scopes } from '../../core/rest/scopes.js';
import type { WriteTx } from '../../core/store/database.js';
import type { WebhookEvent } from './events.js';

/** What an event is about: the object whose scope decides who receives it; null when its data names neither. */
export type Subject = { libraryId: string } | { machineId: string } | null;

/** The field of each event's data naming the library or machine it is about. */
const SUBJECT_FIELD: Readonly<Record<WebhookEvent, 'libraryId' | 'machineId'>> = {
  'deployment.completed': 'machineId', 'deployment.failed': 'machineId', 'version.published': 'libraryId',
  'trial.started': 'machineId', 'trial.promoted': 'machineId', 'trial.pulled-back': 'machineId', 'drift.opened': 'machineId',
};

/** What an event is about, from its data. */
export function subjectOf(event: WebhookEvent, data: Record<string, unknown>): Subject {
  const field = SUBJECT_FIELD[event];
  const id = data[field];
  if (typeof id !== 'string') return null;
  return field === 'libraryId' ? { libraryId: id } : { machineId: id };
}

/** The machine-group memberships of machines, read in the transaction that raises their events. */
export type MachineGroups = ReadonlyMap<string, readonly string[]>;

/** Whether an endpoint of `scopes` receives an event about `subject`. */
export function receives(scopes: Scopes, subject: Subject, groupsOf: MachineGroups): boolean {
  if (scopes.libraries === '*' && scopes.machineGroups === '*') return true;
  if (subject === null) return false;
  if ('libraryId' in subject) return scopes.libraries === '*' || scopes.libraries.includes(subject.libraryId);
  const own = scopes.machineGroups;
  return own === '*' || (groupsOf.get(subject.machineId) ?? []).some((g) => own.includes(g));
}

/**
 * The groups of the machines the events are about, when an endpoint is limited to some groups (else
 * nothing is read). The fleet's membership table is read in the raising transaction, so an event is
 * judged by the groups as they were when it happened; without the fleet (no gateways plugin) no
 * machine is in any group.
 */
export async function machineGroupsFor(tx: WriteTx, subjects: readonly Subject[], endpoints: readonly { scopes: Scopes }[], fleet: boolean): Promise<MachineGroups> {
  const machineIds = [...new Set(subjects.flatMap((s) => (s && 'machineId' in s ? [s.machineId] : [])))];
  if (!fleet || machineIds.length === 0 || endpoints.every((w) => w.scopes.machineGroups === '*')) return new Map();
  const rows = await tx.all<{ machine_id: string; group_id: string }>(`SELECT machine_id, group_id FROM fleet_group_members WHERE machine_id IN (${tx.dialect.textsOf})`, [JSON.stringify(machineIds)]);
  const groups = new Map<string, string[]>();
  for (const r of rows) groups.set(r.machine_id, [...(groups.get(r.machine_id) ?? []), r.group_id]);
  return groups;
}

/** The ids of the endpoints among `endpoints` whose scopes lie within `own`: what a caller of `own` sees and manages. */
export function endpointsWithin(endpoints: readonly { id: string; scopes: Scopes }[], own: Scopes): string[] {
  return endpoints.filter((w) => scopesWithin(w.scopes, own)).map((w) => w.id);
}

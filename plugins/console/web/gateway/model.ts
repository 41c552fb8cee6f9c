/**
 * The fleet as the fleet page shows it, merged from the gateway's fleet
 * interfaces: the machine list, the cached CNCStatus of every machine (state,
 * reason, stale flag, program, alarms), connection health, and the cached
 * part count. An entry keeps its identity while nothing in it changed, so
 * that only the tiles of machines that changed are drawn again.
 */
import type { HealthEntry, ListedMachine, StatusEntry } from '../../../../core/roles/gateway/api-outputs.js';
import type { DerivedStateName } from '../../../../core/roles/gateway/fleet/derive-state.js';
import type { GroupConfig } from '../../../../core/roles/gateway/machine-config.js';

export type { StatusEntry };

/** The derived states in the order the page counts them; every state the gateway derives is here (checked below). */
export const STATES = ['running', 'idle', 'alarm', 'setup', 'offline', 'noData', 'inactive'] as const satisfies readonly DerivedStateName[];
export type State = (typeof STATES)[number];
const everyState: [DerivedStateName] extends [State] ? true : false = true;
void everyState;

export const STATE_LABEL: Record<State, string> = {
  running: 'Running', idle: 'Idle', alarm: 'Alarm', setup: 'Setup', offline: 'Offline', noData: 'No data', inactive: 'Inactive',
};

/** What a tile shows of a machine's configuration (GET /api/config/machines). */
export type MachineMeta = Pick<ListedMachine, 'machineID' | 'name' | 'system' | 'model' | 'machineType' | 'isActive'>;
export type Group = Pick<GroupConfig, 'groupID' | 'name' | 'machineIDs'>;
/** A machine's connection health (GET /api/task/batchReadErrors). */
export type ErrorEntry = Pick<HealthEntry, 'machineID' | 'connection'>;
/** A Count entry of batchReadTaskData: the contract leaves a class's sample open, so the page reads the counters it shows defensively. */
export interface CountEntry {
  machineID: string;
  data: { partCount?: number; partsRequired?: number } | null;
}

export interface Tile {
  machineID: string;
  name: string;
  model: string;
  state: State;
  reason: string;
  stale: boolean;
  connection: string;
  connectionError: string | null;
  program: string | null;
  parts: number | null;
  partsRequired: number | null;
  alarms: number;
  alarmText: string | null;
  sampledAt: number | null;
}

const same = (a: Tile, b: Tile) =>
  a.name === b.name && a.model === b.model && a.state === b.state && a.reason === b.reason && a.stale === b.stale && a.connection === b.connection &&
  a.connectionError === b.connectionError && a.program === b.program && a.parts === b.parts && a.partsRequired === b.partsRequired &&
  a.alarms === b.alarms && a.alarmText === b.alarmText;

/** One machine's tile from its list entry and its latest entries. */
function tileOf(m: MachineMeta, s: StatusEntry | undefined, e: ErrorEntry | undefined, c: CountEntry | undefined): Tile {
  const alarms = s?.data?.alarms ?? [];
  return {
    machineID: m.machineID,
    name: m.name,
    model: [m.system, m.model].filter(Boolean).join(' '),
    state: m.isActive ? (s?.state ?? 'noData') : 'inactive',
    reason: m.isActive ? (s?.reason ?? 'no status sample yet') : 'inactive: switched off in the configuration',
    stale: s?.statusStale ?? false,
    connection: e?.connection.state ?? 'unknown',
    connectionError: e?.connection.error ?? null,
    program: s?.data?.status?.program ?? null,
    parts: c?.data?.partCount ?? null,
    partsRequired: c?.data?.partsRequired ?? null,
    alarms: alarms.length,
    alarmText: alarms[0] ? `${alarms[0].code} ${alarms[0].message}`.trim() : null,
    sampledAt: s?.time ?? null,
  };
}

/** The latest entries of each machine, by machineID. */
export interface FleetEntries {
  status: ReadonlyMap<string, StatusEntry>;
  errors: ReadonlyMap<string, ErrorEntry>;
  counts: ReadonlyMap<string, CountEntry>;
}

/**
 * New tiles in the order of the machine list, reusing the previous object of
 * every machine whose tile did not change. With `only`, the tiles of the
 * other machines are not looked at again: the caller knows they did not
 * change (the gateway answered only the entries changed since its last poll).
 */
export function mergeTiles(previous: ReadonlyMap<string, Tile>, machines: readonly MachineMeta[], entries: FleetEntries, only?: ReadonlySet<string>): Map<string, Tile> {
  const next = new Map<string, Tile>();
  for (const m of machines) {
    const before = previous.get(m.machineID);
    if (before && only && !only.has(m.machineID)) {
      next.set(m.machineID, before);
      continue;
    }
    const tile = tileOf(m, entries.status.get(m.machineID), entries.errors.get(m.machineID), entries.counts.get(m.machineID));
    next.set(m.machineID, before && same(before, tile) ? before : tile);
  }
  return next;
}

export function countByState(tiles: Iterable<Tile>): Record<State, number> {
  const counts = Object.fromEntries(STATES.map((s) => [s, 0])) as Record<State, number>;
  for (const t of tiles) counts[t.state]++;
  return counts;
}

/**
 * A derived state's reason in plant words, for a tile: `running: executing
 * (adjustedStatus=RUNNING, mode=AUTO, alarmLevel=none)` is "Running a
 * program". The raw reason stays on the tile's title and on the machine page.
 */
export function plantWords(reason: string): string {
  const [kind = '', rest = ''] = reason.split(/:\s*/, 2);
  if (kind === 'running') return 'Running a program';
  if (kind === 'idle') return 'Not running a program';
  if (kind === 'setup') return 'Manual mode, not running';
  if (kind === 'alarm') return rest.startsWith('emergency stop') ? 'Emergency stop pressed' : 'An alarm is active';
  if (kind === 'offline') return 'No connection to the controller';
  if (kind === 'inactive') return 'Switched off in the configuration';
  if (kind === 'noData') return rest.startsWith('CNCStatus task not enabled') ? 'Status is not read (its task is off)' : 'No status read yet';
  return reason.replace(/\s*\(.*$/, '');
}

/**
 * The fleet as the dashboard shows it, merged from the gateway's fleet
 * interfaces: the machine list, the cached CNCStatus of every machine (state,
 * reason, stale flag, program, alarms), connection health, and the cached
 * part count. An entry keeps its identity while nothing in it changed, so
 * that only the tiles of machines that changed are drawn again.
 */
export const STATES = ['running', 'idle', 'alarm', 'setup', 'offline', 'noData', 'inactive'] as const;
export type State = (typeof STATES)[number];

export const STATE_LABEL: Record<State, string> = {
  running: 'Running', idle: 'Idle', alarm: 'Alarm', setup: 'Setup', offline: 'Offline', noData: 'No data', inactive: 'Inactive',
};

export interface MachineMeta {
  machineID: string;
  name: string;
  system: string;
  model: string;
  machineType: string;
  isActive: boolean;
}
export interface Group {
  groupID: string;
  name: string;
  machineIDs: string[];
}
export interface StatusEntry {
  machineID: string;
  time: number | null;
  data: { status?: { program?: string; mode?: string; alarmLevel?: string; adjustedStatus?: string }; alarms?: { number?: string | number; message?: string; level?: string }[] } | null;
  error: { errorCode: number; errorMsg: string } | null;
  state: State;
  reason: string;
  statusStale: boolean;
}
export interface ErrorEntry {
  machineID: string;
  connection: { state: string; since: number | null; attempts: number; errorCode: number; error: string | null };
}
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

/** New tiles, reusing the previous object of every machine whose tile did not change. */
export function mergeTiles(previous: ReadonlyMap<string, Tile>, machines: MachineMeta[], status: StatusEntry[], errors: ErrorEntry[], counts: CountEntry[]): Map<string, Tile> {
  const byStatus = new Map(status.map((s) => [s.machineID, s]));
  const byError = new Map(errors.map((e) => [e.machineID, e]));
  const byCount = new Map(counts.map((c) => [c.machineID, c]));
  const next = new Map<string, Tile>();
  for (const m of machines) {
    const s = byStatus.get(m.machineID);
    const e = byError.get(m.machineID);
    const c = byCount.get(m.machineID);
    const alarms = s?.data?.alarms ?? [];
    const tile: Tile = {
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
      alarmText: alarms[0] ? `${alarms[0].number ?? ''} ${alarms[0].message ?? ''}`.trim() : null,
      sampledAt: s?.time ?? null,
    };
    const before = previous.get(m.machineID);
    next.set(m.machineID, before && same(before, tile) ? before : tile);
  }
  return next;
}

export function countByState(tiles: Iterable<Tile>): Record<State, number> {
  const counts = Object.fromEntries(STATES.map((s) => [s, 0])) as Record<State, number>;
  for (const t of tiles) counts[t.state]++;
  return counts;
}

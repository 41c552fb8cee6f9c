/**
 * The fleet page's polling, off the page's main thread: a dedicated worker
 * fetches the fleet interfaces, merges them into tiles, and posts only the
 * tiles that changed. The page's main thread then only draws those, so it
 * stays responsive however large the fleet.
 *
 * The two per-second reads ask only for what changed since the revision of
 * their last answer (`sinceRevision`, docs/api.md), so a fleet where little
 * happens costs little to poll, and only the machines in the answers are
 * merged again. The machine list is fetched again when an answer is `full`,
 * names a removed machine or one the list does not have, and every 5 minutes.
 *
 * Messages in: {type:'token', token}, {type:'pause'|'resume'}.
 * Messages out: {type:'tiles', changed, removed, total, updatedAt},
 * {type:'machines', groups}, {type:'auth'} (a 401: send a new token),
 * {type:'error', message}.
 */
import type { EntryOutput, InterfaceEntry } from '../../../../core/interfaces/registry.js';
import type { Changes } from '../../../../core/roles/gateway/api-outputs.js';
import type { CONFIGURATION } from '../../../../core/roles/gateway/contract/configuration.js';
import type { TASK_DATA } from '../../../../core/roles/gateway/contract/task-data.js';
import { mergeTiles, type CountEntry, type ErrorEntry, type MachineMeta, type StatusEntry, type Tile } from './model.js';

declare const self: { onmessage: ((e: { data: { type: string; token?: string } }) => void) | null; postMessage(message: unknown): void };

/** The latest entries of one batch read, and the revision to ask from next. */
class Held<E extends { machineID: string }> {
  readonly byID = new Map<string, E>();
  revision = 0;

  /** Takes an answer in, noting the machines it names; true when the machine list may have changed. */
  apply(answer: Changes<E>, touched: Set<string>): boolean {
    if (answer.full) this.byID.clear();
    for (const entry of answer.entries) {
      this.byID.set(entry.machineID, entry);
      touched.add(entry.machineID);
    }
    for (const id of answer.removed) {
      this.byID.delete(id);
      touched.add(id);
    }
    this.revision = answer.revision;
    return answer.full || answer.removed.length > 0;
  }
}

let token: string | null = null;
/** Until the page's first message (its token, possibly none), and after a 401 until the page sends a new token. */
let blocked = true;
let paused = false;
let tiles = new Map<string, Tile>();
let meta: MachineMeta[] | null = null;
let listed = new Set<string>();
let metaAt = 0;
const status = new Held<StatusEntry>();
const errors = new Held<ErrorEntry>();
let counts = new Map<string, CountEntry>();
let countsAt = 0;
let wake: (() => void) | null = null;

class Unauthorized extends Error {}

/** Reads the interface of entry `E` (its path, with a query already in it), answering its output type. */
async function get<E extends InterfaceEntry>(path: E['path'] | `${E['path']}?${string}`): Promise<EntryOutput<E>> {
  const response = await fetch(path, { headers: token ? { authorization: `Bearer ${token}` } : {} });
  if (response.status === 401) throw new Unauthorized();
  const json = (await response.json()) as { errorCode: number; errorMsg: string; data: EntryOutput<E> };
  if (json.errorCode !== 0) throw new Error(json.errorMsg);
  return json.data;
}

async function fetchMachines(now: number): Promise<MachineMeta[]> {
  const [m, g] = await Promise.all([get<typeof CONFIGURATION.machines>('/api/config/machines'), get<typeof CONFIGURATION.groups>('/api/config/groups')]);
  meta = m;
  listed = new Set(m.map((x) => x.machineID));
  metaAt = now;
  self.postMessage({ type: 'machines', groups: g, count: m.length });
  return m;
}

/** The part counts (every 5 seconds), noting the machines whose count changed. */
async function fetchCounts(touched: Set<string>): Promise<void> {
  const list = await get<typeof TASK_DATA.batchReadTaskData>('/api/task/batchReadTaskData?type=Count').then((answer) => (Array.isArray(answer) ? (answer as CountEntry[]) : [])).catch((err: unknown) => {
    if (err instanceof Unauthorized) throw err;
    return null;
  });
  if (!list) return;
  const next = new Map(list.map((c) => [c.machineID, c]));
  for (const [id, c] of next) {
    const before = counts.get(id);
    if (before?.data?.partCount !== c.data?.partCount || before?.data?.partsRequired !== c.data?.partsRequired) touched.add(id);
  }
  counts = next;
}

async function poll(): Promise<void> {
  const now = Date.now();
  // The machine list is large and rarely changes: every 5 minutes, or at once when an answer says it changed.
  let listFetched = false;
  let machines = meta;
  if (!machines || now - metaAt > 300_000) {
    machines = await fetchMachines(now);
    listFetched = true;
  }
  const touched = new Set<string>();
  if (now - countsAt > 5000) {
    await fetchCounts(touched);
    countsAt = now;
  }
  const [s, e] = await Promise.all([
    // With sinceRevision the answers are the changes of CNCStatus entries and of health entries.
    get<typeof TASK_DATA.batchReadTaskData>(`/api/task/batchReadTaskData?type=CNCStatus&sinceRevision=${status.revision}`) as Promise<Changes<StatusEntry>>,
    get<typeof TASK_DATA.batchReadErrors>(`/api/task/batchReadErrors?sinceRevision=${errors.revision}`) as Promise<Changes<ErrorEntry>>,
  ]);
  const statusRelist = status.apply(s, touched);
  const errorsRelist = errors.apply(e, touched);
  const unknown = [...touched].some((id) => !listed.has(id));
  if (!listFetched && (statusRelist || errorsRelist || unknown)) {
    machines = await fetchMachines(now);
    listFetched = true;
  }
  // A new list or a full answer: every tile is looked at again; otherwise only those of the machines named.
  const next = mergeTiles(tiles, machines, { status: status.byID, errors: errors.byID, counts }, listFetched ? undefined : touched);
  const changed: Tile[] = [];
  for (const [id, t] of next) if (tiles.get(id) !== t) changed.push(t);
  const removed = [...tiles.keys()].filter((id) => !next.has(id));
  tiles = next;
  self.postMessage({ type: 'tiles', changed, removed, order: changed.length || removed.length ? [...next.keys()] : null, updatedAt: Date.now() });
}

async function loop(): Promise<void> {
  for (;;) {
    if (paused || blocked) {
      await new Promise<void>((resolve) => (wake = resolve));
      continue;
    }
    try {
      await poll();
    } catch (err) {
      if (err instanceof Unauthorized) {
        blocked = true;
        self.postMessage({ type: 'auth' });
        continue;
      }
      self.postMessage({ type: 'error', message: err instanceof Error ? err.message : 'The gateway could not be reached; retrying.' });
    }
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
}

self.onmessage = (e) => {
  if (e.data.type === 'token') {
    token = e.data.token ?? null;
    blocked = false;
  }
  else if (e.data.type === 'pause') paused = true;
  else if (e.data.type === 'resume') paused = false;
  const w = wake;
  wake = null;
  w?.();
};

void loop();

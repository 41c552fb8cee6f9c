/**
 * The fleet dashboard's polling, off the page's main thread: a dedicated
 * worker fetches the fleet interfaces (some hundred kilobytes a second with
 * 1,000 machines), parses and merges them into tiles, and posts only the
 * tiles that changed. The page's main thread then only draws those, so it
 * stays responsive however large the fleet.
 *
 * Messages in: {type:'token', token}, {type:'pause'|'resume'}.
 * Messages out: {type:'tiles', changed, removed, total, updatedAt},
 * {type:'machines', groups}, {type:'auth'} (a 401: send a new token),
 * {type:'error', message}.
 */
import { mergeTiles, type CountEntry, type ErrorEntry, type Group, type MachineMeta, type StatusEntry, type Tile } from './model.js';

declare const self: { onmessage: ((e: { data: { type: string; token?: string } }) => void) | null; postMessage(message: unknown): void };

let token: string | null = null;
/** Until the page's first message (its token, possibly none), and after a 401 until the page sends a new token. */
let blocked = true;
let paused = false;
let tiles = new Map<string, Tile>();
let meta: MachineMeta[] | null = null;
let metaAt = 0;
let counts: CountEntry[] = [];
let countsAt = 0;
let wake: (() => void) | null = null;

class Unauthorized extends Error {}

async function get<T>(path: string): Promise<T> {
  const response = await fetch(path, { headers: token ? { authorization: `Bearer ${token}` } : {} });
  if (response.status === 401) throw new Unauthorized();
  const json = (await response.json()) as { errorCode: number; errorMsg: string; data: T };
  if (json.errorCode !== 0) throw new Error(json.errorMsg);
  return json.data;
}

async function poll(): Promise<void> {
  const now = Date.now();
  // The machine list is large and rarely changes: every 5 minutes, or at once when the fleet's size changes.
  if (!meta || now - metaAt > 300_000) {
    const [m, g] = await Promise.all([get<MachineMeta[]>('/api/config/machines'), get<Group[]>('/api/config/groups')]);
    meta = m;
    metaAt = now;
    self.postMessage({ type: 'machines', groups: g, count: m.length });
  }
  if (now - countsAt > 5000) {
    counts = await get<CountEntry[]>('/api/task/batchReadTaskData?type=Count').catch((err: unknown) => {
      if (err instanceof Unauthorized) throw err;
      return counts;
    });
    countsAt = now;
  }
  const [status, errors] = await Promise.all([get<StatusEntry[]>('/api/task/batchReadTaskData?type=CNCStatus'), get<ErrorEntry[]>('/api/task/batchReadErrors')]);
  if (status.length !== meta.length) metaAt = 0;
  const next = mergeTiles(tiles, meta, status, errors, counts);
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

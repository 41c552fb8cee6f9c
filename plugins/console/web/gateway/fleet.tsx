/**
 * The fleet page: every machine as a tile with its derived state and
 * reason, connection health and stale flag, running program, part count and
 * active alarms; counts by state (each one filters); a group filter and a
 * search. A worker (fleet-worker.ts) polls the fleet interfaces every
 * second; a tile is drawn again only when its machine changed.
 */
import { memo } from 'preact/compat';
import { useEffect, useMemo, useState } from 'preact/hooks';
import { currentToken, onAuthRequired, reauthenticate } from '../shared/api.js';
import { countByState, plantWords, STATE_LABEL, STATES, type Group, type State, type Tile } from './model.js';

const TileView = memo(function TileView({ tile }: { tile: Tile }) {
  return (
    <li class={`tile state-${tile.state}${tile.stale ? ' stale' : ''}`} data-machine={tile.machineID} data-state={tile.state}>
      <a href={`#/machine/${encodeURIComponent(tile.machineID)}`}>
        <span class="tile-head">
          <span class="tile-name">{tile.name}</span>
          <span class="badge">{STATE_LABEL[tile.state]}</span>
        </span>
        <span class="tile-id">{tile.machineID} · {tile.model || 'controller unknown'}</span>
        <span class="tile-reason" title={tile.reason} data-reason={tile.reason}>{plantWords(tile.reason)}</span>
        <span class="tile-facts">
          <span>Program <b>{tile.program ?? '—'}</b></span>
          <span>Parts <b>{tile.parts ?? '—'}{tile.partsRequired ? ` / ${tile.partsRequired}` : ''}</b></span>
        </span>
        {tile.alarms > 0 && <span class="tile-alarm">{tile.alarms} alarm{tile.alarms > 1 ? 's' : ''}: {tile.alarmText}</span>}
        {(tile.stale || tile.connection !== 'online') && (
          <span class="tile-health">{tile.connection !== 'online' ? `Connection ${tile.connection}${tile.connectionError ? `: ${tile.connectionError}` : ''}` : ''}{tile.stale ? ' Status is stale.' : ''}</span>
        )}
      </a>
    </li>
  );
});

/** The worker's script, named by the page (its file name changes with its content). */
function workerUrl(): string {
  return document.querySelector('meta[name="console-worker-fleet"]')?.getAttribute('content') ?? '';
}

/** The fleet as the worker (fleet-worker.ts) posts it: polling, parsing and merging run there; the page only applies the tiles that changed. */
function useFleetWorker() {
  const [groups, setGroups] = useState<Group[]>([]);
  const [machineCount, setMachineCount] = useState<number | null>(null);
  const [tiles, setTiles] = useState<Map<string, Tile>>(new Map());
  const [error, setError] = useState<string | null>(null);
  const [updatedAt, setUpdatedAt] = useState<number | null>(null);
  useEffect(() => {
    const worker = new Worker(workerUrl(), { type: 'module', name: 'fleet' });
    worker.onmessage = (e: MessageEvent<{ type: string; changed?: Tile[]; removed?: string[]; order?: string[] | null; updatedAt?: number; groups?: Group[]; count?: number; message?: string }>) => {
      const m = e.data;
      if (m.type === 'tiles') {
        if (m.changed?.length || m.removed?.length) {
          setTiles((previous) => {
            const byId = new Map(previous);
            for (const id of m.removed ?? []) byId.delete(id);
            for (const t of m.changed ?? []) byId.set(t.machineID, t);
            // The worker's order (the machine list's) when it sent one.
            return m.order ? new Map(m.order.filter((id) => byId.has(id)).map((id) => [id, byId.get(id) as Tile])) : byId;
          });
        }
        setUpdatedAt(m.updatedAt ?? Date.now());
        setError(null);
      } else if (m.type === 'machines') {
        setGroups(m.groups ?? []);
        setMachineCount(m.count ?? 0);
      } else if (m.type === 'auth') {
        void reauthenticate().then((token) => worker.postMessage({ type: 'token', token }));
      } else if (m.type === 'error') {
        setError(m.message ?? 'The gateway could not be reached; retrying.');
      }
    };
    worker.postMessage({ type: 'token', token: currentToken() });
    // A login made elsewhere (the dialog after another call's 401) reaches the worker too.
    const off = onAuthRequired((needed) => {
      if (!needed) worker.postMessage({ type: 'token', token: currentToken() });
    });
    const onVisible = () => worker.postMessage({ type: document.hidden ? 'pause' : 'resume' });
    document.addEventListener('visibilitychange', onVisible);
    return () => {
      off();
      document.removeEventListener('visibilitychange', onVisible);
      worker.terminate();
    };
  }, []);
  return { groups, machineCount, tiles, error, updatedAt };
}

export function Fleet() {
  const { groups, machineCount, tiles, error, updatedAt } = useFleetWorker();
  const [groupID, setGroupID] = useState('');
  const [stateFilter, setStateFilter] = useState<State | ''>('');
  const [search, setSearch] = useState('');

  const members = useMemo(() => (groupID ? new Set(groups.find((g) => g.groupID === groupID)?.machineIDs ?? []) : null), [groupID, groups]);
  const inGroup = useMemo(() => [...tiles.values()].filter((t) => !members || members.has(t.machineID)), [tiles, members]);
  const summary = useMemo(() => countByState(inGroup), [inGroup]);
  const needle = search.trim().toLowerCase();
  const shown = inGroup.filter((t) => (!stateFilter || t.state === stateFilter) && (!needle || t.machineID.toLowerCase().includes(needle) || t.name.toLowerCase().includes(needle) || (t.program ?? '').toLowerCase().includes(needle)));

  return (
    <main id="main">
      <header class="page-head">
        <h1>Fleet</h1>
        <p class="updated" aria-live="polite">
          {error ? <span class="error">{error}</span> : updatedAt ? `${inGroup.length} machines · updated ${new Date(updatedAt).toLocaleTimeString()}` : 'Loading…'}
        </p>
      </header>
      <section aria-label="Machines by state" class="summary">
        <button type="button" class={`count all${stateFilter === '' ? ' selected' : ''}`} aria-pressed={stateFilter === ''} onClick={() => setStateFilter('')}>
          <span class="count-n">{inGroup.length}</span> All
        </button>
        {STATES.map((s) => (
          <button type="button" key={s} class={`count state-${s}${stateFilter === s ? ' selected' : ''}`} aria-pressed={stateFilter === s} data-count={s} onClick={() => setStateFilter(stateFilter === s ? '' : s)}>
            <span class="count-n">{summary[s]}</span> {STATE_LABEL[s]}
          </button>
        ))}
      </section>
      <section class="filters" aria-label="Filters">
        <label>Group{' '}
          <select value={groupID} onChange={(e) => setGroupID(e.currentTarget.value)}>
            <option value="">All machines</option>
            {groups.map((g) => <option key={g.groupID} value={g.groupID}>{g.name} ({g.machineIDs.length})</option>)}
          </select>
        </label>
        <label>Search{' '}
          <input type="search" value={search} placeholder="Machine, name or program" onInput={(e) => setSearch(e.currentTarget.value)} />
        </label>
      </section>
      {machineCount === 0 && <p>No machines are configured on this gateway.</p>}
      <ul class="tiles" aria-label="Machines">
        {shown.map((t) => <TileView key={t.machineID} tile={t} />)}
      </ul>
    </main>
  );
}

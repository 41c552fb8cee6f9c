/**
 * The fleet dashboard: every machine as a tile with its derived state and
 * reason, connection health and stale flag, running program, part count and
 * active alarms; counts by state (each one filters); a group filter and a
 * search. Polls the fleet interfaces every second; a tile is drawn again only
 * when its machine changed.
 */
import { memo } from 'preact/compat';
import { useMemo, useRef, useState } from 'preact/hooks';
import { api, ApiError } from '../shared/api.js';
import { usePoll } from '../shared/poll.js';
import { countByState, mergeTiles, STATE_LABEL, STATES, type CountEntry, type ErrorEntry, type Group, type MachineMeta, type State, type StatusEntry, type Tile } from './model.js';

const TileView = memo(function TileView({ tile }: { tile: Tile }) {
  return (
    <li class={`tile state-${tile.state}${tile.stale ? ' stale' : ''}`} data-machine={tile.machineID} data-state={tile.state}>
      <a href={`#/machine/${encodeURIComponent(tile.machineID)}`}>
        <span class="tile-head">
          <span class="tile-name">{tile.name}</span>
          <span class="badge">{STATE_LABEL[tile.state]}</span>
        </span>
        <span class="tile-id">{tile.machineID} · {tile.model || 'controller unknown'}</span>
        <span class="tile-reason" title={tile.reason}>{tile.reason}</span>
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

export function Fleet() {
  const [machines, setMachines] = useState<MachineMeta[] | null>(null);
  const [groups, setGroups] = useState<Group[]>([]);
  const [tiles, setTiles] = useState<Map<string, Tile>>(new Map());
  const [error, setError] = useState<string | null>(null);
  const [updatedAt, setUpdatedAt] = useState<number | null>(null);
  const [groupID, setGroupID] = useState('');
  const [stateFilter, setStateFilter] = useState<State | ''>('');
  const [search, setSearch] = useState('');
  const counts = useRef<CountEntry[]>([]);
  const countsAt = useRef(0);
  const metaAt = useRef(0);
  const meta = useRef<MachineMeta[] | null>(null);

  usePoll(async () => {
    try {
      const now = Date.now();
      if (!meta.current || now - metaAt.current > 30_000) {
        const [m, g] = await Promise.all([api.get<MachineMeta[]>('/api/config/machines'), api.get<Group[]>('/api/config/groups')]);
        meta.current = m;
        metaAt.current = now;
        setMachines(m);
        setGroups(g);
      }
      if (now - countsAt.current > 5000) {
        counts.current = await api.get<CountEntry[]>('/api/task/batchReadTaskData', { type: 'Count' }).catch(() => counts.current);
        countsAt.current = now;
      }
      const [status, errors] = await Promise.all([
        api.get<StatusEntry[]>('/api/task/batchReadTaskData', { type: 'CNCStatus' }),
        api.get<ErrorEntry[]>('/api/task/batchReadErrors'),
      ]);
      setTiles((previous) => mergeTiles(previous, meta.current ?? [], status, errors, counts.current));
      setUpdatedAt(Date.now());
      setError(null);
    } catch (err) {
      setError(err instanceof ApiError ? err.message : 'The gateway could not be reached; retrying.');
      throw err;
    }
  }, 1000);

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
      {machines !== null && machines.length === 0 && <p>No machines are configured on this gateway.</p>}
      <ul class="tiles" aria-label="Machines">
        {shown.map((t) => <TileView key={t.machineID} tile={t} />)}
      </ul>
    </main>
  );
}

/**
 * One machine: live status with its reason, active alarms, the running
 * program, part count and tool life (polled), and for a chosen window
 * (today, yesterday, last 7 days) the timeline of derived states and the
 * time per state, SEMI E10 bucket and OEE, drawn as SVG charts with a table
 * beside each, from the gateway's history and analysis interfaces.
 */
import { useEffect, useState } from 'preact/hooks';
import { api, ApiError } from '../shared/api.js';
import { usePoll } from '../shared/poll.js';
import type { EntryOutput } from '../../../../core/interfaces/registry.js';
import type { CONFIGURATION } from '../../../../core/roles/gateway/contract/configuration.js';
import type { LIVE_READS } from '../../../../core/roles/gateway/contract/live-reads.js';
import type { TASK_DATA } from '../../../../core/roles/gateway/contract/task-data.js';
import { STATE_LABEL, STATES, type State, type StatusEntry } from './model.js';

type Alarm = EntryOutput<typeof LIVE_READS.readAlarm>['alarms'][number];
type Count = EntryOutput<typeof LIVE_READS.readCount>;
type ToolLife = EntryOutput<typeof LIVE_READS.readToolLife>;
interface Overall {
  timeSec: number;
  stateTimeSec: Record<State, number>;
  e10TimeSec: Record<string, number>;
  oee: { availability: number | null; performance: number | null; quality: number | null; oee: number | null };
  count: { totalCount: number };
}
interface StateRow { time: number; data: { state: State; reason: string } }

const WINDOWS = {
  today: { label: 'Today', start: 'today', end: undefined },
  yesterday: { label: 'Yesterday', start: 'yesterday', end: 'today' },
  week: { label: 'Last 7 days', start: '-7d', end: undefined },
} as const;
type WindowKey = keyof typeof WINDOWS;

const E10_LABEL: Record<string, string> = {
  productive: 'Productive', standby: 'Standby', engineering: 'Engineering', scheduledDowntime: 'Scheduled downtime', unscheduledDowntime: 'Unscheduled downtime', nonScheduled: 'Non-scheduled',
};

const pct = (v: number | null | undefined) => (v === null || v === undefined ? '—' : `${(v * 100).toFixed(1)} %`);
const hours = (sec: number) => (sec >= 3600 ? `${(sec / 3600).toFixed(1)} h` : sec >= 60 ? `${Math.round(sec / 60)} min` : `${Math.round(sec)} s`);

function Timeline({ rows, from, to }: { rows: StateRow[]; from: number; to: number }) {
  const width = 1000;
  const span = Math.max(1, to - from);
  const bands = rows.map((r, i) => {
    const start = Math.max(from, r.time);
    const end = Math.min(to, rows[i + 1]?.time ?? to);
    // At least 2 of 1000 units, so a short state is still seen.
    return { state: r.data.state, x: ((start - from) / span) * width, w: Math.max(2, ((end - start) / span) * width) };
  }).filter((b) => b.w > 0);
  return (
    <svg class="timeline" viewBox={`0 0 ${width} 40`} preserveAspectRatio="none" role="img" aria-label={`State timeline with ${rows.length} changes`}>
      {bands.map((b, i) => <rect key={i} class={`fill-${b.state}`} x={b.x} y={0} width={b.w} height={40}><title>{STATE_LABEL[b.state]}</title></rect>)}
    </svg>
  );
}

function Bars({ parts, labels }: { parts: Record<string, number>; labels: Record<string, string> }) {
  const total = Object.values(parts).reduce((a, b) => a + b, 0) || 1;
  let x = 0;
  return (
    <svg class="bars" viewBox="0 0 1000 24" preserveAspectRatio="none" role="img" aria-label="Share of the window">
      {Object.entries(parts).filter(([, v]) => v > 0).map(([k, v]) => {
        const w = (v / total) * 1000;
        const rect = <rect key={k} class={`fill-${k}`} x={x} y={0} width={w} height={24}><title>{`${labels[k] ?? k}: ${hours(v)}`}</title></rect>;
        x += w;
        return rect;
      })}
    </svg>
  );
}

/** The live cards: status with its reason, program and parts, active alarms, tool life. */
function LiveCards({ status, count, alarms, tools }: { status: StatusEntry | null; count: Count | null; alarms: Alarm[]; tools: ToolLife | null }) {
  const s = status?.data?.status;
  return (
    <section class="cards" aria-label="Live status">
      <div class="card">
        <h2>Status</h2>
        <p class="reason" data-testid="reason">{status?.reason ?? 'No status sample yet.'}</p>
        {status?.statusStale && <p class="warn">The status is stale: the last sample is older than its interval allows.</p>}
        <dl>
          <dt>Mode</dt><dd>{s?.mode ?? '—'}</dd>
          <dt>Alarm level</dt><dd>{s?.alarmLevel ?? '—'}</dd>
          <dt>Sampled</dt><dd>{status?.time ? new Date(status.time).toLocaleTimeString() : '—'}</dd>
        </dl>
      </div>
      <div class="card">
        <h2>Program and parts</h2>
        <dl>
          <dt>Program</dt><dd>{s?.program ?? count?.program ?? '—'}</dd>
          <dt>Parts</dt><dd>{count?.partCount ?? '—'}{count?.partsRequired ? ` of ${count.partsRequired}` : ''}</dd>
          <dt>Last cycle</dt><dd>{count?.lastCycleTime !== undefined ? `${count.lastCycleTime} s` : '—'}</dd>
        </dl>
      </div>
      <div class="card">
        <h2>Alarms</h2>
        {alarms.length === 0 ? <p>No active alarms.</p> : (
          <ul class="alarms">{alarms.map((a, i) => <li key={i}><b>{a.code}</b> {a.message} {a.level && <span class="level">({a.level})</span>}</li>)}</ul>
        )}
      </div>
      <div class="card">
        <h2>Tool life</h2>
        {tools?.tools?.length ? (
          <table><thead><tr><th scope="col">Tool</th><th scope="col">Remaining</th></tr></thead>
            <tbody>{tools.tools.slice(0, 12).map((t, i) => <tr key={i}><td>T{t.toolNum}</td><td>{t.remainingPercent} %</td></tr>)}</tbody></table>
        ) : <p>No tool life from this machine.</p>}
      </div>
    </section>
  );
}

interface WindowFigures { data: Overall; from: number; to: number; rows: StateRow[]; sinceFirstSeen: boolean }

/** A window's charts and tables: the state timeline, time per state, per SEMI E10 bucket, and OEE. */
function Figures({ overall }: { overall: WindowFigures }) {
  return (
    <>
      {overall.sinceFirstSeen && <p class="since" data-since-first-seen>Since the gateway first saw this machine, {new Date(overall.from).toLocaleString()}.</p>}
      <h3>States</h3>
      <Timeline rows={overall.rows} from={overall.from} to={overall.to} />
      <Bars parts={overall.data.stateTimeSec} labels={STATE_LABEL} />
      <table class="figures"><caption>Time per state</caption><tbody>
        {STATES.map((k) => <tr key={k}><th scope="row"><span class={`swatch fill-${k}`} /> {STATE_LABEL[k]}</th><td>{hours(overall.data.stateTimeSec[k] ?? 0)}</td></tr>)}
      </tbody></table>
      <h3>SEMI E10</h3>
      <Bars parts={overall.data.e10TimeSec} labels={E10_LABEL} />
      <table class="figures"><caption>Time per E10 bucket</caption><tbody>
        {Object.keys(E10_LABEL).map((k) => <tr key={k}><th scope="row"><span class={`swatch fill-${k}`} /> {E10_LABEL[k]}</th><td>{hours(overall.data.e10TimeSec[k] ?? 0)}</td></tr>)}
      </tbody></table>
      <h3>OEE</h3>
      <dl class="oee">
        <dt>OEE</dt><dd>{pct(overall.data.oee.oee)}</dd>
        <dt>Availability</dt><dd>{pct(overall.data.oee.availability)}</dd>
        <dt>Performance</dt><dd>{pct(overall.data.oee.performance)}</dd>
        <dt>Quality</dt><dd>{pct(overall.data.oee.quality)}</dd>
        <dt>Parts</dt><dd>{overall.data.count.totalCount}</dd>
      </dl>
    </>
  );
}

/** When the gateway first recorded a state of the machine (unix ms); null: never. */
function useFirstSeen(machineID: string): number | null | undefined {
  const [firstSeen, setFirstSeen] = useState<number | null | undefined>(undefined);
  useEffect(() => {
    void api.get<{ data: StateRow[] }>('/api/history/machine', { type: 'State', machineID, start: 0, limit: 1 }).then((h) => setFirstSeen(h.data[0]?.time ?? null), () => setFirstSeen(null));
  }, [machineID]);
  return firstSeen;
}

/** A window's figures; a window that began before the machine was first seen is read from then, so a new machine shows no hours of no data. */
async function readWindow(machineID: string, w: { start: string; end: string | undefined }, firstSeen: number | null): Promise<WindowFigures> {
  const read = async (start: string | number, sinceFirstSeen: boolean): Promise<WindowFigures> => {
    const [o, h] = await Promise.all([
      api.get<{ window: { startUnix: number; endUnix: number }; data: Overall }>('/api/analysis/machine', { kind: 'overall', machineID, start, end: w.end }),
      api.get<{ data: StateRow[] }>('/api/history/machine', { type: 'State', machineID, start, end: w.end, limit: 5000 }),
    ]);
    return { data: o.data, from: o.window.startUnix * 1000, to: o.window.endUnix * 1000, rows: h.data, sinceFirstSeen };
  };
  const figures = await read(w.start, false);
  const seenSec = firstSeen === null ? null : Math.floor(firstSeen / 1000);
  if (seenSec !== null && seenSec > figures.from / 1000 && seenSec < figures.to / 1000) return read(seenSec, true);
  return figures;
}

/** The history of a chosen window, read again every 30 seconds. */
function History({ machineID }: { machineID: string }) {
  const [windowKey, setWindowKey] = useState<WindowKey>('today');
  const [overall, setOverall] = useState<WindowFigures | null>(null);
  const [windowError, setWindowError] = useState<string | null>(null);
  const firstSeen = useFirstSeen(machineID);
  usePoll(async () => {
    if (firstSeen === undefined) return;
    try {
      setOverall(await readWindow(machineID, WINDOWS[windowKey], firstSeen));
      setWindowError(null);
    } catch (err) {
      setWindowError(err instanceof ApiError ? err.message : 'The analysis could not be read.');
    }
  }, 30_000, [machineID, windowKey, firstSeen]);
  return (
    <section aria-labelledby="window-title">
      <h2 id="window-title">History</h2>
      <div class="segmented" role="group" aria-label="Window">
        {(Object.keys(WINDOWS) as WindowKey[]).map((k) => (
          <button type="button" key={k} aria-pressed={windowKey === k} class={windowKey === k ? 'selected' : ''} onClick={() => setWindowKey(k)}>{WINDOWS[k].label}</button>
        ))}
      </div>
      {windowError && <p class="error">{windowError}</p>}
      {overall && <Figures overall={overall} />}
    </section>
  );
}

export function MachinePage({ machineID }: { machineID: string }) {
  const [status, setStatus] = useState<StatusEntry | null>(null);
  const [alarms, setAlarms] = useState<Alarm[]>([]);
  const [count, setCount] = useState<Count | null>(null);
  const [tools, setTools] = useState<ToolLife | null>(null);
  const [error, setError] = useState<string | null>(null);

  usePoll(async () => {
    try {
      const [s, a] = await Promise.all([
        api.read<typeof TASK_DATA.batchReadTaskData>('/api/task/batchReadTaskData', { type: 'CNCStatus', machineIDs: machineID }),
        api.read<typeof LIVE_READS.readAlarm>('/api/cnc/readAlarm', { machineID }).catch(() => ({ alarms: [] as Alarm[] })),
      ]);
      const first = Array.isArray(s) ? s[0] : undefined;
      setStatus(first?.type === 'CNCStatus' ? first : null);
      setAlarms(a.alarms);
      setError(null);
    } catch (err) {
      setError(err instanceof ApiError ? err.message : 'The gateway could not be reached; retrying.');
    }
  }, 1000, [machineID]);
  usePoll(async () => {
    const [c, t] = await Promise.all([
      api.read<typeof LIVE_READS.readCount>('/api/cnc/readCount', { machineID }).catch(() => null),
      api.read<typeof LIVE_READS.readToolLife>('/api/cnc/readToolLife', { machineID }).catch(() => null),
    ]);
    setCount(c);
    setTools(t);
  }, 5000, [machineID]);

  const [name, setName] = useState<string | null>(null);
  useEffect(() => {
    void api.read<typeof CONFIGURATION.machine>('/api/config/machine', { machineID }).then((m) => setName(m.name), () => setName(null));
  }, [machineID]);
  useEffect(() => {
    if (name) document.title = `${name} (${machineID})`;
  }, [name]);
  const state = status?.state;
  return (
    <main id="main">
      <p><a href="#/">← Fleet</a></p>
      <header class="page-head">
        <h1 title={machineID}>{name ?? machineID} {name && <span class="machine-id">{machineID}</span>}</h1>
        {state && <span class={`badge big state-${state}`} data-state={state}>{STATE_LABEL[state]}</span>}
      </header>
      {error && <p class="error" role="alert">{error}</p>}
      <LiveCards status={status} count={count} alarms={alarms} tools={tools} />
      <History machineID={machineID} />
    </main>
  );
}

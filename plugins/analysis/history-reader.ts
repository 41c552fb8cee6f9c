/**
 * Reads what analysis needs about one machine from the `history` table on the
 * read-only connection. SQLite extracts the few JSON fields and packs each
 * slice of the range into JSON arrays, so one row crosses into JavaScript per
 * slice instead of one per history row; the extraction runs on sqlite3's
 * worker thread and the event loop only parses a bounded slice at a time.
 */
import { DERIVED_STATES, type DerivedStateName } from '../../core/roles/gateway/fleet/derive-state.js';
import type { AlarmRecord, CountRecord, MachineHistory, StateChange, TimeSpan } from './compute/model.js';
import type { Database, SqlValue } from '../../core/store/database.js';

/** Rows of a slice this long are parsed in one go; about 6,000 State rows at one change per 30 s. */
const SLICE_MS = 2 * 86_400_000;

const KNOWN_STATES: ReadonlySet<string> = new Set(DERIVED_STATES);

/** What to read: the state timeline (State and Heartbeat rows), Count rows, alarm rows. */
export interface HistoryNeeds {
  timeline: boolean;
  counts: boolean;
  alarms: boolean;
}

const STATES_SQL = `SELECT json_group_array(ts) AS ts, json_group_array(data->>'$.state') AS state
  FROM history WHERE machine_id = ? AND class = 'State' AND ts >= ? AND ts < ?`;
const HEARTBEATS_SQL = `SELECT json_group_array(ts) AS ts FROM history WHERE machine_id = ? AND class = 'Heartbeat' AND ts >= ? AND ts < ?`;
// A Count row without a program takes the program of the latest CNCStatus row at or before it.
const COUNTS_SQL = `SELECT json_group_array(json_array(ts, data->>'$.delta', data->>'$.lastCycleTime',
    COALESCE(data->>'$.program', (SELECT s.data->>'$.program' FROM history s
      WHERE s.machine_id = h.machine_id AND s.class = 'CNCStatus' AND s.ts <= h.ts ORDER BY s.ts DESC LIMIT 1)))) AS rows
  FROM history h WHERE machine_id = ? AND class = 'Count' AND ts >= ? AND ts < ?`;
// Ended alarms (AlarmHistory ts = end) that ended in [?, ?) and started before the range end.
const ENDED_ALARMS_SQL = `SELECT json_group_array(json_array(data->>'$.code', data->>'$.message', data->>'$.level', data->>'$.start', data->>'$.end', ts)) AS rows
  FROM history WHERE machine_id = ? AND class = 'AlarmHistory' AND ts >= ? AND ts < ? AND data->>'$.start' < ?`;
// Alarms logged inside the range that never ended (no AlarmHistory row after the log): still active, or lost
// when the gateway stopped before they ended. An alarm logged again after a restart gives one row per log.
const OPEN_ALARMS_SQL = `SELECT json_group_array(json_array(s.data->>'$.code', s.data->>'$.message', s.data->>'$.level', s.data->>'$.since', s.ts)) AS rows
  FROM history s WHERE s.machine_id = ? AND s.class = 'AlarmLog' AND s.ts >= ? AND s.ts < ? AND s.data->>'$.event' = 'start'
    AND NOT EXISTS (SELECT 1 FROM history e WHERE e.machine_id = s.machine_id AND e.class = 'AlarmHistory' AND e.ts >= s.ts
      AND e.data->>'$.start' = s.data->>'$.since' AND e.data->>'$.code' = s.data->>'$.code' AND e.data->>'$.message' IS s.data->>'$.message')`;

// Whether one occurrence (start, code, message) has an AlarmHistory row; it is written when the alarm ends, after its start.
const ENDED_OCCURRENCE_SQL = `SELECT 1 AS ended FROM history WHERE machine_id = ? AND class = 'AlarmHistory' AND ts >= ?
  AND data->>'$.start' = ? AND data->>'$.code' = ? AND data->>'$.message' IS ? LIMIT 1`;

type JsonValue = string | number | null;

/** Consecutive slices of at most SLICE_MS covering `range`. */
function slices(range: TimeSpan): TimeSpan[] {
  const out: TimeSpan[] = [];
  for (let s = range.startMs; s < range.endMs; s += SLICE_MS) out.push({ startMs: s, endMs: Math.min(range.endMs, s + SLICE_MS) });
  return out;
}

/** Whether `values` are ascending by `key`; aggregates see rows in index order (machine_id, class, ts), checked in case a planner ever differs. */
function ascending<T>(values: readonly T[], key: (v: T) => number): boolean {
  for (let i = 1; i < values.length; i++) if (key(values[i]!) < key(values[i - 1]!)) return false;
  return true;
}

const text = (v: JsonValue | undefined): string => (v === null || v === undefined ? '' : String(v));
const num = (v: JsonValue | undefined): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);

export class HistoryReader {
  constructor(private readonly db: Database) {}

  private async column(sql: string, params: SqlValue[], name: string): Promise<unknown[]> {
    const row = await this.db.get<Record<string, string | null>>(sql, params);
    const json = row?.[name];
    return json ? (JSON.parse(json) as unknown[]) : [];
  }

  private async scalar(sql: string, params: SqlValue[]): Promise<number | null> {
    const row = await this.db.get<{ v: number | null }>(sql, params);
    return row?.v ?? null;
  }

  /** State rows of the range, ascending by time. */
  private async states(machineID: string, range: TimeSpan): Promise<StateChange[]> {
    const out: StateChange[] = [];
    for (const slice of slices(range)) {
      const row = await this.db.get<{ ts: string; state: string }>(STATES_SQL, [machineID, slice.startMs, slice.endMs]);
      if (!row) continue;
      const ts = JSON.parse(row.ts) as number[];
      const states = JSON.parse(row.state) as (string | null)[];
      for (let i = 0; i < ts.length; i++) {
        const state = states[i] ?? '';
        // A state this version does not know (written by a newer one) tells nothing it can use.
        out.push({ ts: ts[i]!, state: KNOWN_STATES.has(state) ? (state as DerivedStateName) : 'noData' });
      }
    }
    return ascending(out, (s) => s.ts) ? out : out.sort((a, b) => a.ts - b.ts);
  }

  private async stateBefore(machineID: string, startMs: number): Promise<DerivedStateName | null> {
    const row = await this.db.get<{ state: string | null }>(
      `SELECT data->>'$.state' AS state FROM history WHERE machine_id = ? AND class = 'State' AND ts < ? ORDER BY ts DESC LIMIT 1`,
      [machineID, startMs],
    );
    if (!row) return null;
    return KNOWN_STATES.has(row.state ?? '') ? (row.state as DerivedStateName) : 'noData';
  }

  private async heartbeats(machineID: string, range: TimeSpan): Promise<MachineHistory['heartbeats']> {
    const before = await this.scalar(`SELECT MAX(ts) AS v FROM history WHERE machine_id = ? AND class = 'Heartbeat' AND ts < ?`, [machineID, range.startMs]);
    const after = await this.scalar(`SELECT MIN(ts) AS v FROM history WHERE machine_id = ? AND class = 'Heartbeat' AND ts >= ?`, [machineID, range.endMs]);
    const within: number[] = [];
    for (const slice of slices(range)) {
      for (const ts of (await this.column(HEARTBEATS_SQL, [machineID, slice.startMs, slice.endMs], 'ts')) as number[]) within.push(ts);
    }
    if (!ascending(within, (t) => t)) within.sort((a, b) => a - b);
    return { before, within, after };
  }

  private async counts(machineID: string, range: TimeSpan): Promise<CountRecord[]> {
    const out: CountRecord[] = [];
    for (const slice of slices(range)) {
      for (const r of (await this.column(COUNTS_SQL, [machineID, slice.startMs, slice.endMs], 'rows')) as JsonValue[][]) {
        const program = r[3];
        out.push({ ts: Number(r[0]), delta: num(r[1]) ?? 0, cycleTimeSec: num(r[2]), program: program === null || program === undefined ? null : String(program) });
      }
    }
    return ascending(out, (c) => c.ts) ? out : out.sort((a, b) => a.ts - b.ts);
  }

  /** Alarms with a recorded end (AlarmHistory rows) that overlap the range. */
  private async endedAlarms(machineID: string, range: TimeSpan): Promise<AlarmRecord[]> {
    const ended: JsonValue[][] = [];
    // Short statements, slice by slice, keep the connection free for others in between.
    for (const slice of slices(range)) {
      for (const r of await this.column(ENDED_ALARMS_SQL, [machineID, slice.startMs, slice.endMs, range.endMs], 'rows')) ended.push(r as JsonValue[]);
    }
    // Alarms active at the range end that ended later.
    for (const r of await this.column(ENDED_ALARMS_SQL, [machineID, range.endMs, Number.MAX_SAFE_INTEGER, range.endMs], 'rows')) ended.push(r as JsonValue[]);
    return ended.map((r) => {
      const endMs = num(r[4]) ?? Number(r[5]);
      return { code: text(r[0]), message: text(r[1]), level: text(r[2]), startMs: num(r[3]) ?? endMs, endMs, loggedMs: endMs, activeNow: false };
    });
  }

  /**
   * Alarms logged inside `range` that never ended (no AlarmHistory row after
   * the log): still active, or lost when the gateway stopped before they
   * ended. An alarm logged again after a restart gives one record per log.
   * activeNow is false here; markActive sets it from the live status.
   */
  async loggedOpenAlarms(machineID: string, range: TimeSpan): Promise<AlarmRecord[]> {
    const records: AlarmRecord[] = [];
    for (const slice of slices(range)) {
      for (const r of (await this.column(OPEN_ALARMS_SQL, [machineID, slice.startMs, slice.endMs], 'rows')) as JsonValue[][]) {
        const loggedMs = Number(r[4]);
        records.push({ code: text(r[0]), message: text(r[1]), level: text(r[2]), startMs: num(r[3]) ?? loggedMs, endMs: null, loggedMs, activeNow: false });
      }
    }
    return records;
  }

  /** The live alarms of which no ended record exists (a recorded end wins over a stale live status). */
  async liveNotEnded(machineID: string, live: readonly AlarmRecord[]): Promise<AlarmRecord[]> {
    const out: AlarmRecord[] = [];
    for (const a of live) if (!(await this.db.get(ENDED_OCCURRENCE_SQL, [machineID, a.startMs, a.startMs, a.code, a.message]))) out.push(a);
    return out;
  }

  /**
   * The history of `machineID` over `range` (already clipped to now). Parts
   * not needed stay empty. Alarms are those with a recorded end;
   * loggedOpenAlarms and liveNotEnded give the others, whose end depends on
   * the whole analysed range and on now.
   */
  async machineHistory(machineID: string, range: TimeSpan, needs: HistoryNeeds): Promise<MachineHistory> {
    const empty: MachineHistory = { stateBefore: null, states: [], heartbeats: { before: null, within: [], after: null }, counts: [], alarms: [] };
    if (range.endMs <= range.startMs) return empty;
    // One query at a time: measured, issuing these concurrently on the one read connection held the event loop
    // up for 60-80 ms (statements wait for the connection on the main thread); one after another, under 15 ms.
    const history: MachineHistory = { ...empty };
    if (needs.timeline) {
      history.stateBefore = await this.stateBefore(machineID, range.startMs);
      history.states = await this.states(machineID, range);
      history.heartbeats = await this.heartbeats(machineID, range);
    }
    if (needs.counts) history.counts = await this.counts(machineID, range);
    if (needs.alarms) history.alarms = await this.endedAlarms(machineID, range);
    return history;
  }
}

/**
 * Everything the agent reads from the gateway, in one place: the machines
 * (the fleet store), the history in sequence order (the writer's
 * `committedThrough` and `onCommit`, core's `readAfterSeq`, and the few
 * indexed reads a replay needs to start at any position), the cached tool
 * life of each machine (the fleet's actors; no machine is contacted) and the
 * agent's instanceId (the gateway's meta table). Nothing else in the agent
 * touches the gateway's context. It calls no interface of the gateway's
 * contract (core/roles/gateway/contract/): the history in sequence order and
 * its commits are no interface's answer.
 */
import type { ToolLifeRecord } from '../../core/driver-seam/driver.js';
import type { GatewayContext } from '../../core/roles/gateway/context.js';
import type { MachineConfig } from '../../core/roles/gateway/machine-config.js';
import { readAfterSeq, type SequencedRow } from '../../core/roles/gateway/history/sequence.js';
import { PROGRAM_VERSION_CLASS } from '../../core/roles/gateway/history/program-version.js';
import { MAX_VAULT_FILES } from './vault-versions.js';

/** The history classes whose rows give observations (docs/architecture.md, "History written by the actor"). */
export const REPLAY_CLASSES = ['CNCStatus', 'State', 'Count', 'Motion', 'AlarmLog', 'Heartbeat', PROGRAM_VERSION_CLASS] as const;

/** The classes whose last row before a position holds all a replay needs of them. */
const LAST_ROW_CLASSES = ['CNCStatus', 'State', 'Count', 'Motion'] as const;

/** A machine's last CNCStatus, State, Count and Motion rows before a position. */
export type LastRows = { [C in (typeof LAST_ROW_CLASSES)[number]]?: SequencedRow };

/** A machine's cached tool life and when it was sampled. */
export interface CachedToolLife {
  records: readonly ToolLifeRecord[];
  sampledAt: number;
}

const INSTANCE_KEY = 'mtconnect.instanceId';
/** Open alarms are looked for among this many of a machine's last AlarmLog rows. */
export const ALARM_LOOKBACK_ROWS = 64;

export class GatewayReader {
  constructor(private readonly ctx: GatewayContext) {}

  /** Current time, unix ms. */
  now(): number {
    return this.ctx.now();
  }

  /** The configured machines. */
  machines(): MachineConfig[] {
    return this.ctx.store.listMachines();
  }

  /** Changes whenever a machine is added, changed or removed. */
  get machinesRevision(): number {
    return this.ctx.store.machinesRevision;
  }

  /** The gateway's configured name. */
  get gatewayName(): string {
    return this.ctx.identity.name;
  }

  /** The highest seq at or below which every history row is committed. */
  committedThrough(): number {
    return this.ctx.history.committedThrough;
  }

  /** Calls `listener` after each committed flush; answers the way to stop. */
  onCommit(listener: (rows: readonly SequencedRow[], committedThrough: number) => void): () => void {
    return this.ctx.history.onCommit(listener);
  }

  /** The lowest seq the history keeps; undefined when it keeps no row. */
  async firstRowSeq(): Promise<number | undefined> {
    const row = await this.ctx.db.get<{ first: number | null }>('SELECT MIN(seq) AS first FROM history');
    return row?.first ?? undefined;
  }

  /** The replayed classes' rows with afterSeq < seq ≤ throughSeq, oldest first (of `machineIDs` when given). */
  rowsAfter(afterSeq: number, throughSeq: number, limit: number, machineIDs?: readonly string[]): Promise<SequencedRow[]> {
    return readAfterSeq(this.ctx.db, { afterSeq, throughSeq, limit, classes: REPLAY_CLASSES, machineIDs });
  }

  /** The replayed classes' rows with fromSeq ≤ seq ≤ throughSeq, newest first (of `machineIDs` when given). */
  rowsBackFrom(fromSeq: number, throughSeq: number, limit: number, machineIDs?: readonly string[]): Promise<SequencedRow[]> {
    const classes = REPLAY_CLASSES.map(() => '?').join(',');
    const machines = machineIDs ? ` AND machine_id IN (${machineIDs.map(() => '?').join(',')})` : '';
    return this.ctx.db.all<SequencedRow>(
      `SELECT seq, machine_id AS machineID, class AS cls, ts, data FROM history WHERE seq >= ? AND seq <= ? AND class IN (${classes})${machines} ORDER BY seq DESC LIMIT ?`,
      [fromSeq, throughSeq, ...REPLAY_CLASSES, ...(machineIDs ?? []), limit],
    );
  }

  /**
   * Each machine's last CNCStatus, State, Count and Motion row with seq < beforeSeq
   * and ts ≤ beforeTs: one statement, an index seek per machine and class
   * (history_machine_class_ts read backwards from beforeTs).
   */
  async lastRowsBefore(machineIDs: readonly string[], beforeSeq: number, beforeTs: number): Promise<Map<string, LastRows>> {
    const pick = (cls: string) =>
      `(SELECT json_array(h.seq, h.ts, h.data) FROM history h WHERE h.machine_id = m.value AND h.class = '${cls}' AND h.ts <= ?1 AND h.seq < ?2 ORDER BY h.ts DESC, h.seq DESC LIMIT 1) AS ${cls}`;
    const rows = await this.ctx.db.all<{ machineID: string } & Record<(typeof LAST_ROW_CLASSES)[number], string | null>>(
      `SELECT m.value AS machineID, ${LAST_ROW_CLASSES.map(pick).join(', ')} FROM json_each(?3) m`,
      [beforeTs, beforeSeq, JSON.stringify(machineIDs)],
    );
    const out = new Map<string, LastRows>();
    for (const row of rows) {
      const last: LastRows = {};
      for (const cls of LAST_ROW_CLASSES) {
        const packed = row[cls];
        if (packed === null) continue;
        const [seq, ts, data] = JSON.parse(packed) as [number, number, string];
        last[cls] = { seq, ts, data, machineID: row.machineID, cls };
      }
      out.set(row.machineID, last);
    }
    return out;
  }

  /**
   * Each machine's last ALARM_LOOKBACK_ROWS AlarmLog rows with seq < beforeSeq
   * and ts ≤ beforeTs, oldest first: one statement, an index range per machine.
   */
  async alarmRowsBefore(machineIDs: readonly string[], beforeSeq: number, beforeTs: number): Promise<Map<string, SequencedRow[]>> {
    const out = new Map<string, SequencedRow[]>();
    if (machineIDs.length === 0) return out;
    const rows = await this.ctx.db.all<{ machineID: string; alarms: string | null }>(
      `SELECT m.value AS machineID, (SELECT json_group_array(json_array(a.seq, a.ts, a.data)) FROM (SELECT h.seq, h.ts, h.data FROM history h WHERE h.machine_id = m.value AND h.class = 'AlarmLog' AND h.ts <= ?1 AND h.seq < ?2 ORDER BY h.ts DESC, h.seq DESC LIMIT ${ALARM_LOOKBACK_ROWS}) a) AS alarms FROM json_each(?3) m`,
      [beforeTs, beforeSeq, JSON.stringify(machineIDs)],
    );
    for (const row of rows) {
      const packed = row.alarms === null ? [] : (JSON.parse(row.alarms) as [number, number, string][]);
      out.set(row.machineID, packed.map(([seq, ts, data]) => ({ seq, ts, data, machineID: row.machineID, cls: 'AlarmLog' })).reverse());
    }
    return out;
  }

  /**
   * Each machine's last ProgramVersion row per file name with seq < beforeSeq
   * and ts ≤ beforeTs, of the MAX_VAULT_FILES file names written last, oldest
   * first: one statement, an index range per machine (a machine gets a few
   * such rows a day, one per file deployed).
   */
  async programVersionRowsBefore(machineIDs: readonly string[], beforeSeq: number, beforeTs: number): Promise<Map<string, SequencedRow[]>> {
    const out = new Map<string, SequencedRow[]>();
    if (machineIDs.length === 0) return out;
    // SQLite takes a bare column of a MAX() aggregate from the row holding the maximum: each name's last row.
    const rows = await this.ctx.db.all<{ machineID: string; versions: string | null }>(
      `SELECT m.value AS machineID, (SELECT json_group_array(json_array(v.seq, v.ts, v.data)) FROM (SELECT MAX(h.seq) AS seq, h.ts, h.data FROM history h WHERE h.machine_id = m.value AND h.class = '${PROGRAM_VERSION_CLASS}' AND h.ts <= ?1 AND h.seq < ?2 GROUP BY json_extract(h.data, '$.name') ORDER BY seq DESC LIMIT ${MAX_VAULT_FILES}) v) AS versions FROM json_each(?3) m`,
      [beforeTs, beforeSeq, JSON.stringify(machineIDs)],
    );
    for (const row of rows) {
      const packed = row.versions === null ? [] : (JSON.parse(row.versions) as [number, number, string][]);
      out.set(row.machineID, packed.map(([seq, ts, data]) => ({ seq, ts, data, machineID: row.machineID, cls: PROGRAM_VERSION_CLASS })).sort((a, b) => a.seq - b.seq));
    }
    return out;
  }

  /** The ts of the first replayed row with seq ≥ `seq`; undefined when there is none. */
  async tsAt(seq: number): Promise<number | undefined> {
    const row = await this.ctx.db.get<{ ts: number }>('SELECT ts FROM history WHERE seq >= ? ORDER BY seq LIMIT 1', [seq]);
    return row?.ts;
  }

  /** The machine's cached tool life, when its driver reads it and a sample was taken. */
  toolLife(machineID: string): CachedToolLife | undefined {
    if (!this.ctx.fleet.has(machineID)) return undefined;
    const cached = this.ctx.fleet.snapshot(machineID).cache.ToolLife;
    if (!cached?.value || cached.sampledAt === undefined) return undefined;
    return { records: cached.value, sampledAt: cached.sampledAt };
  }

  /**
   * The agent's instanceId: made once (the time in seconds) and kept in the
   * gateway's meta table beside the history's sequence, so it changes only
   * when the database, and with it the history, is lost.
   */
  async instanceId(): Promise<number> {
    const stored = await this.ctx.db.get<{ value: string }>('SELECT value FROM meta WHERE key = ?', [INSTANCE_KEY]);
    const parsed = Number(stored?.value);
    if (Number.isSafeInteger(parsed) && parsed > 0) return parsed;
    const made = Math.max(1, Math.floor(this.ctx.now() / 1000));
    await this.ctx.db.write((tx) => tx.run('INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT(key) DO NOTHING', [INSTANCE_KEY, String(made)]));
    const kept = await this.ctx.db.get<{ value: string }>('SELECT value FROM meta WHERE key = ?', [INSTANCE_KEY]);
    return Number(kept?.value ?? made);
  }
}

/**
 * A replay started at any position of the history: each machine's last
 * State, CNCStatus, Count and Motion rows before it, its last AlarmLog rows
 * and the last ProgramVersion row of each file name
 * (gateway-reader.ts), replayed in sequence order, give what the rows before
 * the position said. Where the last observation of each data item matters
 * (/current), the replay starts RECENT_ROWS rows earlier and replays them:
 * an observation made within them has its own sequence number; a value set
 * by an older row is shown with the sequence number of the newest row that
 * still says it (docs/mtconnect.md, "Sequence numbers").
 */
import type { SequencedRow } from '../../core/roles/gateway/history/sequence.js';
import type { GatewayReader } from './gateway-reader.js';
import { MachineReplay, type ReplayRow } from './replay.js';

/** History rows replayed before a position to find where each data item's last observation was made. */
export const RECENT_ROWS = 20_000;

/** A committed history row with its data parsed; rows whose data is not a JSON object have an empty one. */
export function parseRow(row: SequencedRow): ReplayRow {
  let data: unknown;
  try {
    data = JSON.parse(row.data);
  } catch {
    data = undefined;
  }
  return { seq: row.seq, machineID: row.machineID, cls: row.cls, ts: row.ts, data: data !== null && typeof data === 'object' && !Array.isArray(data) ? (data as Record<string, unknown>) : {} };
}

/**
 * The replays of `machineIDs` as of just before `position` (the seq of the
 * next row to apply) whose first row is at `ts`; with `alarmsOf(machineID)`
 * true, the machine's open alarms are read too.
 */
export async function replaysAt(
  reader: GatewayReader,
  machineIDs: readonly string[],
  position: number,
  ts: number,
  alarmsOf: (machineID: string) => boolean,
): Promise<Map<string, MachineReplay>> {
  const replays = new Map<string, MachineReplay>();
  if (machineIDs.length === 0) return replays;
  const [lastRows, alarmRows, versionRows] = await Promise.all([
    reader.lastRowsBefore(machineIDs, position, ts),
    reader.alarmRowsBefore(machineIDs.filter(alarmsOf), position, ts),
    reader.programVersionRowsBefore(machineIDs, position, ts),
  ]);
  machineIDs.forEach((machineID) => {
    const replay = new MachineReplay(machineID);
    const last = lastRows.get(machineID) ?? {};
    const rows = [...(alarmRows.get(machineID) ?? []), ...(versionRows.get(machineID) ?? []), ...[last.CNCStatus, last.State, last.Count, last.Motion].filter((r): r is SequencedRow => r !== undefined)];
    rows.sort((a, b) => a.seq - b.seq);
    for (const row of rows) replay.apply(parseRow(row), () => undefined);
    replays.set(machineID, replay);
  });
  return replays;
}

/**
 * The replays of `machineIDs` as of just before `position`, each data item's
 * last observation exact when it was made within the RECENT_ROWS rows before.
 */
export async function lastObservationsAt(reader: GatewayReader, machineIDs: readonly string[], position: number): Promise<Map<string, MachineReplay>> {
  const first = (await reader.firstRowSeq()) ?? position;
  const start = Math.max(first, position - RECENT_ROWS);
  const ts = (await reader.tsAt(start)) ?? Number.MAX_SAFE_INTEGER;
  const replays = await replaysAt(reader, machineIDs, start, ts, () => true);
  const wanted = new Set(machineIDs);
  let after = start - 1;
  while (after < position - 1) {
    const rows = await reader.rowsAfter(after, position - 1, 5_000);
    if (rows.length === 0) break;
    for (const row of rows) {
      after = row.seq;
      if (wanted.has(row.machineID)) replays.get(row.machineID)?.apply(parseRow(row), () => undefined);
    }
  }
  return replays;
}

/**
 * What the history table holds: which machines, and which classes per
 * machine. Each answer is a loose index scan — one index seek per distinct
 * value — so it costs the same for a thousand rows as for a hundred million.
 */
import type { Database } from '../../../store/database.js';
import { HISTORY_INDEX } from './query.js';

/** Every machineID with at least one history row, in ascending order. */
export async function historyMachineIDs(db: Database): Promise<string[]> {
  const ids: string[] = [];
  let row = await db.get<{ machine_id: string }>(`SELECT machine_id FROM history INDEXED BY ${HISTORY_INDEX} ORDER BY machine_id LIMIT 1`);
  while (row) {
    ids.push(row.machine_id);
    row = await db.get<{ machine_id: string }>(
      `SELECT machine_id FROM history INDEXED BY ${HISTORY_INDEX} WHERE machine_id > ? ORDER BY machine_id LIMIT 1`,
      [row.machine_id],
    );
  }
  return ids;
}

/** The classes recorded for one machine, in ascending order. */
export async function historyClasses(db: Database, machineID: string): Promise<string[]> {
  const classes: string[] = [];
  let row = await db.get<{ class: string }>(
    `SELECT class FROM history INDEXED BY ${HISTORY_INDEX} WHERE machine_id = ? ORDER BY class LIMIT 1`,
    [machineID],
  );
  while (row) {
    classes.push(row.class);
    row = await db.get<{ class: string }>(
      `SELECT class FROM history INDEXED BY ${HISTORY_INDEX} WHERE machine_id = ? AND class > ? ORDER BY class LIMIT 1`,
      [machineID, row.class],
    );
  }
  return classes;
}

/** Whether `machineID` has any history row (of `cls`, when given). */
export async function hasHistory(db: Database, machineID: string, cls?: string): Promise<boolean> {
  const row =
    cls === undefined
      ? await db.get(`SELECT 1 AS found FROM history INDEXED BY ${HISTORY_INDEX} WHERE machine_id = ? LIMIT 1`, [machineID])
      : await db.get(`SELECT 1 AS found FROM history INDEXED BY ${HISTORY_INDEX} WHERE machine_id = ? AND class = ? LIMIT 1`, [machineID, cls]);
  return row !== undefined;
}

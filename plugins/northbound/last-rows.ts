/**
 * What a machine's history said before a sequence number: its last row of
 * each class. A target that starts publishing in the middle of the history
 * (after a restart, a reconnection, a rebirth) needs it for the state a row
 * was recorded in and for the values a Sparkplug birth carries. One read
 * per class through the (machine_id, class, ts) index, newest first.
 */
import type { SequencedRow } from '../../core/roles/gateway/history/sequence.js';
import type { Database } from '../../core/store/database.js';

/** The last row of each of `classes` that `machineID` recorded with a sequence number below `beforeSeq`. */
export async function lastRowsBefore(db: Database, machineID: string, beforeSeq: number, classes: readonly string[]): Promise<SequencedRow[]> {
  const rows: SequencedRow[] = [];
  for (const cls of classes) {
    const row = await db.get<SequencedRow>(
      'SELECT seq, machine_id AS machineID, class AS cls, ts, data FROM history WHERE machine_id = ? AND class = ? AND seq < ? ORDER BY ts DESC, seq DESC LIMIT 1',
      [machineID, cls, beforeSeq],
    );
    if (row) rows.push(row);
  }
  return rows;
}

/** The first row of each machine in `rows` that `known` does not hold yet, by machine. */
export function firstRowsOfNew(rows: readonly SequencedRow[], known: (machineID: string) => boolean): Map<string, number> {
  const firsts = new Map<string, number>();
  for (const row of rows) if (!known(row.machineID) && !firsts.has(row.machineID)) firsts.set(row.machineID, row.seq);
  return firsts;
}

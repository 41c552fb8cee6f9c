/**
 * The derived state each row was recorded in, as the history says: the
 * machine's last State row up to it. A sample that changes the state is
 * followed by its State row (same machine, same time, the next sequence
 * numbers: the actor writes them together), and that State is the one the
 * sample's message carries. Read as the target reads rows, in sequence
 * order; a machine met for the first time (or again after the target went
 * back to its cursor) is looked up in the history once.
 */
import type { SequencedRow } from '../../core/roles/gateway/history/sequence.js';
import type { Database } from '../../core/store/database.js';
import { firstRowsOfNew, lastRowsBefore } from './last-rows.js';

/** A derived state and its reason as a State row recorded them. */
export interface RecordedState {
  state: string;
  reason: string;
}

/** The state and reason of a State row's data, or undefined when it holds none. */
export function recordedState(data: string): RecordedState | undefined {
  try {
    const parsed = JSON.parse(data) as { state?: unknown; reason?: unknown } | null;
    if (typeof parsed?.state !== 'string') return undefined;
    return { state: parsed.state, reason: typeof parsed.reason === 'string' ? parsed.reason : '' };
  } catch {
    return undefined;
  }
}

export class RowStates {
  /** Each machine's state as of the last row read; null when its history holds no State row before it. */
  private readonly byMachine = new Map<string, RecordedState | null>();

  constructor(private readonly db: Database) {}

  /** Looks up the machines of `rows` not met yet: their state before their first row here. */
  async prepare(rows: readonly SequencedRow[]): Promise<void> {
    for (const [machineID, seq] of firstRowsOfNew(rows, (id) => this.byMachine.has(id))) {
      const [last] = await lastRowsBefore(this.db, machineID, seq, ['State']);
      this.byMachine.set(machineID, (last && recordedState(last.data)) ?? null);
    }
  }

  /**
   * The state row `i` of `rows` was recorded in; rows are read in order,
   * and a State row moves its machine's state on.
   */
  at(rows: readonly SequencedRow[], i: number): RecordedState | null {
    const row = rows[i] as SequencedRow;
    let state = this.byMachine.get(row.machineID) ?? null;
    // The State row the actor wrote with this sample: same machine, same time, the sequence numbers right after.
    for (let j = i; j < rows.length; j++) {
      const next = rows[j] as SequencedRow;
      if (j > i && (next.machineID !== row.machineID || next.ts !== row.ts || next.seq !== (rows[j - 1] as SequencedRow).seq + 1)) break;
      if (next.cls === 'State') {
        state = recordedState(next.data) ?? state;
        break;
      }
    }
    if (row.cls === 'State') this.byMachine.set(row.machineID, state);
    return state;
  }

  /** Forgets every machine (the target goes back to its cursor, before what was read). */
  forget(): void {
    this.byMachine.clear();
  }
}

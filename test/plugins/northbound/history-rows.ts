/**
 * A real history for the northbound unit tests: the gateway's schema in an
 * in-memory SQLite database and its HistoryWriter, rows pushed and read back
 * in sequence order as a target reads them.
 */
import { Database } from '../../../core/store/database.js';
import { HistoryWriter, type HistoryRow } from '../../../core/roles/gateway/history/writer.js';
import { readAfterSeq, type SequencedRow } from '../../../core/roles/gateway/history/sequence.js';
import { migrateGatewayStore } from '../../../core/roles/gateway/store/schema.js';

export interface TestHistory {
  db: Database;
  writer: HistoryWriter;
  /** Pushes rows, commits them, and answers them as a target reads them. */
  write(rows: readonly HistoryRow[]): Promise<SequencedRow[]>;
  close(): Promise<void>;
}

export async function openHistory(): Promise<TestHistory> {
  const db = await Database.open(':memory:');
  await migrateGatewayStore(db);
  const writer = await HistoryWriter.open(db, { flushIntervalMs: 10 });
  return {
    db,
    writer,
    async write(rows) {
      const after = writer.committedThrough;
      for (const row of rows) writer.push(row);
      await writer.flush();
      return readAfterSeq(db, { afterSeq: after, throughSeq: writer.committedThrough, limit: 10_000 });
    },
    async close() {
      await writer.close();
      await db.close();
    },
  };
}

/** A CNCStatus sample's data as the machine actor writes it. */
export function cncStatus(adjustedStatus: 'RUNNING' | 'STOPPED', time: number): Record<string, unknown> {
  return { cncStatus: adjustedStatus === 'RUNNING' ? 'STRT' : 'STOP', adjustedStatus, alarmStatus: false, alarmLevel: 'none', mode: 'AUTO', programStatus: adjustedStatus === 'RUNNING' ? 'running' : 'stopped', emergency: false, program: 'O1000', time };
}

/** A State row's data. */
export function stateData(state: string, connection = 'online'): Record<string, unknown> {
  return { state, reason: `${state}: test`, connection };
}

/**
 * The history read in sequence order: what a reader that resumes after the
 * last sequence number it saw needs (the MTConnect agent's `from=`, the
 * northbound publisher's cursor). `seq` is the table's rowid, so a range of
 * sequence numbers is a search of the table itself, with no sort. Together
 * with the writer's `committedThrough` and `onCommit`, this is the one way a
 * consumer follows the history; nothing keeps a second queue of samples.
 */
import type { Database, SqlValue } from '../../../store/database.js';

/** A committed history row in sequence order; `data` is its stored JSON text (parse it only where needed). */
export type SequencedRow = {
  seq: number;
  machineID: string;
  cls: string;
  /** Unix milliseconds. */
  ts: number;
  data: string;
};

/** What the history holds, by sequence number: `first` is 0 when no row is kept. */
export interface SequenceBounds {
  first: number;
  last: number;
  rows: number;
}

/** The lowest and highest sequence numbers kept and how many rows there are. */
export async function sequenceBounds(db: Database): Promise<SequenceBounds> {
  const row = await db.get<{ first: number | null; last: number | null; rows: number }>('SELECT MIN(seq) AS first, MAX(seq) AS last, COUNT(*) AS rows FROM history');
  return { first: row?.first ?? 0, last: row?.last ?? 0, rows: row?.rows ?? 0 };
}

/** Which rows a sequence read answers. */
export interface SequenceRead {
  /** Rows with a greater sequence number only. */
  afterSeq: number;
  /** Rows up to this sequence number (inclusive); the writer's `committedThrough` for a reader that must miss nothing. */
  throughSeq: number;
  /** At most this many rows (a positive integer). */
  limit: number;
  /** Only these machines' rows, when given. */
  machineIDs?: readonly string[] | undefined;
  /** Only these data classes, when given. */
  classes?: readonly string[] | undefined;
}

/** The rows of `read`, oldest sequence number first. */
export async function readAfterSeq(db: Database, read: SequenceRead): Promise<SequencedRow[]> {
  if (!Number.isInteger(read.limit) || read.limit < 1) throw new Error(`a sequence read's limit must be a positive integer, got ${read.limit}`);
  if (read.throughSeq <= read.afterSeq || read.machineIDs?.length === 0 || read.classes?.length === 0) return [];
  const params: SqlValue[] = [read.afterSeq, read.throughSeq];
  let sql = 'SELECT seq, machine_id AS machineID, class AS cls, ts, data FROM history WHERE seq > ? AND seq <= ?';
  if (read.machineIDs) {
    sql += ` AND machine_id IN (${read.machineIDs.map(() => '?').join(',')})`;
    params.push(...read.machineIDs);
  }
  if (read.classes) {
    sql += ` AND class IN (${read.classes.map(() => '?').join(',')})`;
    params.push(...read.classes);
  }
  sql += ' ORDER BY seq LIMIT ?';
  params.push(read.limit);
  return db.all<SequencedRow>(sql, params);
}

/**
 * Where a target's next rows come from: the history in sequence order, up
 * to the writer's `committedThrough` only (a row published before its
 * commit could see its sequence number given again after a crash). The
 * committed tail answers when it can vouch for the range, the database
 * (`readAfterSeq`) otherwise.
 *
 * Every sequence number at or below `committedThrough` was committed or
 * dropped by the writer, so one that is missing from a read is a row the
 * history no longer has (retention deleted it, or the writer never kept
 * it): the read counts those as lost.
 */
import { readAfterSeq, type SequencedRow } from '../../core/roles/gateway/history/sequence.js';
import type { Database } from '../../core/store/database.js';
import type { CommittedTail } from './committed-tail.js';

/** What one read gives: rows oldest first, where the reader is now, and how many sequence numbers it found missing. */
export interface RowBatch {
  rows: SequencedRow[];
  /** The sequence number the reader has covered: the last row's, or `throughSeq` when the range is exhausted. */
  coveredThrough: number;
  missing: number;
}

export interface RowSourceDeps {
  db: Database;
  tail: CommittedTail;
  /** The writer's committedThrough now. */
  committedThrough(): number;
}

export class RowSource {
  constructor(private readonly deps: RowSourceDeps) {}

  get committedThrough(): number {
    return this.deps.committedThrough();
  }

  /** Up to `limit` rows after `afterSeq`, committed ones only; undefined when there is nothing new. */
  async next(afterSeq: number, limit: number): Promise<RowBatch | undefined> {
    const throughSeq = this.deps.committedThrough();
    if (throughSeq <= afterSeq) return undefined;
    const rows = this.deps.tail.read(afterSeq, throughSeq, limit) ?? (await readAfterSeq(this.deps.db, { afterSeq, throughSeq, limit }));
    const exhausted = rows.length < limit;
    const coveredThrough = exhausted ? throughSeq : (rows[rows.length - 1] as SequencedRow).seq;
    return { rows, coveredThrough, missing: coveredThrough - afterSeq - rows.length };
  }

  /** The time of the first row after `afterSeq` that is still kept, for the backlog's age. */
  async firstTimeAfter(afterSeq: number): Promise<number | undefined> {
    const row = await this.deps.db.get<{ ts: number }>('SELECT ts FROM history WHERE seq > ? AND seq <= ? ORDER BY seq LIMIT 1', [afterSeq, this.deps.committedThrough()]);
    return row?.ts;
  }
}

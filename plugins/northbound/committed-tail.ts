/**
 * The newest committed history rows, as the writer handed them over
 * (`onCommit`), so that a target that keeps up reads its next rows from
 * memory instead of the database. It is only a shortcut: the history is the
 * store, and a target reads the database whenever the tail cannot vouch for
 * a range.
 *
 * The tail vouches for every sequence number above `completeAbove`: a row
 * pushed after it started listening reaches it at commit (rows of a failed
 * flush commit later, out of sequence order, and are put in place), or was
 * dropped by the writer and never exists. Rows pushed before it listened,
 * and rows it let go of to stay within its bound, are below `completeAbove`;
 * those are read from the database.
 */
import type { SequencedRow } from '../../core/roles/gateway/history/sequence.js';
import type { CommitListener, HistoryWriter } from '../../core/roles/gateway/history/writer.js';

export class CommittedTail {
  /**
   * A tail that follows `writer` from now on: it starts listening in the
   * same step as it takes the writer's last sequence number, so no commit
   * can fall between (a commit it missed would be a row it vouches for and
   * does not hold). `committed` is told after each flush is taken in.
   */
  static follow(writer: Pick<HistoryWriter, 'stats' | 'onCommit'>, maxRows: number, committed: CommitListener): { tail: CommittedTail; stop: () => void } {
    const tail = new CommittedTail(writer.stats.lastSeq, maxRows);
    const stop = writer.onCommit((rows, through) => {
      tail.add(rows);
      committed(rows, through);
    });
    return { tail, stop };
  }

  /** Rows in sequence order from `head` on (the ones before are let go). */
  private rows: SequencedRow[] = [];
  private head = 0;
  private completeAboveSeq: number;

  /** `pushedThrough`: the writer's last assigned sequence number when the tail starts listening. */
  constructor(
    pushedThrough: number,
    private readonly maxRows: number,
  ) {
    this.completeAboveSeq = pushedThrough;
  }

  /** Every row above this sequence number is in the tail, or never committed (a dropped row). */
  get completeAbove(): number {
    return this.completeAboveSeq;
  }

  get size(): number {
    return this.rows.length - this.head;
  }

  /** Takes a committed flush's rows (in sequence order). */
  add(committed: readonly SequencedRow[]): void {
    const last = this.rows[this.rows.length - 1];
    const first = committed[0];
    if (!first) return;
    if (!last || first.seq > last.seq) for (const row of committed) this.rows.push(row);
    else this.merge(committed);
    const over = this.size - this.maxRows;
    if (over > 0) this.letGo(over);
  }

  /** A retried flush committed after later ones: its rows go in their place. */
  private merge(committed: readonly SequencedRow[]): void {
    const kept = this.rows.slice(this.head).concat(committed);
    kept.sort((a, b) => a.seq - b.seq);
    this.rows = kept;
    this.head = 0;
  }

  /** Drops the `count` oldest rows; the tail no longer vouches for their sequence numbers. */
  private letGo(count: number): void {
    this.head += count;
    this.completeAboveSeq = Math.max(this.completeAboveSeq, (this.rows[this.head - 1] as SequencedRow).seq);
    this.compact();
  }

  /** Forgets the rows with `seq <= through` (every reader's cursor is past them); a reader going back that far reads the database. */
  release(through: number): void {
    const start = this.head;
    while (this.head < this.rows.length && (this.rows[this.head] as SequencedRow).seq <= through) this.head++;
    if (this.head > start) this.completeAboveSeq = Math.max(this.completeAboveSeq, (this.rows[this.head - 1] as SequencedRow).seq);
    this.compact();
  }

  private compact(): void {
    if (this.head > 1024 && this.head * 2 > this.rows.length) {
      this.rows = this.rows.slice(this.head);
      this.head = 0;
    }
  }

  /**
   * The rows with `afterSeq < seq <= throughSeq`, at most `limit`, oldest
   * first; undefined when the tail cannot vouch for the range (read the
   * database then).
   */
  read(afterSeq: number, throughSeq: number, limit: number): SequencedRow[] | undefined {
    if (afterSeq < this.completeAboveSeq) return undefined;
    let i = this.firstAfter(afterSeq);
    const out: SequencedRow[] = [];
    for (; i < this.rows.length && out.length < limit; i++) {
      const row = this.rows[i] as SequencedRow;
      if (row.seq > throughSeq) break;
      out.push(row);
    }
    return out;
  }

  /** The index of the first row with seq > `afterSeq` (binary search from `head`). */
  private firstAfter(afterSeq: number): number {
    let lo = this.head;
    let hi = this.rows.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((this.rows[mid] as SequencedRow).seq <= afterSeq) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}

/**
 * The rows a target has handed to the broker and not all of whose messages
 * are acknowledged yet, in sequence order. The cursor moves to a row only
 * when it and every row before it are acknowledged, so it never passes a
 * row the broker may not have; a stretch the reader covered without rows
 * (missing sequence numbers) is an entry with nothing to wait for.
 */

/** One row (or covered stretch) in flight. */
export interface WindowEntry {
  /** The sequence number the cursor may move to once this entry and those before it are acknowledged. */
  readonly through: number;
  /** The row's time (unix ms), for the publish lag; undefined for a stretch without rows. */
  readonly ts: number | undefined;
  /** Whether the row is forwarded from the backlog (its lag is not the live publish lag). */
  readonly historical: boolean;
  /** Messages of the entry not yet acknowledged. */
  pending: number;
}

export class AckWindow {
  private entries: WindowEntry[] = [];
  private head = 0;

  /** Adds an entry waiting for `pending` messages (0: done already, moves with the ones before it). */
  add(through: number, pending: number, ts?: number, historical = false): WindowEntry {
    const entry: WindowEntry = { through, ts, historical, pending };
    this.entries.push(entry);
    return entry;
  }

  /**
   * One message of `entry` was acknowledged; answers the entries that are
   * now done at the head, in order (the cursor moves to the last one's
   * `through`).
   */
  acknowledge(entry: WindowEntry): WindowEntry[] {
    if (entry.pending <= 0) return [];
    entry.pending--;
    return this.takeDone();
  }

  /** The done entries at the head, removed. */
  takeDone(): WindowEntry[] {
    const done: WindowEntry[] = [];
    while (this.head < this.entries.length && (this.entries[this.head] as WindowEntry).pending === 0) done.push(this.entries[this.head++] as WindowEntry);
    if (this.head > 1024 && this.head * 2 > this.entries.length) {
      this.entries = this.entries.slice(this.head);
      this.head = 0;
    }
    return done;
  }

  /** Forgets everything in flight (the connection ended: what was not acknowledged is sent again from the cursor). */
  clear(): void {
    this.entries = [];
    this.head = 0;
  }
}

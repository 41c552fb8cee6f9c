/**
 * MTConnect sequence numbers from history sequence numbers. One history row
 * gives zero or more observations, and each must have its own number that
 * stays the same across restarts and re-reads, so an observation's sequence
 * number is the row's seq times SLOTS_PER_ROW plus the observation's slot in
 * that row (a fixed slot per data item, docs/mtconnect.md). Numbers are
 * therefore unique, increase with the history and survive restarts, but are
 * not dense: a client resumes with `from=` the `nextSequence` it was given,
 * and an agent answers from any number, whether or not an observation has it.
 */

/** Observation slots per history row: the row's seq × this + the slot is the sequence number. */
export const SLOTS_PER_ROW = 100;

/** The sequence number of slot `slot` of the history row `rowSeq`. */
export function observationSeq(rowSeq: number, slot: number): number {
  return rowSeq * SLOTS_PER_ROW + slot;
}

/** The history row a sequence number belongs to. */
export function rowOfSeq(seq: number): number {
  return Math.floor(seq / SLOTS_PER_ROW);
}

/** The slot of a sequence number within its row. */
export function slotOfSeq(seq: number): number {
  return seq % SLOTS_PER_ROW;
}

/** The largest sequence number a client may send; beyond it a number is not exact in a double. */
export const MAX_SEQUENCE = Number.MAX_SAFE_INTEGER;

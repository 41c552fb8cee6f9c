/**
 * An observation as a Streams document serves it, with the data item it
 * belongs to: what the reads (stream-reads.ts), the places pages left off
 * (replay-checkpoints.ts) and the documents share.
 */
import type { DataItemDef } from './model.js';
import type { Observation } from './replay.js';

/** An observation with the data item it belongs to. */
export interface Served {
  def: DataItemDef;
  o: Observation;
}

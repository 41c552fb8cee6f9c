/**
 * Walks the audit chain in seq order and recomputes every hash from the
 * stored fields. Stops at the first record that does not check out.
 */
import type { Database } from '../database.js';
import { AUDIT_COLUMNS, type AuditRow, hashedFieldsOf, recordHash } from './record.js';
import { GENESIS_HASH } from './schema.js';

/** The result of a verification (PV-15). */
export interface AuditVerification {
  /** True when every record and the anchor check out. */
  intact: boolean;
  /** Records verified intact, in seq order from 1; when broken, firstBrokenSeq - 1. */
  checked: number;
  /** The first seq that does not check out, or null when intact. */
  firstBrokenSeq: number | null;
}

export interface VerifyOptions {
  /** Rows read per query; the next chunk is read while this one is hashed. */
  chunkSize?: number;
}

const DEFAULT_CHUNK = 4000;

function broken(seq: number): AuditVerification {
  return { intact: false, checked: seq - 1, firstBrokenSeq: seq };
}

/** The first seq at which `row` breaks the chain continuing from `expectedSeq`/`prevHash`, or null. */
function breakIn(row: AuditRow, expectedSeq: number, prevHash: string): number | null {
  // A gap means the record at expectedSeq was deleted (or renumbered away).
  if (row.seq !== expectedSeq) return expectedSeq;
  if (row.prev_hash !== prevHash) return row.seq;
  try {
    return recordHash(hashedFieldsOf(row)) === row.hash ? null : row.seq;
  } catch {
    // A field no longer has a canonical form (e.g. a ts outside the Date range): changed.
    return row.seq;
  }
}

/**
 * Verifies the chain: seq continuity from 1, each prevHash equal to the
 * previous record's hash, each hash recomputed, and the anchor in
 * audit_head equal to the last record (so a deleted tail, or records added
 * behind the anchor's back, are found too).
 */
export async function verifyChain(db: Database, options: VerifyOptions = {}): Promise<AuditVerification> {
  const chunk = options.chunkSize ?? DEFAULT_CHUNK;
  const read = (afterSeq: number) =>
    db.all<AuditRow>(`SELECT ${AUDIT_COLUMNS} FROM audit_log WHERE seq > ? ORDER BY seq LIMIT ?`, [afterSeq, chunk]);
  let expectedSeq = 1;
  let prevHash = GENESIS_HASH;
  let pending = read(0);
  let recheckedTail = false;
  for (;;) {
    const rows = await pending;
    if (rows.length > 0) {
      // Reading the next chunk overlaps with hashing this one (the query runs on libuv's pool).
      pending = read((rows[rows.length - 1] as AuditRow).seq);
      for (const row of rows) {
        const at = breakIn(row, expectedSeq, prevHash);
        if (at !== null) {
          pending.catch(() => undefined);
          return broken(at);
        }
        prevHash = row.hash;
        expectedSeq++;
      }
      recheckedTail = false;
      continue;
    }
    const last = expectedSeq - 1;
    const anchor = await db.get<{ seq: number; hash: string }>('SELECT seq, hash FROM audit_head WHERE id = 1');
    // A missing anchor row reads as the genesis anchor: zero records.
    const anchorSeq = anchor?.seq ?? 0;
    if (anchorSeq > last && !recheckedTail) {
      // Records committed after the empty read moved the anchor; read once more before calling it truncated.
      recheckedTail = true;
      pending = read(last);
      continue;
    }
    if (anchorSeq > last) return broken(last + 1);
    if (anchorSeq < last) return broken(anchorSeq + 1);
    if ((anchor?.hash ?? GENESIS_HASH) !== prevHash) return broken(Math.max(last, 1));
    return { intact: true, checked: last, firstBrokenSeq: null };
  }
}

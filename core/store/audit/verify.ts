/**
 * Walks the audit chain in seq order and recomputes every hash from the
 * stored fields. Stops at the first record that does not check out.
 *
 * Two paths read a chunk. The fast one has SQLite build each record's
 * canonical text (json_quote of every text field, which is JSON.stringify's
 * escaping) and return a whole chunk as one string: turning thirteen columns
 * a row into JavaScript values costs more than hashing them. Any doubt in a
 * chunk (a mismatch, or a value the fast path cannot read) sends that chunk
 * through the reference path, which reads the columns and builds the text
 * with canonicalText, and which alone decides where the chain breaks.
 */
import type { Database } from '../database.js';
import { AUDIT_COLUMNS, type AuditRow, hashedFieldsOf, recordHash, sha256Hex } from './record.js';
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
  /** Records read per query; the next chunk is read while this one is hashed. */
  chunkSize?: number;
}

const DEFAULT_CHUNK = 4000;
const RECORD_SEPARATOR = '\x1e';
const FIELD_SEPARATOR = '\x1f';

const quoted = (label: string, column: string) => `'${label}' || json_quote(${column})`;
/** The canonical text up to and including seq, built by SQLite; time, the last key, is added in JS from ts. */
export const CANONICAL_PREFIX_SQL = [
  quoted('{"action":', 'action'),
  quoted(',"authMethod":', 'auth_method'),
  quoted(',"category":', 'category'),
  quoted(',"details":', 'details'),
  quoted(',"entityId":', 'entity_id'),
  quoted(',"entityType":', 'entity_type'),
  quoted(',"machine":', 'machine'),
  quoted(',"onBehalfOf":', 'on_behalf_of'),
  quoted(',"prevHash":', 'prev_hash'),
  quoted(',"principalName":', 'principal_name'),
  `',"seq":' || seq`,
].join(' || ');
// json_quote leaves no raw control character, so char(30)/char(31) can only be separators; a
// non-integer ts, or a NULL anywhere, shows up as a missing or empty part and sends the chunk
// to the reference path.
const FAST_SQL = `SELECT count(*) AS n, max(seq) AS last, group_concat(
    seq || char(31) || iif(typeof(ts) = 'integer', ts, '') || char(31) || prev_hash || char(31) || hash || char(31) || ${CANONICAL_PREFIX_SQL},
    char(30)) AS text
  FROM (SELECT * FROM audit_log WHERE seq > ? ORDER BY seq LIMIT ?)`;

type FastChunk = {
  n: number;
  last: number | null;
  text: string | null;
};

interface Position {
  /** The seq the next record must have. */
  expectedSeq: number;
  prevHash: string;
}

function broken(seq: number): AuditVerification {
  return { intact: false, checked: seq - 1, firstBrokenSeq: seq };
}

/** The first seq at which `row` breaks the chain continuing from `at`, or null. */
function breakIn(row: AuditRow, at: Position): number | null {
  // A gap means the record at expectedSeq was deleted (or renumbered away).
  if (row.seq !== at.expectedSeq) return at.expectedSeq;
  if (row.prev_hash !== at.prevHash) return row.seq;
  try {
    return recordHash(hashedFieldsOf(row)) === row.hash ? null : row.seq;
  } catch {
    // A field no longer has a canonical form (e.g. a ts outside the Date range): changed.
    return row.seq;
  }
}

let lastTs = NaN;
let lastIso = '';
/** ISO text of ts; consecutive records often share a millisecond. */
function isoOf(ts: number): string {
  if (ts !== lastTs) {
    lastIso = new Date(ts).toISOString();
    lastTs = ts;
  }
  return lastIso;
}

/** Checks a fast chunk; true when every record in it checks out (and `at` has moved past them). */
function fastChunkIntact(chunk: FastChunk, at: Position): boolean {
  if (chunk.text === null) return false;
  const records = chunk.text.split(RECORD_SEPARATOR);
  if (records.length !== chunk.n) return false;
  let { expectedSeq, prevHash } = at;
  for (const record of records) {
    const parts = record.split(FIELD_SEPARATOR);
    if (parts.length !== 5 || Number(parts[0]) !== expectedSeq || parts[2] !== prevHash || parts[1] === '') return false;
    const ts = Number(parts[1]);
    if (!Number.isSafeInteger(ts) || Math.abs(ts) > 8.64e15) return false;
    if (sha256Hex(`${parts[4]},"time":"${isoOf(ts)}"}`) !== parts[3]) return false;
    prevHash = parts[3] as string;
    expectedSeq++;
  }
  at.expectedSeq = expectedSeq;
  at.prevHash = prevHash;
  return true;
}

/**
 * Verifies the chain: seq continuity from 1, each prevHash equal to the
 * previous record's hash, each hash recomputed, and the anchor in
 * audit_head equal to the last record (so a deleted tail, or records added
 * behind the anchor's back, are found too).
 */
export async function verifyChain(db: Database, options: VerifyOptions = {}): Promise<AuditVerification> {
  const chunkSize = options.chunkSize ?? DEFAULT_CHUNK;
  const readFast = (afterSeq: number) =>
    db.get<FastChunk>(FAST_SQL, [afterSeq, chunkSize]).then(
      (row) => row ?? { n: 0, last: null, text: null },
      // A value json_quote refuses (a BLOB): let the reference path look.
      () => ({ n: -1, last: null, text: null }),
    );
  const readRows = (afterSeq: number) =>
    db.all<AuditRow>(`SELECT ${AUDIT_COLUMNS} FROM audit_log WHERE seq > ? ORDER BY seq LIMIT ?`, [afterSeq, chunkSize]);
  const at: Position = { expectedSeq: 1, prevHash: GENESIS_HASH };
  let pending = readFast(0);
  let recheckedTail = false;
  for (;;) {
    const chunk = await pending;
    if (chunk.n !== 0) {
      const start = at.expectedSeq - 1;
      // Reading the next chunk overlaps with hashing this one (the query runs on libuv's pool).
      if (chunk.last !== null) pending = readFast(chunk.last);
      if (!fastChunkIntact(chunk, at)) {
        const rows = await readRows(start);
        for (const row of rows) {
          const breakAt = breakIn(row, at);
          if (breakAt !== null) return broken(breakAt);
          at.prevHash = row.hash;
          at.expectedSeq++;
        }
        pending = readFast(at.expectedSeq - 1);
      }
      recheckedTail = false;
      continue;
    }
    const last = at.expectedSeq - 1;
    const anchor = await db.get<{ seq: number; hash: string }>('SELECT seq, hash FROM audit_head WHERE id = 1');
    // A missing anchor row reads as the genesis anchor: zero records.
    const anchorSeq = anchor?.seq ?? 0;
    if (anchorSeq > last && !recheckedTail) {
      // Records committed after the empty read moved the anchor; read once more before calling it truncated.
      recheckedTail = true;
      pending = readFast(last);
      continue;
    }
    if (anchorSeq > last) return broken(last + 1);
    if (anchorSeq < last) return broken(anchorSeq + 1);
    if ((anchor?.hash ?? GENESIS_HASH) !== at.prevHash) return broken(Math.max(last, 1));
    return { intact: true, checked: last, firstBrokenSeq: null };
  }
}

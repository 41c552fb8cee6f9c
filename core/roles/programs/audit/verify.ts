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
import sqlite3 from 'sqlite3';
import { SqliteDatabase, type Row, type SqlDatabase } from '../../../store/database.js';
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
  /** Chains with at least this many records (by their last seq) are walked as two halves at once. */
  parallelFrom?: number;
}

const DEFAULT_CHUNK = 4000;
const DEFAULT_PARALLEL_FROM = 50_000;
const RECORD_SEPARATOR = '\x1e';
const FIELD_SEPARATOR = '\x1f';

/** Hashed text columns in canonical key order (action … principalName), each read through json_quote. */
const QUOTED_COLUMNS = ['action', 'auth_method', 'category', 'details', 'entity_id', 'entity_type', 'machine', 'on_behalf_of', 'prev_hash', 'principal_name'];
/**
 * The hashed text fields as SQLite's JSON strings (or null), joined by char(31) in canonical
 * key order. One concat_ws call: SQLite builds this about 2.5x cheaper than the whole canonical
 * text with the key labels spliced in by `||`, so JavaScript adds the labels (canonicalFromQuoted).
 */
export const QUOTED_FIELDS_SQL = `concat_ws(char(31), ${QUOTED_COLUMNS.map((c) => `json_quote(${c})`).join(', ')})`;
const QUOTED_COUNT = QUOTED_COLUMNS.length;

/** The canonical text from the JSON-quoted fields in QUOTED_FIELDS_SQL order, the seq's digits and the ISO time. */
export function canonicalFromQuoted(q: readonly string[], from: number, seq: string, time: string): string {
  return `{"action":${q[from]},"authMethod":${q[from + 1]},"category":${q[from + 2]},"details":${q[from + 3]},"entityId":${q[from + 4]},"entityType":${q[from + 5]},"machine":${q[from + 6]},"onBehalfOf":${q[from + 7]},"prevHash":${q[from + 8]},"principalName":${q[from + 9]},"seq":${seq},"time":"${time}"}`;
}

// json_quote leaves no raw control character, so char(30)/char(31) in its output can only be
// separators; a separator inside the raw hash, a NULL hash (which concat_ws skips) or a
// non-integer ts changes the count of parts or leaves one empty, and sends the chunk to the
// reference path. A BLOB, which json_quote refuses, fails the whole query: reference path too.
const FAST_SQL = `SELECT count(*) AS n, max(seq) AS last, group_concat(
    concat_ws(char(31), seq, iif(typeof(ts) = 'integer', ts, ''), hash, ${QUOTED_FIELDS_SQL}),
    char(30)) AS text
  FROM (SELECT * FROM audit_log WHERE seq > ? AND seq <= ? ORDER BY seq LIMIT ?)`;
const PARTS = 3 + QUOTED_COUNT;
const PREV_HASH_PART = 3 + 8;

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
    if (parts.length !== PARTS || Number(parts[0]) !== expectedSeq || parts[PREV_HASH_PART] !== `"${prevHash}"` || parts[1] === '') return false;
    const ts = Number(parts[1]);
    if (!Number.isSafeInteger(ts) || Math.abs(ts) > 8.64e15) return false;
    const hash = parts[2] as string;
    if (sha256Hex(canonicalFromQuoted(parts, 3, parts[0] as string, isoOf(ts))) !== hash) return false;
    prevHash = hash;
    expectedSeq++;
  }
  at.expectedSeq = expectedSeq;
  at.prevHash = prevHash;
  return true;
}

/** The two reads a walk needs, on one connection. */
interface ChunkReader {
  /** Whether the fast path's SQL (SQLite's json_quote, group_concat) can run here; PostgreSQL walks the reference path only. */
  fast: boolean;
  get<T extends Row>(sql: string, params: number[]): Promise<T | undefined>;
  all<T extends Row>(sql: string, params: number[]): Promise<T[]>;
}

const LAST_SEQ = Number.MAX_SAFE_INTEGER;

/**
 * Walks records with seq in (at.expectedSeq - 1, upTo] from `at`, until a read
 * comes back empty. Returns the first broken seq, or null with `at` moved past
 * the last record read. Stops early (returning null) once `stop.done` is set.
 */
async function walk(reader: ChunkReader, at: Position, upTo: number, chunkSize: number, stop: { done: boolean }): Promise<number | null> {
  const readFast = (afterSeq: number) =>
    reader.get<FastChunk>(FAST_SQL, [afterSeq, upTo, chunkSize]).then(
      (row) => row ?? { n: 0, last: null, text: null },
      // A value json_quote refuses (a BLOB): let the reference path look.
      () => ({ n: -1, last: null, text: null }),
    );
  const readRows = (afterSeq: number) =>
    reader.all<AuditRow>(`SELECT ${AUDIT_COLUMNS} FROM audit_log WHERE seq > ? AND seq <= ? ORDER BY seq LIMIT ?`, [afterSeq, upTo, chunkSize]);
  if (!reader.fast) {
    while (!stop.done) {
      const rows = await readRows(at.expectedSeq - 1);
      if (rows.length === 0) return null;
      for (const row of rows) {
        const breakAt = breakIn(row, at);
        if (breakAt !== null) return breakAt;
        at.prevHash = row.hash;
        at.expectedSeq++;
      }
    }
    return null;
  }
  let pending = readFast(at.expectedSeq - 1);
  for (;;) {
    const chunk = await pending;
    if (stop.done) return null;
    if (chunk.n === 0) return null;
    const start = at.expectedSeq - 1;
    // Reading the next chunk overlaps with hashing this one (the query runs on libuv's pool).
    if (chunk.last !== null) pending = readFast(chunk.last);
    if (!fastChunkIntact(chunk, at)) {
      const rows = await readRows(start);
      for (const row of rows) {
        const breakAt = breakIn(row, at);
        if (breakAt !== null) return breakAt;
        at.prevHash = row.hash;
        at.expectedSeq++;
      }
      pending = readFast(at.expectedSeq - 1);
    }
  }
}

function readerOn(db: SqlDatabase): ChunkReader {
  return { fast: db.dialect.engine === 'sqlite', get: (sql, params) => db.get(sql, params), all: (sql, params) => db.all(sql, params) };
}

/** A second read-only connection to the file, so the two halves' SQL runs on two threads; null for ':memory:' and for PostgreSQL. */
async function openSecondReader(db: SqlDatabase): Promise<(ChunkReader & { close(): Promise<void> }) | null> {
  if (!(db instanceof SqliteDatabase) || db.file === ':memory:') return null;
  let conn: sqlite3.Database;
  try {
    conn = await new Promise<sqlite3.Database>((resolve, reject) => {
      const c = new sqlite3.Database(db.file, sqlite3.OPEN_READONLY, (err) => (err ? reject(err) : resolve(c)));
    });
  } catch {
    // The file cannot be opened again (e.g. removed while open): walk as one on the read connection.
    return null;
  }
  await new Promise<void>((resolve, reject) =>
    conn.exec('PRAGMA busy_timeout=5000; PRAGMA query_only=ON; PRAGMA cache_size=-32768; PRAGMA mmap_size=268435456;', (err) => (err ? reject(err) : resolve())),
  ).catch(() => undefined);
  const all = <T extends Row>(sql: string, params: number[]) =>
    new Promise<T[]>((resolve, reject) => conn.all(sql, params, (err: Error | null, rows: T[]) => (err ? reject(err) : resolve(rows))));
  return {
    fast: true,
    all,
    get: async <T extends Row>(sql: string, params: number[]) => (await all<T>(sql, params))[0],
    close: () => new Promise<void>((resolve) => conn.close(() => resolve())),
  };
}

/**
 * Verifies the chain: seq continuity from 1, each prevHash equal to the
 * previous record's hash, each hash recomputed, and the anchor in
 * audit_head equal to the last record (so a deleted tail, or records added
 * behind the anchor's back, are found too).
 *
 * A chain of at least `parallelFrom` records is walked as two halves at
 * once, the second on its own read connection: the second half starts from
 * the stored prevHash of its first record, and that seam record must then
 * link to the first half's last hash. The first break is the first half's,
 * else the seam's, else the second half's, as a single walk would find.
 */
export async function verifyChain(db: SqlDatabase, options: VerifyOptions = {}): Promise<AuditVerification> {
  const chunkSize = options.chunkSize ?? DEFAULT_CHUNK;
  const parallelFrom = options.parallelFrom ?? DEFAULT_PARALLEL_FROM;
  const reader = readerOn(db);
  const at: Position = { expectedSeq: 1, prevHash: GENESIS_HASH };
  const maxSeq = (await db.get<{ m: number | null }>('SELECT max(seq) AS m FROM audit_log'))?.m ?? 0;
  const mid = Math.floor(maxSeq / 2);
  const second = maxSeq >= parallelFrom && mid >= 1 ? await openSecondReader(db) : null;
  if (second) {
    try {
      const seam = await db.get<{ prev_hash: unknown }>('SELECT prev_hash FROM audit_log WHERE seq = ?', [mid + 1]);
      // A missing or non-text seam prevHash can never equal a hash: the seam check below then fails at mid + 1.
      const seamPrevHash = typeof seam?.prev_hash === 'string' ? seam.prev_hash : '';
      const tail: Position = { expectedSeq: mid + 1, prevHash: seamPrevHash };
      const stopSecond = { done: false };
      const secondHalf = walk(second, tail, LAST_SEQ, chunkSize, stopSecond);
      const firstBreak = await walk(reader, at, mid, chunkSize, { done: false });
      if (firstBreak !== null || at.expectedSeq !== mid + 1) {
        stopSecond.done = true;
        await secondHalf;
        // A first half that ends early lost its last records: the first missing seq is the break.
        return broken(firstBreak ?? at.expectedSeq);
      }
      const secondBreak = await secondHalf;
      if (seamPrevHash !== at.prevHash) return broken(mid + 1);
      if (secondBreak !== null) return broken(secondBreak);
      at.expectedSeq = tail.expectedSeq;
      at.prevHash = tail.prevHash;
    } finally {
      await second.close();
    }
  } else {
    const breakAt = await walk(reader, at, LAST_SEQ, chunkSize, { done: false });
    if (breakAt !== null) return broken(breakAt);
  }
  for (let recheckedTail = false; ; recheckedTail = true) {
    const last = at.expectedSeq - 1;
    const anchor = await db.get<{ seq: number; hash: string }>('SELECT seq, hash FROM audit_head WHERE id = 1');
    // A missing anchor row reads as the genesis anchor: zero records.
    const anchorSeq = anchor?.seq ?? 0;
    if (anchorSeq > last && !recheckedTail) {
      // Records committed after the empty read moved the anchor; read once more before calling it truncated.
      const breakAt = await walk(reader, at, LAST_SEQ, chunkSize, { done: false });
      if (breakAt !== null) return broken(breakAt);
      continue;
    }
    if (anchorSeq > last) return broken(last + 1);
    if (anchorSeq < last) return broken(anchorSeq + 1);
    if ((anchor?.hash ?? GENESIS_HASH) !== at.prevHash) return broken(Math.max(last, 1));
    return { intact: true, checked: last, firstBrokenSeq: null };
  }
}

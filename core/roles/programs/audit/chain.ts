/**
 * The hash-chained audit log. Every change appends its record inside the
 * change's own write transaction, so both commit or roll back together.
 * Each record's hash covers its fields and the previous record's hash;
 * verify() walks the chain and names the first record that does not check
 * out. See docs/audit.md.
 */
import type { SqlDatabase, WriteTx } from '../../../store/database.js';
import { csvHeader, csvLine, type CsvOptions } from './csv.js';
import { readRows, resolveFilter, resolvePage, encodeCursor, type AuditFilter, type AuditOrder, type AuditPageRequest } from './query.js';
import { type AuditEntry, type AuditRecord, type PreparedEntry, prepareEntry, recordHash, recordOf } from './record.js';
import { ensureAuditSchema, GENESIS_HASH } from './schema.js';
import { verifyChain, type AuditVerification, type VerifyOptions } from './verify.js';

export { AUDIT_SCHEMA_STATEMENTS, ensureAuditSchema, GENESIS_HASH } from './schema.js';
export type { AuditEntry, AuditRecord } from './record.js';
export type { AuditFilter, AuditOrder, AuditPageRequest } from './query.js';
export { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE, TIME_FORMS } from './query.js';
export type { AuditVerification } from './verify.js';
export type { CsvOptions } from './csv.js';

/** The last record of the chain: what an external anchor records. */
export interface AuditHead {
  seq: number;
  hash: string;
}

interface HeadState extends AuditHead {
  /** Unix ms of the last record; a new record's time is never earlier. */
  ts: number;
}

export interface AuditChainOptions {
  /** IANA zone in which a calendar date in `from`/`to` is read. */
  timeZone: string;
  /** Unix ms for a new record's time; Date.now by default. */
  clock?: () => number;
}

export interface AuditPage {
  records: AuditRecord[];
  /** Pass as `cursor` for the next page; null on the last page. */
  nextCursor: string | null;
}

/** Rows per multi-row INSERT: 13 parameters each stays under SQLite's 32,766. */
const INSERT_ROWS = 1000;
const INSERT_SQL_PREFIX =
  'INSERT INTO audit_log (seq, ts, principal_name, on_behalf_of, auth_method, category, action, entity_type, entity_id, machine, details, prev_hash, hash) VALUES ';
const ROW_PLACEHOLDERS = '(?,?,?,?,?,?,?,?,?,?,?,?,?)';
const EXPORT_PAGE = 1000;

function readHead(reader: Pick<WriteTx, 'get'>): Promise<HeadState> {
  return reader
    .get<{ seq: number; hash: string; ts: number | null }>(
      'SELECT h.seq AS seq, h.hash AS hash, l.ts AS ts FROM audit_head h LEFT JOIN audit_log l ON l.seq = h.seq WHERE h.id = 1',
    )
    .then((row) => ({ seq: row?.seq ?? 0, hash: row?.hash ?? GENESIS_HASH, ts: row?.ts ?? 0 }));
}

/** The lock every instance's appends take, so the head each reads is the one it continues. */
export const AUDIT_CHAIN_LOCK = 'audit-chain';

export class AuditChain {
  /** Appends run one after another even when a caller starts several without awaiting. */
  private appending: Promise<unknown> = Promise.resolve();
  private readonly clock: () => number;

  private constructor(
    private readonly db: SqlDatabase,
    private readonly options: AuditChainOptions,
  ) {
    this.clock = options.clock ?? Date.now;
  }

  /** Creates the audit tables if missing. */
  static async open(db: SqlDatabase, options: AuditChainOptions): Promise<AuditChain> {
    await ensureAuditSchema(db);
    return new AuditChain(db, options);
  }

  /**
   * Appends one record inside the caller's write transaction
   * (`db.write(fn, { transaction: true })`); it commits or rolls back with
   * the caller's change. Throws INVALID_PARAMETER for a bad entry.
   */
  async append(tx: WriteTx, entry: AuditEntry): Promise<AuditRecord> {
    return (await this.appendMany(tx, [entry]))[0] as AuditRecord;
  }

  /** Appends several records, in order, inside the caller's write transaction. */
  appendMany(tx: WriteTx, entries: readonly AuditEntry[]): Promise<AuditRecord[]> {
    let prepared: PreparedEntry[];
    try {
      prepared = entries.map(prepareEntry);
    } catch (err) {
      return Promise.reject(err);
    }
    const task = () => this.insert(tx, prepared);
    const result = this.appending.then(task, task);
    this.appending = result.catch(() => undefined);
    return result;
  }

  /**
   * Continues the chain from the head the database holds, read under the
   * chain's lock inside the caller's transaction: another instance on the
   * same database cannot move it until this transaction ends, and a head
   * kept in memory could be stale (another instance's append, a rollback).
   * The lock is held to the end of the transaction (nothing on SQLite, whose
   * write transaction already holds the database).
   */
  private async insert(tx: WriteTx, prepared: PreparedEntry[]): Promise<AuditRecord[]> {
    await tx.lock(AUDIT_CHAIN_LOCK);
    return this.insertFrom(tx, prepared, await readHead(tx));
  }

  private async insertFrom(tx: WriteTx, prepared: PreparedEntry[], start: HeadState): Promise<AuditRecord[]> {
    const records: AuditRecord[] = [];
    let head = start;
    for (let i = 0; i < prepared.length; i += INSERT_ROWS) {
      const params: (string | number | null)[] = [];
      const part = prepared.slice(i, i + INSERT_ROWS);
      for (const entry of part) {
        // Whole milliseconds (what the ISO time shows), never going backwards along the chain,
        // even when the clock is set back.
        const ts = Math.max(Math.floor(this.clock()), head.ts);
        const fields = { ...entry, seq: head.seq + 1, time: new Date(ts).toISOString(), prevHash: head.hash };
        const hash = recordHash(fields);
        params.push(fields.seq, ts, entry.principalName, entry.onBehalfOf, entry.authMethod, entry.category, entry.action);
        params.push(entry.entityType, entry.entityId, entry.machine, entry.details, fields.prevHash, hash);
        records.push({ ...fields, details: entry.details === null ? null : (JSON.parse(entry.details) as Record<string, unknown>), hash });
        head = { seq: fields.seq, hash, ts };
      }
      await tx.run(INSERT_SQL_PREFIX + part.map(() => ROW_PLACEHOLDERS).join(','), params);
    }
    return records;
  }

  /** The last committed record's seq and hash (seq 0 and GENESIS_HASH when empty), for external anchoring. */
  async committedHead(): Promise<AuditHead> {
    const head = await readHead(this.db);
    return { seq: head.seq, hash: head.hash };
  }

  /** One page of the records matching `filter` (PV-40), newest first by default. */
  async query(filter: AuditFilter, page: AuditPageRequest = {}): Promise<AuditPage> {
    const { limit, order, afterSeq } = resolvePage(page);
    const resolved = await resolveFilter(this.db, filter, this.options.timeZone);
    const rows = await readRows(this.db, resolved, order, afterSeq, limit + 1);
    const more = rows.length > limit;
    const records = rows.slice(0, limit).map(recordOf);
    const last = records[records.length - 1];
    return { records, nextCursor: more && last ? encodeCursor(order, last.seq) : null };
  }

  /**
   * The records matching `filter` as RFC 4180 CSV text chunks: a header row,
   * then one chunk per page of 1000 records, oldest first by default.
   */
  async *exportCsv(filter: AuditFilter, options: CsvOptions & { order?: AuditOrder } = {}): AsyncGenerator<string> {
    const guard = options.guardFormulas ?? true;
    // Checked before the header is yielded, so a bad filter fails before any byte is sent.
    const { order } = resolvePage({ order: options.order ?? 'oldest' });
    const resolved = await resolveFilter(this.db, filter, this.options.timeZone);
    yield csvHeader();
    let afterSeq: number | null = null;
    for (;;) {
      const rows = await readRows(this.db, resolved, order, afterSeq, EXPORT_PAGE);
      if (rows.length === 0) return;
      yield rows.map((row) => csvLine(row, guard)).join('');
      if (rows.length < EXPORT_PAGE) return;
      afterSeq = (rows[rows.length - 1] as (typeof rows)[number]).seq;
    }
  }

  /** Verifies the whole chain (PV-15): `{intact, checked, firstBrokenSeq}`. */
  verify(options: VerifyOptions = {}): Promise<AuditVerification> {
    return verifyChain(this.db, options);
  }
}

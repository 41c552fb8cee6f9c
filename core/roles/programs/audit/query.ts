/**
 * Selecting audit records: the filters of GET /audit and /audit/export
 * (PV-40), `from`/`to` as a calendar date in the service's zone or an
 * ISO-8601 instant (PV-41), and cursor paging by seq.
 */
import { GatewayError } from '../../../interfaces/errors.js';
import { parseTimeParam } from '../../../interfaces/time-params.js';
import type { SqlDatabase, SqlValue } from '../../../store/database.js';
import { AUDIT_COLUMNS, type AuditRow } from './record.js';

/** Filters of GET /audit; every one given must match. */
export interface AuditFilter {
  principalName?: string;
  machine?: string;
  entityType?: string;
  entityId?: string;
  category?: string;
  /** Inclusive: a date (local midnight at its start) or an ISO-8601 instant with an offset. */
  from?: string;
  /** Exclusive instant, or a date meaning up to the end of that day (inclusive of the day). */
  to?: string;
  /**
   * An SQL condition over audit_log's columns that every record must meet as well: the
   * caller's scope, built by the program service (never text from a client). It is part
   * of the query, so pages and cursors count only the records it lets through.
   */
  scope?: AuditCondition;
}

/** A boolean SQL expression over audit_log's columns and its `?` parameters, in order. */
export interface AuditCondition {
  sql: string;
  params: SqlValue[];
}

export type AuditOrder = 'newest' | 'oldest';

export interface AuditPageRequest {
  /** 1..MAX_PAGE_SIZE; DEFAULT_PAGE_SIZE when absent. */
  limit?: number;
  /** nextCursor of the previous page. */
  cursor?: string;
  /** newest first unless given; a cursor keeps the order it was made for. */
  order?: AuditOrder;
}

export const DEFAULT_PAGE_SIZE = 100;
export const MAX_PAGE_SIZE = 1000;

const EQUALITY_FILTERS = [
  ['principalName', 'principal_name'],
  ['machine', 'machine'],
  ['entityType', 'entity_type'],
  ['entityId', 'entity_id'],
  ['category', 'category'],
] as const;

const DATE_RE = /^\d{4}-\d{2}-\d{2}$/;
const INSTANT_RE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:\d{2})$/i;
/** The forms a time filter (`from`, `to`) takes, as the API describes them. */
export const TIME_FORMS = 'a calendar date YYYY-MM-DD (read in the service time zone) or an ISO-8601 instant with an offset';
/** The same, with an example, for a refused value. */
const TIME_FORMS_ACCEPTED = `${TIME_FORMS}, e.g. 2026-11-24T08:00:00Z`;

/** A filter resolved to SQL conditions; `empty` when no record can match. */
export interface ResolvedFilter {
  where: string[];
  params: SqlValue[];
  empty: boolean;
}

function invalid(field: string, detail: string): GatewayError {
  return new GatewayError('INVALID_PARAMETER', `${field}: ${detail}`);
}

/** Whether YYYY-MM-DD names a day that exists (no month 13, no 31 April, no 29 February outside leap years). */
function isCalendarDate(date: string): boolean {
  const [y, m, d] = date.split('-').map(Number) as [number, number, number];
  return new Date(Date.UTC(y, m - 1, d)).toISOString().slice(0, 10) === date;
}

/** The date after `date` (YYYY-MM-DD), by calendar arithmetic. */
function nextDate(date: string): string {
  const [y, m, d] = date.split('-').map(Number) as [number, number, number];
  return new Date(Date.UTC(y, m - 1, d + 1)).toISOString().slice(0, 10);
}

/** `from`/`to` as unix ms: a date is local midnight in `timeZone`; `to` as a date is the next day's midnight. */
export function resolveTimeBound(field: 'from' | 'to', value: unknown, timeZone: string): number {
  if (typeof value !== 'string' || !(DATE_RE.test(value) || INSTANT_RE.test(value))) {
    throw invalid(field, `found ${JSON.stringify(value)}; accepted: ${TIME_FORMS_ACCEPTED}`);
  }
  const isDate = DATE_RE.test(value);
  if (isDate && !isCalendarDate(value)) throw invalid(field, `found ${JSON.stringify(value)}: no such date; accepted: ${TIME_FORMS_ACCEPTED}`);
  try {
    // core/interfaces/time-params.ts resolves a date to local midnight in the zone, DST days included.
    return parseTimeParam(field === 'to' && isDate ? nextDate(value) : value, { timeZone, now: 0, field });
  } catch {
    throw invalid(field, `found ${JSON.stringify(value)}: no such date or time, or outside the years 1970-9999; accepted: ${TIME_FORMS_ACCEPTED}`);
  }
}

/** Checks the filter and turns it into SQL; throws INVALID_PARAMETER naming the field. */
export async function resolveFilter(db: SqlDatabase, filter: AuditFilter, timeZone: string): Promise<ResolvedFilter> {
  const where: string[] = [];
  const params: SqlValue[] = [];
  for (const [field, column] of EQUALITY_FILTERS) {
    const value: unknown = filter[field];
    if (value === undefined) continue;
    if (typeof value !== 'string' || value.length === 0) throw invalid(field, `found ${JSON.stringify(value)}; accepted: a non-empty string`);
    where.push(`${column} = ?`);
    params.push(value);
  }
  if (filter.scope) {
    where.push(`(${filter.scope.sql})`);
    params.push(...filter.scope.params);
  }
  const fromMs = filter.from === undefined ? undefined : resolveTimeBound('from', filter.from, timeZone);
  const toMs = filter.to === undefined ? undefined : resolveTimeBound('to', filter.to, timeZone);
  if (fromMs !== undefined && toMs !== undefined && toMs <= fromMs) {
    throw invalid('to', `found ${JSON.stringify(filter.to)}, not later than from ${JSON.stringify(filter.from)}`);
  }
  // Record times never go backwards along the chain, so a time window is a seq range: the
  // pages then run on the primary key or a (column, seq) index whatever the window's size.
  let empty = false;
  if (fromMs !== undefined) {
    const first = await db.get<{ seq: number }>('SELECT seq FROM audit_log WHERE ts >= ? ORDER BY ts, seq LIMIT 1', [fromMs]);
    if (first) {
      where.push('seq >= ?', 'ts >= ?');
      params.push(first.seq, fromMs);
    } else empty = true;
  }
  if (toMs !== undefined) {
    const last = await db.get<{ seq: number }>('SELECT seq FROM audit_log WHERE ts < ? ORDER BY ts DESC, seq DESC LIMIT 1', [toMs]);
    if (last) {
      where.push('seq <= ?', 'ts < ?');
      params.push(last.seq, toMs);
    } else empty = true;
  }
  return { where, params, empty };
}

/** An opaque cursor: the order and the last seq returned. */
export function encodeCursor(order: AuditOrder, seq: number): string {
  return Buffer.from(`${order === 'newest' ? 'n' : 'o'}${seq}`).toString('base64url');
}

/** Reads a cursor back; throws INVALID_PARAMETER for anything this module did not make. */
export function decodeCursor(cursor: unknown): { order: AuditOrder; seq: number } {
  const text = typeof cursor === 'string' && /^[A-Za-z0-9_-]{1,32}$/.test(cursor) ? Buffer.from(cursor, 'base64url').toString() : '';
  const m = /^([no])(\d{1,15})$/.exec(text);
  if (!m) throw invalid('cursor', 'not a cursor this service issued; pass nextCursor of the previous page unchanged, or omit it for the first page');
  return { order: m[1] === 'n' ? 'newest' : 'oldest', seq: Number(m[2]) };
}

/** Checks limit, cursor and order together. */
export function resolvePage(page: AuditPageRequest): { limit: number; order: AuditOrder; afterSeq: number | null } {
  const limit = page.limit ?? DEFAULT_PAGE_SIZE;
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_PAGE_SIZE) {
    throw invalid('limit', `found ${JSON.stringify(page.limit)}; accepted: an integer from 1 to ${MAX_PAGE_SIZE} (default ${DEFAULT_PAGE_SIZE})`);
  }
  if (page.order !== undefined && page.order !== 'newest' && page.order !== 'oldest') {
    throw invalid('order', `found ${JSON.stringify(page.order)}; accepted: newest, oldest`);
  }
  if (page.cursor === undefined) return { limit, order: page.order ?? 'newest', afterSeq: null };
  const cursor = decodeCursor(page.cursor);
  if (page.order !== undefined && page.order !== cursor.order) {
    throw invalid('order', `found ${page.order}, but the cursor continues a ${cursor.order}-first listing; omit order or start again without cursor`);
  }
  return { limit, order: cursor.order, afterSeq: cursor.seq };
}

/** Up to `limit` rows of the selection after `afterSeq` in `order`. */
export function readRows(db: SqlDatabase, filter: ResolvedFilter, order: AuditOrder, afterSeq: number | null, limit: number): Promise<AuditRow[]> {
  if (filter.empty) return Promise.resolve([]);
  const where = [...filter.where];
  const params = [...filter.params];
  if (afterSeq !== null) {
    where.push(order === 'newest' ? 'seq < ?' : 'seq > ?');
    params.push(afterSeq);
  }
  params.push(limit);
  const clause = where.length ? `WHERE ${where.join(' AND ')}` : '';
  return db.all<AuditRow>(`SELECT ${AUDIT_COLUMNS} FROM audit_log ${clause} ORDER BY seq ${order === 'newest' ? 'DESC' : 'ASC'} LIMIT ?`, params);
}

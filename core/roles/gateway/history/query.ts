/**
 * The read-only query builder over the history table. Every statement it
 * builds is one SELECT assembled from constant fragments: column names and
 * operators come from the whitelists below, the index is named explicitly,
 * and every value a client sends — machineID, class, bounds, filter values
 * and JSON paths alike — travels as a bound parameter. No client text is
 * ever pasted into SQL, so a client cannot change what the statement does,
 * only which rows it selects. See docs/history.md.
 */
import { GatewayError } from '../../../interfaces/errors.js';
import type { SqlValue } from '../../../store/database.js';

/** The (machine_id, class, ts) index every history read goes through. */
export const HISTORY_INDEX = 'history_machine_class_ts';

/** Row fields a filter may compare, with the SQL column each stands for. */
const FILTER_COLUMNS = { seq: 'seq', machineID: 'machine_id', class: 'class' } as const;
type FilterColumn = keyof typeof FILTER_COLUMNS;

/** Row fields a projection may select besides `data.<path>`; seq and time are always returned. */
export const PROJECTION_FIELDS = ['machineID', 'class', 'data'] as const;

export const FILTER_OPERATORS = ['=', '!=', '<', '<=', '>', '>=', 'in', 'notIn', 'like'] as const;
export type FilterOperator = (typeof FILTER_OPERATORS)[number];

const OPERATOR_SQL: Record<FilterOperator, string> = {
  '=': '=',
  '!=': '<>',
  '<': '<',
  '<=': '<=',
  '>': '>',
  '>=': '>=',
  in: 'IN',
  notIn: 'NOT IN',
  like: 'LIKE',
};

/** `data.a.b[0]`: segments of letters, digits and `_`, or an array index; at most 8 deep. */
const DATA_PATH_RE = /^data(?:\.[A-Za-z_][A-Za-z0-9_]{0,63}|\[\d{1,4}\]){1,8}$/;
export const DATA_PATH_FORM = 'data.<path> (segments of letters, digits and _ joined by ".", array indexes as [n], at most 8 deep, e.g. data.state, data.axes[0].name)';

export const FILTER_FIELDS_TEXT = `${Object.keys(FILTER_COLUMNS).join(', ')}, ${DATA_PATH_FORM}`;
export const PROJECTION_FIELDS_TEXT = `${PROJECTION_FIELDS.join(', ')}, ${DATA_PATH_FORM}`;

/** Most values an `in`/`notIn` list may hold. */
export const MAX_LIST_VALUES = 100;

export type FilterScalar = string | number | boolean | null;

/** One condition on a history row: `{field: 'data.state', op: '=', value: 'alarm'}`. */
export interface HistoryFilter {
  field: string;
  op: FilterOperator;
  value: FilterScalar | (string | number | boolean)[];
}

export function isDataPath(field: string): boolean {
  return DATA_PATH_RE.test(field);
}

export function isFilterField(field: string): boolean {
  return Object.hasOwn(FILTER_COLUMNS, field) || isDataPath(field);
}

export function isProjectionField(field: string): boolean {
  return (PROJECTION_FIELDS as readonly string[]).includes(field) || isDataPath(field);
}

/** The SQLite JSON path of a `data.<path>` field: `data.axes[0].name` → `$.axes[0].name`. */
export function jsonPathOf(field: string): string {
  return `$${field.slice('data'.length)}`;
}

const isScalar = (v: unknown): v is string | number | boolean => typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean';

/** What is wrong with a filter: the key at fault and what it accepts. */
export interface FilterProblem {
  key: 'field' | 'op' | 'value';
  accepted: string;
}

/** Why a filter cannot be built (field, operator and value checked together), or null when it can. */
export function filterProblem(filter: HistoryFilter): FilterProblem | null {
  const { field, op, value } = filter;
  if (!isFilterField(field)) return { key: 'field', accepted: `accepted: ${FILTER_FIELDS_TEXT}` };
  if (!(FILTER_OPERATORS as readonly string[]).includes(op)) return { key: 'op', accepted: `accepted: ${FILTER_OPERATORS.join(', ')}` };
  const problem = (accepted: string): FilterProblem => ({ key: 'value', accepted });
  if (op === 'in' || op === 'notIn') {
    if (!Array.isArray(value) || value.length === 0 || value.length > MAX_LIST_VALUES || !value.every(isScalar)) {
      return problem(`op '${op}' takes a list of 1 to ${MAX_LIST_VALUES} strings, numbers or booleans`);
    }
  } else if (Array.isArray(value)) {
    return problem(`op '${op}' takes one value; use 'in' or 'notIn' for a list`);
  } else if (value === null && op !== '=' && op !== '!=') {
    return problem(`null is accepted only with '=' (the field is missing) and '!=' (the field is present)`);
  } else if (op === 'like' && typeof value !== 'string') {
    return problem(`op 'like' takes a string pattern (% any run, _ any one character)`);
  } else if (typeof value === 'boolean' && op !== '=' && op !== '!=') {
    return problem(`a boolean is accepted only with '=' and '!='`);
  } else if (!isScalar(value) && value !== null) {
    return problem('a string, number, boolean or null');
  }
  const values: unknown[] = Array.isArray(value) ? value : [value];
  if (field === 'seq' && !values.every((v) => typeof v === 'number' || v === null)) return problem(`field 'seq' compares with numbers`);
  if ((field === 'machineID' || field === 'class') && !values.every((v) => typeof v === 'string' || v === null)) {
    return problem(`field '${field}' compares with strings`);
  }
  return null;
}

/** JSON true/false come out of `->>` as 1/0; compare with those. */
const bindable = (v: string | number | boolean): SqlValue => (typeof v === 'boolean' ? (v ? 1 : 0) : v);

/** A SELECT under construction: text fragments from this module only, values as parameters, in text order. */
class SelectBuilder {
  private readonly parts: string[] = [];
  readonly params: SqlValue[] = [];

  add(fragment: string, ...params: SqlValue[]): this {
    this.parts.push(fragment);
    this.params.push(...params);
    return this;
  }

  get sql(): string {
    return this.parts.join(' ');
  }
}

function addFilter(q: SelectBuilder, filter: HistoryFilter): void {
  const problem = filterProblem(filter);
  // The interfaces validate first; this keeps the builder safe even when called directly.
  if (problem) throw new GatewayError('INVALID_PARAMETER', `where.${problem.key}: found ${JSON.stringify(filter[problem.key])}; ${problem.accepted}`);
  const { field, op, value } = filter;
  const column = Object.hasOwn(FILTER_COLUMNS, field) ? FILTER_COLUMNS[field as FilterColumn] : null;
  const lhs = column ?? '(data ->> ?)';
  const lhsParams: SqlValue[] = column ? [] : [jsonPathOf(field)];
  if (value === null) {
    q.add(`AND ${lhs} ${op === '=' ? 'IS NULL' : 'IS NOT NULL'}`, ...lhsParams);
  } else if (Array.isArray(value)) {
    q.add(`AND ${lhs} ${OPERATOR_SQL[op]} (${value.map(() => '?').join(', ')})`, ...lhsParams, ...value.map(bindable));
  } else {
    q.add(`AND ${lhs} ${OPERATOR_SQL[op]} ?`, ...lhsParams, bindable(value));
  }
}

/** Where a chunked read of one cursor resumes: after this row, in the cursor's order. */
export interface KeysetPosition {
  ts: number;
  seq: number;
}

/** One (machine, class) run of history rows, read in (time, seq) order over [startMs, endMs). */
export interface HistoryCursorSpec {
  machineID: string;
  cls: string;
  startMs: number;
  endMs: number;
  order: 'asc' | 'desc';
  /** Only rows with seq greater than this. */
  afterSeq?: number | undefined;
  filters?: readonly HistoryFilter[] | undefined;
  /** Select the whole `data` text. */
  withData?: boolean | undefined;
  /** `data.<path>` fields to select, each as the JSON text of that part of `data`. */
  dataPaths?: readonly string[] | undefined;
}

/** A built statement: SQL text made of this module's fragments, and its parameters. */
export interface BuiltQuery {
  sql: string;
  params: SqlValue[];
}

/** Column alias of the i-th selected data path. */
export const dataPathColumn = (i: number): string => `p${i}`;

/**
 * The SELECT for the next `limit` rows of one cursor, resuming after `after`.
 * It always searches the (machine_id, class, ts) index, whose order (ts, then
 * rowid = seq) is the answer's order, so SQLite neither scans nor sorts.
 */
export function buildCursorQuery(spec: HistoryCursorSpec, after: KeysetPosition | null, limit: number): BuiltQuery {
  if (!Number.isInteger(limit) || limit < 1) throw new Error(`chunk limit must be a positive integer, got ${limit}`);
  const paths = spec.dataPaths ?? [];
  for (const path of paths) {
    if (!isDataPath(path)) throw new GatewayError('INVALID_PARAMETER', `fields: found ${JSON.stringify(path)}; accepted: ${PROJECTION_FIELDS_TEXT}`);
  }
  const q = new SelectBuilder();
  q.add(`SELECT seq, ts, machine_id, class${spec.withData ? ', data' : ''}`);
  paths.forEach((path, i) => q.add(`, (data -> ?) AS ${dataPathColumn(i)}`, jsonPathOf(path)));
  q.add(`FROM history INDEXED BY ${HISTORY_INDEX}`);
  q.add('WHERE machine_id = ? AND class = ? AND ts >= ? AND ts < ?', spec.machineID, spec.cls, spec.startMs, spec.endMs);
  if (spec.afterSeq !== undefined) q.add('AND seq > ?', spec.afterSeq);
  if (after) {
    // The range on ts keeps the index search; the OR only settles ties within one millisecond.
    if (spec.order === 'asc') q.add('AND ts >= ? AND (ts > ? OR seq > ?)', after.ts, after.ts, after.seq);
    else q.add('AND ts <= ? AND (ts < ? OR seq < ?)', after.ts, after.ts, after.seq);
  }
  for (const filter of spec.filters ?? []) addFilter(q, filter);
  q.add(spec.order === 'asc' ? 'ORDER BY ts ASC, seq ASC' : 'ORDER BY ts DESC, seq DESC');
  q.add('LIMIT ?', limit);
  return { sql: q.sql, params: q.params };
}

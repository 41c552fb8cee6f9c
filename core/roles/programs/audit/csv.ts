/**
 * RFC 4180 CSV of audit records, for GET /audit/export?format=csv (PV-40).
 */
import type { AuditRow } from './record.js';

/** Column names of the header row, in order. */
export const CSV_COLUMNS = [
  'seq',
  'time',
  'principalName',
  'onBehalfOf',
  'authMethod',
  'category',
  'action',
  'entityType',
  'entityId',
  'machine',
  'details',
  'prevHash',
  'hash',
] as const;

export interface CsvOptions {
  /**
   * Prefix a cell that a spreadsheet would read as a formula (first character
   * = + - @ TAB CR) with a single quote, as OWASP recommends; a cell that
   * already starts with a quote gets one too, so a reader strips exactly one
   * leading quote to get the value back. Default true.
   */
  guardFormulas?: boolean;
}

const FORMULA_START = /^[=+\-@\t\r']/;
const NEEDS_QUOTES = /[",\r\n]/;

/** One CSV field: null is empty; quoted when it holds a comma, quote, CR or LF, quotes doubled. */
export function csvField(value: string | number | null, guardFormulas: boolean): string {
  if (value === null) return '';
  let text = String(value);
  if (guardFormulas && FORMULA_START.test(text)) text = `'${text}`;
  return NEEDS_QUOTES.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/** The header line, CRLF-terminated. */
export function csvHeader(): string {
  return `${CSV_COLUMNS.join(',')}\r\n`;
}

/** One record as a CRLF-terminated line; details is its canonical JSON text as stored. */
export function csvLine(row: AuditRow, guardFormulas: boolean): string {
  const cells: (string | number | null)[] = [
    row.seq,
    new Date(row.ts).toISOString(),
    row.principal_name,
    row.on_behalf_of,
    row.auth_method,
    row.category,
    row.action,
    row.entity_type,
    row.entity_id,
    row.machine,
    row.details,
    row.prev_hash,
    row.hash,
  ];
  return `${cells.map((c) => csvField(c, guardFormulas)).join(',')}\r\n`;
}

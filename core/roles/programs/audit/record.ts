/**
 * One audit record: what a caller gives, what is stored, and the canonical
 * text its hash is computed over.
 *
 * The hashed record is the flat object
 *   {action, authMethod, category, details, entityId, entityType, machine,
 *    onBehalfOf, prevHash, principalName, seq, time}
 * canonicalised by RFC 8785, where `details` is the canonical JSON text of the
 * details (a string, or null) and `time` is the ISO-8601 UTC instant with
 * milliseconds. `hash` = lowercase hex SHA-256 of that text's UTF-8 bytes.
 */
import canonicalize from 'canonicalize';
import crypto from 'node:crypto';
import { GatewayError } from '../../../interfaces/errors.js';
import { isWellFormedText } from '../../../values/well-formed.js';
import type { AuditActor } from '../../../rest/principal.js';

/** What a caller records: who acted (core/rest/principal.ts `auditActor`) and what; the chain adds seq, time, prevHash and hash. */
export interface AuditEntry extends AuditActor {
  category: string;
  action: string;
  entityType?: string | null;
  entityId?: string | null;
  machine?: string | null;
  /** A JSON object; stored and hashed as its RFC 8785 text. */
  details?: Record<string, unknown> | null;
}

/** The fields the hash covers, with details as canonical JSON text. */
export interface HashedFields {
  seq: number;
  time: string;
  principalName: string;
  onBehalfOf: string | null;
  authMethod: string;
  category: string;
  action: string;
  entityType: string | null;
  entityId: string | null;
  machine: string | null;
  details: string | null;
  prevHash: string;
}

/** A stored record as callers read it: the hashed fields with details parsed, and its hash. */
export type AuditRecord = Omit<HashedFields, 'details'> & { details: Record<string, unknown> | null; hash: string };

/** A row of audit_log as SQLite returns it. */
export interface AuditRow {
  [column: string]: unknown;
  seq: number;
  ts: number;
  principal_name: string;
  on_behalf_of: string | null;
  auth_method: string;
  category: string;
  action: string;
  entity_type: string | null;
  entity_id: string | null;
  machine: string | null;
  details: string | null;
  prev_hash: string;
  hash: string;
}

export const AUDIT_COLUMNS =
  'seq, ts, principal_name, on_behalf_of, auth_method, category, action, entity_type, entity_id, machine, details, prev_hash, hash';

/** Longest text field accepted; a record is a line of evidence, not a document store. */
export const MAX_FIELD_LENGTH = 1024;
/** Longest canonical details text accepted. */
export const MAX_DETAILS_LENGTH = 65_536;

function jsonString(value: string | null): string {
  if (value === null) return 'null';
  // A lone surrogate: RFC 8785 (and the canonicalize library) refuse it and UTF-8 cannot store it.
  if (!isWellFormedText(value)) throw new Error('Lone surrogate is not allowed');
  return JSON.stringify(value);
}

/**
 * RFC 8785 text of the hashed record, built directly for its fixed shape:
 * keys in UTF-16 order, strings and the integer seq as JSON.stringify writes
 * them (which is what RFC 8785 prescribes). Byte-identical to
 * canonicalize(fields), which test/core/roles/programs/audit/canonical.test.ts checks
 * over random records; about 10x faster, which verify needs.
 */
export function canonicalText(f: HashedFields): string {
  return (
    `{"action":${jsonString(f.action)},"authMethod":${jsonString(f.authMethod)},"category":${jsonString(f.category)}` +
    `,"details":${jsonString(f.details)},"entityId":${jsonString(f.entityId)},"entityType":${jsonString(f.entityType)}` +
    `,"machine":${jsonString(f.machine)},"onBehalfOf":${jsonString(f.onBehalfOf)},"prevHash":${jsonString(f.prevHash)}` +
    `,"principalName":${jsonString(f.principalName)},"seq":${JSON.stringify(f.seq)},"time":${jsonString(f.time)}}`
  );
}

/** The reference form: the library's canonicalisation of the same fields. */
export function canonicalTextByLibrary(f: HashedFields): string {
  const text = canonicalize(f);
  if (text === undefined) throw new Error('record has no JSON form');
  return text;
}

/** Lowercase hex SHA-256 of UTF-8 text; the one-shot crypto.hash (Node 20.12+) is twice as fast as createHash. */
export const sha256Hex: (text: string) => string =
  typeof crypto.hash === 'function'
    ? (text) => crypto.hash('sha256', text, 'hex')
    : (text) => crypto.createHash('sha256').update(text).digest('hex');

/** Lowercase hex SHA-256 of the record's canonical text. */
export function recordHash(f: HashedFields): string {
  return sha256Hex(canonicalText(f));
}

/** The hashed fields of a stored row. */
export function hashedFieldsOf(row: AuditRow): HashedFields {
  return {
    seq: row.seq,
    time: new Date(row.ts).toISOString(),
    principalName: row.principal_name,
    onBehalfOf: row.on_behalf_of,
    authMethod: row.auth_method,
    category: row.category,
    action: row.action,
    entityType: row.entity_type,
    entityId: row.entity_id,
    machine: row.machine,
    details: row.details,
    prevHash: row.prev_hash,
  };
}

/** How many characters of details that are not a JSON object a reader is shown. */
const UNREADABLE_DETAILS_SHOWN = 256;

/**
 * Stored details as readers see them. The service writes a JSON object; text
 * that is not one was written behind its back (`/audit/verify` says whether
 * the chain still holds) and is shown as the start of that text under
 * `unreadable`, so one such row never turns a whole listing into an error.
 */
function detailsOf(text: string): Record<string, unknown> {
  try {
    const parsed: unknown = JSON.parse(text);
    if (parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)) return parsed as Record<string, unknown>;
  } catch {
    // shown below
  }
  return { unreadable: text.slice(0, UNREADABLE_DETAILS_SHOWN) };
}

/** The record a stored row shows to readers. */
export function recordOf(row: AuditRow): AuditRecord {
  // The hashed fields as stored, with details parsed for readers and the record's own hash.
  return {
    ...hashedFieldsOf(row),
    details: row.details === null ? null : detailsOf(row.details),
    hash: row.hash,
  };
}

function invalid(field: string, accepted: string): GatewayError {
  return new GatewayError('INVALID_PARAMETER', `audit record ${field}: ${accepted}`);
}

function text(entry: AuditEntry, field: keyof AuditEntry, required: boolean): string | null {
  const value = entry[field];
  if (value === undefined || value === null) {
    if (required) throw invalid(field, 'required, a non-empty string');
    return null;
  }
  if (typeof value !== 'string' || value.length === 0 || value.length > MAX_FIELD_LENGTH || !isWellFormedText(value)) {
    throw invalid(field, `${required ? '' : 'null or '}a non-empty string of at most ${MAX_FIELD_LENGTH} characters, valid Unicode`);
  }
  return value;
}

/** A checked entry with its details canonicalised, ready to be chained. */
export type PreparedEntry = Omit<HashedFields, 'seq' | 'time' | 'prevHash'>;

/** Checks an entry and canonicalises its details; throws INVALID_PARAMETER naming the field. */
export function prepareEntry(entry: AuditEntry): PreparedEntry {
  let details: string | null = null;
  if (entry.details !== undefined && entry.details !== null) {
    const d: unknown = entry.details;
    if (typeof d !== 'object' || Array.isArray(d)) throw invalid('details', 'null or a JSON object');
    let canonical: string | undefined;
    try {
      canonical = canonicalize(d);
    } catch (err) {
      throw invalid('details', `a JSON object (${err instanceof Error ? err.message : 'not serialisable'})`);
    }
    if (canonical === undefined || canonical.length > MAX_DETAILS_LENGTH) {
      throw invalid('details', `a JSON object whose canonical text is at most ${MAX_DETAILS_LENGTH} characters`);
    }
    details = canonical;
  }
  return {
    principalName: text(entry, 'principalName', true) as string,
    onBehalfOf: text(entry, 'onBehalfOf', false),
    authMethod: text(entry, 'authMethod', true) as string,
    category: text(entry, 'category', true) as string,
    action: text(entry, 'action', true) as string,
    entityType: text(entry, 'entityType', false),
    entityId: text(entry, 'entityId', false),
    machine: text(entry, 'machine', false),
    details,
  };
}

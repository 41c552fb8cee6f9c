/**
 * Turns schema issues into messages a person can act on: the path, what was
 * found there, and what is accepted.
 */
import type { z } from 'zod';
import { GatewayError, quote } from './errors.js';
import { clipKey as clip, formatPath } from './field-path.js';
import { findIllFormed, illFormedLine } from '../values/well-formed.js';

/** Issues described in one message; the rest are counted, so the message stays small whatever the input. */
export const MAX_DESCRIBED_ISSUES = 5;

/** Unknown field names listed in one issue. */
const MAX_LISTED_KEYS = 5;

/** Characters of a found value shown in a message. */
const FOUND_MAX_CHARS = 60;

type PathKey = PropertyKey;

function valueAt(root: unknown, path: readonly PathKey[]): unknown {
  let value: unknown = root;
  for (const key of path) {
    if (value === null || typeof value !== 'object') return undefined;
    value = (value as Record<PropertyKey, unknown>)[key];
  }
  return value;
}

/** Keys that must never be echoed back, even in an error message. */
const SECRET_KEYS = /password|secret|token|key/i;

/**
 * Appends JSON-like text for `value` to `out` until `out` holds `budget`
 * characters, then stops. Work is bounded by the budget, not by the value:
 * a long string is cut before it is escaped, a wide object is left after the
 * budget is spent, and nesting deeper than the budget cannot be reached
 * because every level writes at least one character.
 */
function render(value: unknown, out: { text: string }, budget: number): void {
  if (out.text.length >= budget) return;
  if (typeof value === 'string') {
    out.text += JSON.stringify(value.slice(0, budget - out.text.length + 1));
    return;
  }
  if (value === null || typeof value !== 'object') {
    out.text += typeof value === 'number' || typeof value === 'boolean' ? String(value) : value === null ? 'null' : typeof value;
    return;
  }
  const isArray = Array.isArray(value);
  out.text += isArray ? '[' : '{';
  let first = true;
  if (isArray) {
    for (const item of value as unknown[]) {
      if (out.text.length >= budget) return;
      if (!first) out.text += ',';
      first = false;
      render(item, out, budget);
    }
  } else {
    for (const key in value) {
      if (!Object.hasOwn(value, key)) continue;
      if (out.text.length >= budget) return;
      if (!first) out.text += ',';
      first = false;
      out.text += `${JSON.stringify(clip(key))}:`;
      if (SECRET_KEYS.test(key)) out.text += '"(hidden)"';
      else render((value as Record<string, unknown>)[key], out, budget);
    }
  }
  out.text += isArray ? ']' : '}';
}

/** What was found, as at most FOUND_MAX_CHARS characters of JSON-like text; bounded in time and size for any input. */
export function describeFound(value: unknown): string {
  if (value === undefined) return 'nothing';
  const out = { text: '' };
  render(value, out, FOUND_MAX_CHARS + 1);
  return out.text.length > FOUND_MAX_CHARS ? `${out.text.slice(0, FOUND_MAX_CHARS - 3)}...` : out.text;
}

/**
 * The value an issue is about. With reportInput, zod gives it as the schema
 * saw it (after preprocessing, e.g. a split list); a coerced number that
 * failed reports NaN, so the raw value is read instead.
 */
export function foundValue(issue: z.core.$ZodIssue, input: unknown): unknown {
  const reported = 'input' in issue ? issue.input : undefined;
  return reported !== undefined && !Number.isNaN(reported) ? reported : valueAt(input, issue.path);
}

/** One line per issue, `path: found X; <what is accepted>`, for at most MAX_DESCRIBED_ISSUES issues and a count of the rest. */
export function describeIssues(issues: readonly z.core.$ZodIssue[], input: unknown): string[] {
  const lines = issues.slice(0, MAX_DESCRIBED_ISSUES).map((issue) => {
    const path = formatPath(issue.path);
    const last = issue.path[issue.path.length - 1];
    const secret = typeof last === 'string' && SECRET_KEYS.test(last);
    let accepted = issue.message;
    if (issue.code === 'unrecognized_keys') {
      const more = issue.keys.length > MAX_LISTED_KEYS ? ` and ${issue.keys.length - MAX_LISTED_KEYS} more` : '';
      accepted = `unknown field(s) ${issue.keys.slice(0, MAX_LISTED_KEYS).map(quote).join(', ')}${more}; remove them`;
      return `${path}: ${accepted}`;
    }
    const found = secret ? '(hidden)' : describeFound(foundValue(issue, input));
    accepted = accepted.replace(/^Invalid (input|option): /, '');
    return `${path}: found ${found}; ${clipMessage(accepted)}`;
  });
  const rest = issues.length - lines.length;
  if (rest > 0) lines.push(`and ${rest} more issue(s)`);
  return lines;
}

/** Characters of a schema's own message kept; a custom message may quote input. */
const ACCEPTED_MAX_CHARS = 600;

function clipMessage(text: string): string {
  return text.length > ACCEPTED_MAX_CHARS ? `${text.slice(0, ACCEPTED_MAX_CHARS)}…` : text;
}

/**
 * Parses `raw` with `schema`, or throws INVALID_PARAMETER naming each field,
 * what was found and what is accepted. A string that is not well-formed
 * Unicode, as a value or a field name, is refused first, whatever the
 * schema, so no handler of any transport sees one (core/values/well-formed.ts).
 */
export function parseOrThrow<S extends z.ZodType>(schema: S, raw: unknown, prefix = ''): z.output<S> {
  const illFormed = findIllFormed(raw);
  if (illFormed) throw new GatewayError('INVALID_PARAMETER', prefix + illFormedLine(illFormed));
  const parsed = schema.safeParse(raw, { reportInput: true });
  if (parsed.success) return parsed.data;
  throw new GatewayError('INVALID_PARAMETER', describeIssues(parsed.error.issues, raw).map((line) => prefix + line).join('; '));
}

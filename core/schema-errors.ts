/**
 * Turns schema issues into messages a person can act on: the path, what was
 * found there, and what is accepted.
 */
import type { z } from 'zod';
import { GatewayError } from './errors.js';

type PathKey = PropertyKey;

/** `machines[3].port` from ['machines', 3, 'port']. */
export function formatPath(path: readonly PathKey[]): string {
  let out = '';
  for (const key of path) {
    if (typeof key === 'number') out += `[${key}]`;
    else out += out ? `.${String(key)}` : String(key);
  }
  return out || '(root)';
}

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

function describeFound(value: unknown): string {
  if (value === undefined) return 'nothing';
  const text = JSON.stringify(value, (key, v: unknown) => (key && SECRET_KEYS.test(key) ? '(hidden)' : v));
  if (text === undefined) return typeof value;
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

/** One line per issue: `path: found X; <what is accepted>`. */
export function describeIssues(issues: readonly z.core.$ZodIssue[], input: unknown): string[] {
  return issues.map((issue) => {
    const path = formatPath(issue.path);
    const last = issue.path[issue.path.length - 1];
    const secret = typeof last === 'string' && SECRET_KEYS.test(last);
    let accepted = issue.message;
    if (issue.code === 'unrecognized_keys') {
      accepted = `unknown field(s) ${issue.keys.map((k) => `'${k}'`).join(', ')}; remove them`;
      return `${path}: ${accepted}`;
    }
    // With reportInput, zod gives the value as the schema saw it (after preprocessing, e.g. a split list).
    // A coerced number that failed reports NaN; show the raw value instead.
    const reported = 'input' in issue ? issue.input : undefined;
    const value = reported !== undefined && !Number.isNaN(reported) ? reported : valueAt(input, issue.path);
    const found = secret ? '(hidden)' : describeFound(value);
    accepted = accepted.replace(/^Invalid (input|option): /, '');
    return `${path}: found ${found}; ${accepted}`;
  });
}

/** Parses `raw` with `schema`, or throws INVALID_PARAMETER naming each field, what was found and what is accepted. */
export function parseOrThrow<S extends z.ZodType>(schema: S, raw: unknown, prefix = ''): z.output<S> {
  const parsed = schema.safeParse(raw, { reportInput: true });
  if (parsed.success) return parsed.data;
  throw new GatewayError('INVALID_PARAMETER', describeIssues(parsed.error.issues, raw).map((line) => prefix + line).join('; '));
}

/**
 * A request's bad fields in sentences a person reads (`The password needs
 * at least 10 characters`), for the problem documents of the `/api/v1`
 * surface: the field named in words, what it must be, and for a wrong
 * type or choice what was sent (a secret never). The machine-readable
 * `field` and `accepted` stay beside each sentence (docs/rest-surface.md).
 */
import type { z } from 'zod';
import { describeFound } from '../interfaces/schema-errors.js';

/** Words for field names that camel case does not spell out. */
const WORDS: Readonly<Record<string, string>> = {
  id: 'ID', ids: 'IDs', url: 'URL', uri: 'URI', dir: 'directory', sha256: 'SHA-256', csrf: 'CSRF', sec: 'seconds', ms: 'milliseconds', pct: 'percent',
};

/** Keys whose values are never quoted back. */
const SECRET = /password|secret|token|key/i;

/** `assignmentIds` → `assignment IDs`, `maxCycleTimeIncreasePct` → `max cycle time increase percent`. */
function words(key: string): string {
  return key
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/[_-]+/g, ' ')
    .split(' ')
    .filter(Boolean)
    .map((w) => WORDS[w.toLowerCase()] ?? w.toLowerCase())
    .join(' ');
}

const ordinal = (n: number) => `${n}${n % 10 === 1 && n % 100 !== 11 ? 'st' : n % 10 === 2 && n % 100 !== 12 ? 'nd' : n % 10 === 3 && n % 100 !== 13 ? 'rd' : 'th'}`;

/** The field as a sentence's subject: `the password`, `the 2nd entry of the assignment IDs`, `the request body`. */
export function fieldInWords(location: string, path: readonly PropertyKey[]): string {
  const keys = path.filter((k): k is string => typeof k === 'string');
  const last = path[path.length - 1];
  const named = keys.length ? `the ${words(keys[keys.length - 1] as string)}` : location === 'body' ? 'the request body' : location === 'query' ? 'the query' : 'the path';
  const where = location === 'query' && keys.length ? ' in the query' : location === 'path' && keys.length ? ' in the path' : '';
  return typeof last === 'number' ? `the ${ordinal(last + 1)} entry of ${named.replace(/^the request body$/, 'the body')}${where}` : `${named}${where}`;
}

const EXPECTED: Readonly<Record<string, string>> = {
  string: 'text', number: 'a number', int: 'a whole number', boolean: 'true or false', array: 'a list', object: 'an object', bigint: 'a whole number', date: 'a date',
};

const FORMATS: Readonly<Record<string, string>> = {
  email: 'an e-mail address', url: 'a URL', uuid: 'a UUID', base64: 'base64 text (RFC 4648)', base64url: 'base64url text', datetime: 'a date and time such as 2026-11-24T09:00:00Z',
  date: 'a calendar date such as 2026-11-24', time: 'a time such as 09:00:00', ipv4: 'an IPv4 address', ipv6: 'an IPv6 address', regex: 'in the accepted form',
};

const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;

/** What was sent, for a sentence: ` (it was "abc")`, or nothing for a secret or a missing value. */
function sent(issue: z.core.$ZodIssue, found: unknown): string {
  const last = issue.path[issue.path.length - 1];
  if (found === undefined || (typeof last === 'string' && SECRET.test(last))) return '';
  return ` (it was ${describeFound(found)})`;
}

function tooSmall(issue: z.core.$ZodIssueTooSmall, subject: string): string {
  const n = Number(issue.minimum);
  if (issue.origin === 'string') return n <= 1 ? `${subject} cannot be empty` : `${subject} needs at least ${plural(n, 'character', 'characters')}`;
  if (issue.origin === 'array' || issue.origin === 'set') return `${subject} must hold at least ${plural(n, 'entry', 'entries')}`;
  return `${subject} must be ${issue.inclusive === false ? 'more than' : 'at least'} ${n}`;
}

function tooBig(issue: z.core.$ZodIssueTooBig, subject: string): string {
  const n = Number(issue.maximum);
  if (issue.origin === 'string') return `${subject} can have at most ${plural(n, 'character', 'characters')}`;
  if (issue.origin === 'array' || issue.origin === 'set') return `${subject} can hold at most ${plural(n, 'entry', 'entries')}`;
  return `${subject} must be ${issue.inclusive === false ? 'less than' : 'at most'} ${n}`;
}

/** A schema's own message (a refinement's) as the end of a sentence. */
const own = (message: string) => message.replace(/^Invalid (input|option|string): /, '');

/** One issue as a sentence without its full stop; `found` is the value the issue is about, as sent. */
export function issueInWords(location: string, issue: z.core.$ZodIssue, found: unknown): string {
  const subject = fieldInWords(location, issue.path);
  let sentence: string;
  switch (issue.code) {
    case 'invalid_type':
      sentence = found === undefined ? `${subject} is missing` : `${subject} must be ${EXPECTED[issue.expected] ?? issue.expected}${sent(issue, found)}`;
      break;
    case 'too_small':
      sentence = tooSmall(issue, subject);
      break;
    case 'too_big':
      sentence = tooBig(issue, subject);
      break;
    case 'invalid_value':
      sentence = `${subject} must be ${issue.values.length === 1 ? '' : 'one of '}${issue.values.slice(0, 20).map(String).join(', ')}${sent(issue, found)}`;
      break;
    case 'invalid_format':
      sentence = issue.format === 'regex' && !issue.message.startsWith('Invalid') ? `${subject} is not accepted: ${own(issue.message)}` : `${subject} must be ${FORMATS[issue.format] ?? `in the form ${issue.format}`}`;
      break;
    case 'unrecognized_keys':
      sentence = `${subject} has ${issue.keys.length === 1 ? 'a field' : 'fields'} this request does not take: ${issue.keys.slice(0, 5).join(', ')}${issue.keys.length > 5 ? ` and ${issue.keys.length - 5} more` : ''}`;
      break;
    case 'invalid_union': {
      // A discriminated union names the values its discriminator takes.
      const options = (issue as { options?: unknown }).options;
      sentence = Array.isArray(options) ? `${subject} must be one of ${options.map(String).join(', ')}` : `${subject} is not in any accepted form`;
      break;
    }
    case 'not_multiple_of':
      sentence = `${subject} must be a multiple of ${String(issue.divisor)}`;
      break;
    default:
      sentence = `${subject} is not accepted: ${own(issue.message)}`;
  }
  return sentence.charAt(0).toUpperCase() + sentence.slice(1);
}

/** The problem's `detail`: the first sentences, each with its full stop, and how many more there are. */
export function detailInWords(sentences: readonly string[], issues: number): string {
  const shown = sentences.slice(0, 3).map((s) => (/[.!?]$/.test(s) ? s : `${s}.`));
  const rest = issues - shown.length;
  return `${shown.join(' ')}${rest > 0 ? ` And ${plural(rest, 'more problem', 'more problems')}, listed in errors.` : ''}`;
}

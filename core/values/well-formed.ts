/**
 * Well-formed text. A JavaScript string is UTF-16 and may hold a lone
 * surrogate (JSON `"\ud800"` parses to one), which is no Unicode text: UTF-8
 * cannot encode it, SQLite stores it as U+FFFD, and RFC 8785 (the audit's
 * canonical form) refuses it. A string may also hold U+0000 (JSON
 * `"\u0000"`, a query's `%00`), which PostgreSQL's text cannot store and C
 * code reads as the end of the string: no text field takes it, on either
 * engine (bytes travel as base64). Every input surface refuses such strings
 * where it parses its input (core/http/json-body.ts, core/interfaces/schema-errors.ts, the
 * query and path of core/rest/serve.ts), so no handler ever sees one; this
 * module finds them and names where they are and why.
 */
import { QUOTE_MAX_CHARS } from '../interfaces/errors.js';
import { formatPath } from '../interfaces/field-path.js';

// In a /u regex a well-formed surrogate pair is one code point, so this finds only lone halves.
const LONE_SURROGATE = /\p{Cs}/u;
/** A lone surrogate or U+0000: one scan for the usual case of text that has neither. */
// eslint-disable-next-line no-control-regex -- U+0000 is what it looks for
const NOT_TEXT = /[\p{Cs}\u0000]/u;

/** Whether `text` is well-formed Unicode: no UTF-16 surrogate without its pair. */
export function isWellFormedText(text: string): boolean {
  return !LONE_SURROGATE.test(text);
}

/** Why a string is not taken as text: a lone surrogate, or U+0000. */
export type NotTextReason = 'surrogate' | 'nul';

/** Why `text` is not taken as a text field's value, or undefined when it is. */
export function notTextReason(text: string): NotTextReason | undefined {
  if (!NOT_TEXT.test(text)) return undefined;
  return LONE_SURROGATE.test(text) ? 'surrogate' : 'nul';
}

/** Where a string that is not text is: the path to it, whether it is a field name (the last path key) rather than a value, and why. */
export interface IllFormedAt {
  path: readonly PropertyKey[];
  inKey: boolean;
  reason: NotTextReason;
}

type Node = Record<string, unknown> | unknown[];

const isWalked = (value: unknown): value is Node => {
  if (value === null || typeof value !== 'object') return false;
  if (Array.isArray(value)) return true;
  const proto: unknown = Object.getPrototypeOf(value);
  // Plain objects only (parsed JSON, a query object): bytes and class instances are not text.
  return proto === Object.prototype || proto === null;
};

/** A value the walk is to enter, with the way back to the root (paths are built only for what is found). */
interface Step {
  node: Node;
  parent: Step | undefined;
  key: PropertyKey;
}

function pathOf(step: Step | undefined, last: PropertyKey): PropertyKey[] {
  const path: PropertyKey[] = [last];
  for (let s = step; s?.parent; s = s.parent) path.push(s.key);
  return path.reverse();
}

/**
 * A string in `value` that is not text (a lone surrogate, U+0000), a value
 * of its arrays or plain objects, or a field name of them; undefined when
 * all are text. The one named is the first found: an object's own strings
 * and field names before those nested in it, each level in document order.
 * Walks without recursion and links each value to its parent instead of
 * copying paths, so any depth is safe and the work is linear in the size of
 * the value.
 */
export function findIllFormed(value: unknown): IllFormedAt | undefined {
  if (typeof value === 'string') {
    const reason = notTextReason(value);
    return reason ? { path: [], inKey: false, reason } : undefined;
  }
  if (!isWalked(value)) return undefined;
  const stack: Step[] = [{ node: value, parent: undefined, key: '' }];
  for (let step = stack.pop(); step; step = stack.pop()) {
    const { node } = step;
    const firstChild = stack.length;
    if (Array.isArray(node)) {
      for (let i = 0; i < node.length; i++) {
        const item: unknown = node[i];
        if (typeof item === 'string') {
          const reason = notTextReason(item);
          if (reason) return { path: pathOf(step, i), inKey: false, reason };
        } else if (isWalked(item)) stack.push({ node: item, parent: step, key: i });
      }
    } else {
      for (const key in node) {
        const keyReason = notTextReason(key);
        if (keyReason) return { path: pathOf(step, key), inKey: true, reason: keyReason };
        const item = node[key];
        if (typeof item === 'string') {
          const reason = notTextReason(item);
          if (reason) return { path: pathOf(step, key), inKey: false, reason };
        } else if (isWalked(item)) stack.push({ node: item, parent: step, key });
      }
    }
    // The nested values in document order: the first pushed is taken last, so reverse them.
    for (let i = firstChild, j = stack.length - 1; i < j; i++, j--) [stack[i], stack[j]] = [stack[j] as Step, stack[i] as Step];
  }
  return undefined;
}

/** What an answer says about an ill-formed string, naming no part of it. */
export const ILL_FORMED_MESSAGE = 'not well-formed Unicode (it holds a lone UTF-16 surrogate, \\ud800-\\udfff without its pair)';
export const ILL_FORMED_ACCEPTED = 'well-formed Unicode text';
/** What an answer says about a string holding U+0000. */
export const NUL_MESSAGE = 'holds U+0000 (NUL), which no text field takes';
export const NUL_ACCEPTED = 'text without U+0000 (bytes go as base64 where an operation takes bytes)';

/** The message for a string that is not text, by why. */
export function notTextMessage(at: Pick<IllFormedAt, 'reason'>): string {
  return at.reason === 'nul' ? NUL_MESSAGE : ILL_FORMED_MESSAGE;
}

/** What is accepted instead, by why. */
export function notTextAccepted(at: Pick<IllFormedAt, 'reason'>): string {
  return at.reason === 'nul' ? NUL_ACCEPTED : ILL_FORMED_ACCEPTED;
}

/** Text with every lone surrogate and U+0000 written as its `\uXXXX` escape, so a field name can be shown. */
function escaped(text: string): string {
  // eslint-disable-next-line no-control-regex -- U+0000 is what it escapes
  return text.replace(/[\p{Cs}\u0000]/gu, (unit) => `\\u${unit.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/**
 * The field an ill-formed string is at, as answers name fields
 * (`machines[3].name`); a field name that is itself ill-formed is shown
 * escaped after its parent, with `(field name)`.
 */
export function illFormedField(at: IllFormedAt): string {
  if (!at.inKey) return formatPath(at.path);
  const parent = at.path.slice(0, -1);
  const whole = escaped(String(at.path[at.path.length - 1]));
  const key = whole.length > QUOTE_MAX_CHARS ? `${whole.slice(0, QUOTE_MAX_CHARS)}…` : whole;
  return `${parent.length ? `${formatPath(parent)}.` : ''}${key} (field name)`;
}

/** One line for an error message: `field: not well-formed Unicode (…); accepted: well-formed Unicode text`, or `field: holds U+0000 …`. */
export function illFormedLine(at: IllFormedAt): string {
  return `${illFormedField(at)}: ${notTextMessage(at)}; accepted: ${notTextAccepted(at)}`;
}

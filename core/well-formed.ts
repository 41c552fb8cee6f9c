/**
 * Well-formed text. A JavaScript string is UTF-16 and may hold a lone
 * surrogate (JSON `"\ud800"` parses to one), which is no Unicode text: UTF-8
 * cannot encode it, SQLite stores it as U+FFFD, and RFC 8785 (the audit's
 * canonical form) refuses it. Every input surface refuses such strings where
 * it parses its input (core/json-body.ts, core/schema-errors.ts), so no
 * handler ever sees one; this module finds them and names where they are.
 */
import { QUOTE_MAX_CHARS } from './errors.js';
import { formatPath } from './field-path.js';

// In a /u regex a well-formed surrogate pair is one code point, so this finds only lone halves.
const LONE_SURROGATE = /\p{Cs}/u;

/** Whether `text` is well-formed Unicode: no UTF-16 surrogate without its pair. */
export function isWellFormedText(text: string): boolean {
  return !LONE_SURROGATE.test(text);
}

/** Where an ill-formed string is: the path to it, and whether it is a field name (the last path key) rather than a value. */
export interface IllFormedAt {
  path: readonly PropertyKey[];
  inKey: boolean;
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
 * An ill-formed string in `value`, a value of its arrays or plain objects,
 * or a field name of them; undefined when all are well-formed. The one
 * named is the first found: an object's own strings and field names before
 * those nested in it, each level in document order. Walks without recursion and links each value to its parent
 * instead of copying paths, so any depth is safe and the work is linear in
 * the size of the value.
 */
export function findIllFormed(value: unknown): IllFormedAt | undefined {
  if (typeof value === 'string') return isWellFormedText(value) ? undefined : { path: [], inKey: false };
  if (!isWalked(value)) return undefined;
  const stack: Step[] = [{ node: value, parent: undefined, key: '' }];
  for (let step = stack.pop(); step; step = stack.pop()) {
    const { node } = step;
    const firstChild = stack.length;
    if (Array.isArray(node)) {
      for (let i = 0; i < node.length; i++) {
        const item: unknown = node[i];
        if (typeof item === 'string') {
          if (!isWellFormedText(item)) return { path: pathOf(step, i), inKey: false };
        } else if (isWalked(item)) stack.push({ node: item, parent: step, key: i });
      }
    } else {
      for (const key in node) {
        if (!isWellFormedText(key)) return { path: pathOf(step, key), inKey: true };
        const item = node[key];
        if (typeof item === 'string') {
          if (!isWellFormedText(item)) return { path: pathOf(step, key), inKey: false };
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

/** Text with every lone surrogate written as its `\uXXXX` escape, so a field name can be shown. */
function escaped(text: string): string {
  return text.replace(/\p{Cs}/gu, (half) => `\\u${half.charCodeAt(0).toString(16)}`);
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

/** One line for an error message: `field: not well-formed Unicode (…); accepted: well-formed Unicode text`. */
export function illFormedLine(at: IllFormedAt): string {
  return `${illFormedField(at)}: ${ILL_FORMED_MESSAGE}; accepted: ${ILL_FORMED_ACCEPTED}`;
}

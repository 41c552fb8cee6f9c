/**
 * The nesting-depth check that runs on a JSON body's raw text before it is
 * parsed. Parsing, validating and describing a value all walk it; a body of
 * thousands of nested arrays is small in bytes but deep enough to exhaust the
 * stack of anything recursive that touches it later, so it is refused here,
 * in one linear pass that keeps no stack of its own.
 */

/** Deepest nesting of arrays and objects a request body may have (docs/api.md). */
export const MAX_JSON_DEPTH = 64;

const OPEN_BRACKET = 0x5b; // [
const CLOSE_BRACKET = 0x5d; // ]
const OPEN_BRACE = 0x7b; // {
const CLOSE_BRACE = 0x7d; // }
const QUOTE = 0x22; // "
const BACKSLASH = 0x5c; // \

/**
 * Whether the JSON text nests arrays and objects deeper than `max`. Brackets
 * inside strings do not count. Malformed text is not judged here: whatever
 * this lets through is still parsed, and the parser refuses it.
 */
export function exceedsJsonDepth(text: string, max = MAX_JSON_DEPTH): boolean {
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      // A string is skipped to its closing quote by indexOf, not character by character: a program's
      // base64 is most of an upload's body.
      i = stringEnd(text, i);
      if (i < 0) return false;
    } else if (c === OPEN_BRACKET || c === OPEN_BRACE) {
      if (++depth > max) return true;
    } else if (c === CLOSE_BRACKET || c === CLOSE_BRACE) {
      depth--;
    }
  }
  return false;
}

/** The index of the quote that closes the string opened at `open` (one not escaped by an odd run of backslashes); -1 when there is none. */
function stringEnd(text: string, open: number): number {
  for (let at = text.indexOf('"', open + 1); at >= 0; at = text.indexOf('"', at + 1)) {
    let backslashes = 0;
    while (text.charCodeAt(at - 1 - backslashes) === BACKSLASH) backslashes++;
    if (backslashes % 2 === 0) return at;
  }
  return -1;
}

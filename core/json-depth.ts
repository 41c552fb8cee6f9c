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
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === BACKSLASH) i++;
      else if (c === QUOTE) inString = false;
    } else if (c === QUOTE) {
      inString = true;
    } else if (c === OPEN_BRACKET || c === OPEN_BRACE) {
      if (++depth > max) return true;
    } else if (c === CLOSE_BRACKET || c === CLOSE_BRACE) {
      depth--;
    }
  }
  return false;
}

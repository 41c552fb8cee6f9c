/**
 * The canonical form of one NC block: what is left of a line once the rules
 * switched on in `IgnoreRules` have removed what does not change what the
 * machine does. Two blocks compare equal when their canonical forms are equal.
 * The rules are written out with examples in docs/nc-diff.md.
 */
import type { CanonicalRules, Dialect } from './options.js';

export { machineRules, type CanonicalRules } from './options.js';

const SPACE = 32;
const TAB = 9;
const isDigit = (c: number): boolean => c >= 48 && c <= 57;
const isLetter = (c: number): boolean => (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95;
const isBlank = (c: number): boolean => c === SPACE || c === TAB;
/** Characters after which `+`/`-` is a sign rather than an operator. */
const takesSign = (c: number): boolean => isLetter(c) || c === 61 /* = */ || c === 40 /* ( */ || c === 91 /* [ */ || c === 44 /* , */ || c === -1;

/** Where a leading block number (and the blanks after it) ends, or 0 when there is none. */
function blockNumberEnd(start: number, dialect: Dialect): number {
  let i = start;
  const c = at(i);
  if (dialect === 'heidenhain') {
    if (!isDigit(c)) return start;
  } else if (c === 78 || c === 110 /* N n */ || (dialect === 'siemens' && c === 58) /* : */) {
    i++;
    if (!isDigit(at(i))) return start;
  } else {
    return start;
  }
  while (isDigit(at(i))) i++;
  // `N10G1` is a block number; Heidenhain's number must stand alone (`5 L X+1`).
  if (dialect === 'heidenhain' && i < srcLength && !isBlank(at(i))) return start;
  while (isBlank(at(i))) i++;
  return i;
}

// The canonical form is written into one reusable buffer of UTF-16 code units
// and turned into a string once: this runs for every line of both programs.
let buf = new Uint16Array(1024);
let bytes = Buffer.alloc(1024); // the same, while every character fits one byte
let wide = false;
let len = 0;
let last = -1; // last character written that is not a blank
let pendingBlank = false;
let nameLength = 0; // letters of the name just written, 0 after anything else
let keepsBlanks = false; // dialect keeps a blank between two names or two numbers
// The line being canonicalised, as code units (bytes copied straight from the
// stored program, or a decoded string's units): no string per line.
let src = new Uint16Array(1024);
let srcLength = 0;
/** Code unit i of the loaded line, -1 past its end (never a digit, letter or mark). */
const at = (i: number): number => (i < srcLength ? (src[i] as number) : -1);

function room(length: number): void {
  if (length > src.length) src = new Uint16Array(Math.max(length, src.length * 2));
  srcLength = length;
}

/**
 * Loads bytes[s..e) as the line to canonicalise, one byte one character
 * (right for latin1, and for UTF-8 when every byte is ASCII); false, and
 * nothing loaded, when `ascii` is asked for and a byte is not ASCII.
 */
export function loadLineBytes(bytes: Uint8Array, s: number, e: number, ascii: boolean): boolean {
  room(e - s);
  for (let k = s; k < e; k++) {
    const b = bytes[k] as number;
    if (ascii && b > 127) {
      srcLength = 0;
      return false;
    }
    src[k - s] = b;
  }
  return true;
}

/** Loads a decoded line as the line to canonicalise. */
export function loadLineString(line: string): void {
  room(line.length);
  for (let k = 0; k < line.length; k++) src[k] = line.charCodeAt(k);
}

/** Index of the first `c` in the loaded line at or after `from`, or -1. */
function find(c: number, from: number): number {
  for (let k = from; k < srcLength; k++) if (src[k] === c) return k;
  return -1;
}

function put(c: number): void {
  if (len === buf.length) {
    const bigger = new Uint16Array(buf.length * 2);
    bigger.set(buf);
    buf = bigger;
    const biggerBytes = Buffer.alloc(buf.length);
    bytes.copy(biggerBytes);
    bytes = biggerBytes;
  }
  if (c > 255) wide = true;
  bytes[len] = c;
  buf[len++] = c;
}

/** Settles a pending blank before a token starting with `first`. */
function token(first: number): void {
  if (!pendingBlank) return;
  pendingBlank = false;
  if (len === 0 || !keepsBlanks) return;
  const lastIsName = isLetter(last);
  const lastIsNum = isDigit(last) || last === 46;
  if ((lastIsName && (isLetter(first) || isDigit(first))) || (lastIsNum && (isDigit(first) || first === 46))) put(SPACE);
}

/** Writes line[s..e) as one token, upper-cased when asked. */
function putRange(s: number, e: number, upper: boolean): void {
  if (e <= s) return;
  token(at(s));
  for (let i = s; i < e; i++) {
    let c = at(i);
    if (upper && c >= 97 && c <= 122) c -= 32;
    put(c);
  }
  last = at(e - 1);
  if (upper && last >= 97 && last <= 122) last -= 32;
  nameLength = 0;
}

/**
 * Writes a number in its one canonical spelling: no `+`, no leading zeros, no
 * trailing fraction zeros, `.5` as `0.5`, every zero as `0`, and a bare
 * decimal point (`3.`) kept only when `pointSignificant`.
 */
function putNumber(negative: boolean, i0: number, i1: number, point: boolean, f0: number, f1: number, pointSignificant: boolean): void {
  while (i0 < i1 && at(i0) === 48) i0++;
  while (f1 > f0 && at(f1 - 1) === 48) f1--;
  if (i0 === i1 && f0 === f1) {
    token(48);
    put(48);
    last = 48;
    nameLength = 0;
    return;
  }
  token(negative ? 45 : 48);
  if (negative) put(45);
  if (i0 === i1) put(48);
  for (let i = i0; i < i1; i++) put(at(i));
  if (f1 > f0 || (point && pointSignificant)) put(46);
  for (let i = f0; i < f1; i++) put(at(i));
  last = buf[len - 1] as number;
  nameLength = 0;
}

function written(): string {
  // Buffer's latin1 decoding makes a flat one-byte string in one call: the fastest way here.
  if (!wide) return bytes.toString('latin1', 0, len);
  if (len <= 4096) return String.fromCharCode.apply(null, buf.subarray(0, len) as unknown as number[]);
  let out = '';
  for (let i = 0; i < len; i += 4096) out += String.fromCharCode.apply(null, buf.subarray(i, Math.min(len, i + 4096)) as unknown as number[]);
  return out;
}

/** The canonical form of `line` under `rules`; '' for a block with nothing left in it. */
export function canonicalBlock(line: string, rules: CanonicalRules): string {
  const { ignore } = rules;
  if (!ignore.blockNumbers && !ignore.comments && !ignore.whitespace && !ignore.case && !ignore.numberFormat) return line;
  loadLineString(line);
  canonicalInto(rules);
  return written();
}

/** The canonical form of the loaded line as a string (after `loadLineBytes`/`loadLineString`). */
export function canonicalLoaded(rules: CanonicalRules): string {
  canonicalInto(rules);
  return written();
}

/**
 * Writes the canonical form of the loaded line (`loadLineBytes` or
 * `loadLineString`) into the shared buffer and returns its length;
 * `canonicalUnits()` reads it until the next call. Spares a string per line
 * where only the id of the form is wanted.
 */
export function canonicalInto(rules: CanonicalRules): number {
  const { ignore, dialect, pointSignificant } = rules;
  const n = srcLength;
  if (!ignore.blockNumbers && !ignore.comments && !ignore.whitespace && !ignore.case && !ignore.numberFormat) {
    len = 0;
    wide = false;
    for (let i = 0; i < n; i++) put(src[i] as number);
    return len;
  }
  len = 0;
  wide = false;
  last = -1;
  pendingBlank = false;
  nameLength = 0;
  keepsBlanks = dialect !== 'iso';
  let i = 0;

  // Block skip `/` (or `/1`..`/9`) stays: it changes what runs.
  let lead = 0;
  while (lead < n && isBlank(at(lead))) lead++;
  if (at(lead) === 47 /* / */) {
    lead++;
    if (isDigit(at(lead))) lead++;
    while (lead < n && isBlank(at(lead))) lead++;
  }
  const numberEnd = blockNumberEnd(lead, dialect);
  // Heidenhain `*` structure lines are comments.
  const starComment = dialect === 'heidenhain' && at(numberEnd) === 42;
  const skipFrom = ignore.blockNumbers && numberEnd > lead ? lead : -1;

  while (i < n) {
    if (i === skipFrom) {
      i = numberEnd;
      continue;
    }
    const c = at(i);
    if (isBlank(c)) {
      const s = i;
      while (i < n && isBlank(at(i))) i++;
      if (ignore.whitespace) pendingBlank = true;
      else for (let k = s; k < i; k++) put(at(k));
      continue;
    }
    // Comments: `;` to the end of the line everywhere, `(...)` in ISO, `*` structure lines in Heidenhain.
    if (c === 59 || (c === 40 && dialect === 'iso') || (starComment && i === numberEnd)) {
      let end = n;
      if (c === 40) {
        const close = find(41, i + 1);
        end = close < 0 ? n : close + 1;
      }
      if (ignore.comments) {
        pendingBlank = ignore.whitespace;
      } else {
        let e = end;
        if (ignore.whitespace) while (e > i && isBlank(at(e - 1))) e--;
        putRange(i, e, false);
      }
      i = end;
      continue;
    }
    if (c === 34 /* " */) {
      const close = find(34, i + 1);
      const end = close < 0 ? n : close + 1;
      putRange(i, end, false);
      i = end;
      continue;
    }
    if (isLetter(c)) {
      const s = i;
      while (i < n && isLetter(at(i))) i++;
      putRange(s, i, ignore.case);
      nameLength = i - s;
      // Siemens `L0100` and `L100` are different subprograms: their digits stay as written.
      if (dialect === 'siemens' && i - s === 1 && (c === 76 || c === 108) && isDigit(at(i))) {
        const d = i;
        while (i < n && isDigit(at(i))) i++;
        putRange(d, i, false);
      }
      continue;
    }
    const signed = (c === 43 || c === 45) && takesSign(last) && i + 1 < n && (isDigit(at(i + 1)) || at(i + 1) === 46);
    if (isDigit(c) || c === 46 || signed) {
      const s = i;
      if (signed) i++;
      const i0 = i;
      while (i < n && isDigit(at(i))) i++;
      const i1 = i;
      let point = false;
      let f0 = i;
      if (at(i) === 46) {
        point = true;
        f0 = ++i;
        while (i < n && isDigit(at(i))) i++;
      }
      // Digits inside a name (`PART01A`) are part of the name; `G01X5` is two address words.
      const inName = !point && nameLength > 1 && isLetter(at(i));
      if (!ignore.numberFormat || inName || (i1 === i0 && i === f0)) putRange(s, i, false);
      else putNumber(signed && c === 45, i0, i1, point, f0, i, pointSignificant);
      continue;
    }
    putRange(i, i + 1, false);
    i++;
  }
  return len;
}

/** The code units `canonicalInto` wrote last (a view, valid until its next call). */
export function canonicalUnits(): Uint16Array {
  return buf;
}

/**
 * The canonical form as it was computed from one decoded string per line,
 * before the canonicaliser read the stored bytes: kept unchanged as the
 * oracle the byte path is checked against (canonical-oracle.test.ts).
 *
 * The canonical form of one NC block: what is left of a line once the rules
 * switched on in `IgnoreRules` have removed what does not change what the
 * machine does. Two blocks compare equal when their canonical forms are equal.
 * The rules are written out with examples in docs/nc-diff.md.
 */
import type { Dialect, IgnoreRules } from '../../../../plugins/vault/nc/options.js';

/** Everything the canonicaliser needs to know. */
export interface CanonicalRules {
  dialect: Dialect;
  ignore: IgnoreRules;
  /** `X3` and `X3.` differ (ISO without calculator-type decimal input). */
  pointSignificant: boolean;
}

/** Every rule on, for the given dialect: the form the machine summary reads. */
export function machineRules(dialect: Dialect, calculatorDecimalInput: boolean): CanonicalRules {
  return {
    dialect,
    ignore: { blockNumbers: true, comments: true, whitespace: true, case: true, numberFormat: true },
    pointSignificant: dialect === 'iso' && !calculatorDecimalInput,
  };
}

const SPACE = 32;
const TAB = 9;
const isDigit = (c: number): boolean => c >= 48 && c <= 57;
const isLetter = (c: number): boolean => (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95;
const isBlank = (c: number): boolean => c === SPACE || c === TAB;
/** Characters after which `+`/`-` is a sign rather than an operator. */
const takesSign = (c: number): boolean => isLetter(c) || c === 61 /* = */ || c === 40 /* ( */ || c === 91 /* [ */ || c === 44 /* , */ || c === -1;

/** Where a leading block number (and the blanks after it) ends, or 0 when there is none. */
function blockNumberEnd(line: string, start: number, dialect: Dialect): number {
  let i = start;
  const c = line.charCodeAt(i);
  if (dialect === 'heidenhain') {
    if (!isDigit(c)) return start;
  } else if (c === 78 || c === 110 /* N n */ || (dialect === 'siemens' && c === 58) /* : */) {
    i++;
    if (!isDigit(line.charCodeAt(i))) return start;
  } else {
    return start;
  }
  while (isDigit(line.charCodeAt(i))) i++;
  // `N10G1` is a block number; Heidenhain's number must stand alone (`5 L X+1`).
  if (dialect === 'heidenhain' && i < line.length && !isBlank(line.charCodeAt(i))) return start;
  while (isBlank(line.charCodeAt(i))) i++;
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
function putRange(line: string, s: number, e: number, upper: boolean): void {
  if (e <= s) return;
  token(line.charCodeAt(s));
  for (let i = s; i < e; i++) {
    let c = line.charCodeAt(i);
    if (upper && c >= 97 && c <= 122) c -= 32;
    put(c);
  }
  last = line.charCodeAt(e - 1);
  if (upper && last >= 97 && last <= 122) last -= 32;
  nameLength = 0;
}

/**
 * Writes a number in its one canonical spelling: no `+`, no leading zeros, no
 * trailing fraction zeros, `.5` as `0.5`, every zero as `0`, and a bare
 * decimal point (`3.`) kept only when `pointSignificant`.
 */
function putNumber(line: string, negative: boolean, i0: number, i1: number, point: boolean, f0: number, f1: number, pointSignificant: boolean): void {
  while (i0 < i1 && line.charCodeAt(i0) === 48) i0++;
  while (f1 > f0 && line.charCodeAt(f1 - 1) === 48) f1--;
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
  for (let i = i0; i < i1; i++) put(line.charCodeAt(i));
  if (f1 > f0 || (point && pointSignificant)) put(46);
  for (let i = f0; i < f1; i++) put(line.charCodeAt(i));
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
  canonicalInto(line, rules);
  return written();
}

/**
 * Writes the canonical form of `line` into the shared buffer and returns
 * its length; `canonicalUnits()` reads it until the next call. Spares a
 * string per line where only the id of the form is wanted.
 */
export function canonicalInto(line: string, rules: CanonicalRules): number {
  const { ignore, dialect, pointSignificant } = rules;
  const n = line.length;
  if (!ignore.blockNumbers && !ignore.comments && !ignore.whitespace && !ignore.case && !ignore.numberFormat) {
    len = 0;
    for (let i = 0; i < n; i++) put(line.charCodeAt(i));
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
  while (lead < n && isBlank(line.charCodeAt(lead))) lead++;
  if (line.charCodeAt(lead) === 47 /* / */) {
    lead++;
    if (isDigit(line.charCodeAt(lead))) lead++;
    while (lead < n && isBlank(line.charCodeAt(lead))) lead++;
  }
  const numberEnd = blockNumberEnd(line, lead, dialect);
  // Heidenhain `*` structure lines are comments.
  const starComment = dialect === 'heidenhain' && line.charCodeAt(numberEnd) === 42;
  const skipFrom = ignore.blockNumbers && numberEnd > lead ? lead : -1;

  while (i < n) {
    if (i === skipFrom) {
      i = numberEnd;
      continue;
    }
    const c = line.charCodeAt(i);
    if (isBlank(c)) {
      const s = i;
      while (i < n && isBlank(line.charCodeAt(i))) i++;
      if (ignore.whitespace) pendingBlank = true;
      else for (let k = s; k < i; k++) put(line.charCodeAt(k));
      continue;
    }
    // Comments: `;` to the end of the line everywhere, `(...)` in ISO, `*` structure lines in Heidenhain.
    if (c === 59 || (c === 40 && dialect === 'iso') || (starComment && i === numberEnd)) {
      let end = n;
      if (c === 40) {
        const close = line.indexOf(')', i + 1);
        end = close < 0 ? n : close + 1;
      }
      if (ignore.comments) {
        pendingBlank = ignore.whitespace;
      } else {
        let e = end;
        if (ignore.whitespace) while (e > i && isBlank(line.charCodeAt(e - 1))) e--;
        putRange(line, i, e, false);
      }
      i = end;
      continue;
    }
    if (c === 34 /* " */) {
      const close = line.indexOf('"', i + 1);
      const end = close < 0 ? n : close + 1;
      putRange(line, i, end, false);
      i = end;
      continue;
    }
    if (isLetter(c)) {
      const s = i;
      while (i < n && isLetter(line.charCodeAt(i))) i++;
      putRange(line, s, i, ignore.case);
      nameLength = i - s;
      // Siemens `L0100` and `L100` are different subprograms: their digits stay as written.
      if (dialect === 'siemens' && i - s === 1 && (c === 76 || c === 108) && isDigit(line.charCodeAt(i))) {
        const d = i;
        while (i < n && isDigit(line.charCodeAt(i))) i++;
        putRange(line, d, i, false);
      }
      continue;
    }
    const signed = (c === 43 || c === 45) && takesSign(last) && i + 1 < n && (isDigit(line.charCodeAt(i + 1)) || line.charCodeAt(i + 1) === 46);
    if (isDigit(c) || c === 46 || signed) {
      const s = i;
      if (signed) i++;
      const i0 = i;
      while (i < n && isDigit(line.charCodeAt(i))) i++;
      const i1 = i;
      let point = false;
      let f0 = i;
      if (line.charCodeAt(i) === 46) {
        point = true;
        f0 = ++i;
        while (i < n && isDigit(line.charCodeAt(i))) i++;
      }
      // Digits inside a name (`PART01A`) are part of the name; `G01X5` is two address words.
      const inName = !point && nameLength > 1 && isLetter(line.charCodeAt(i));
      if (!ignore.numberFormat || inName || (i1 === i0 && i === f0)) putRange(line, s, i, false);
      else putNumber(line, signed && c === 45, i0, i1, point, f0, i, pointSignificant);
      continue;
    }
    putRange(line, i, i + 1, false);
    i++;
  }
  return len;
}

/** The code units `canonicalInto` wrote last (a view, valid until its next call). */
export function canonicalUnits(): Uint16Array {
  return buf;
}

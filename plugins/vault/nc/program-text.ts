/**
 * From stored bytes to lines: decoding, line endings, dialect detection.
 *
 * Decoding: UTF-8 when the bytes are valid UTF-8 (a leading BOM is dropped),
 * otherwise ISO-8859-1 (latin1), which maps every byte to one character and so
 * never fails. NC code itself is ASCII; only comments and operator messages
 * carry other characters, written by newer controls in UTF-8 and by older ones
 * and many post-processors in a latin1 code page.
 *
 * Lines are kept as byte ranges of the stored bytes and decoded only when
 * needed (a line not seen before, a line shown in a hunk): two versions of a
 * program share nearly all their lines.
 */
import { isAscii, isUtf8 } from 'node:buffer';
import type { Dialect, DialectOption } from './options.js';

/** A program as lines: byte ranges of `bytes`, line endings excluded. */
export interface ProgramText {
  bytes: Buffer;
  /** Start and end (exclusive) byte offset of each line. */
  starts: Int32Array;
  ends: Int32Array;
  /** Whether the last line ended with a line ending (as `diff` reports it). */
  finalNewline: boolean;
  encoding: 'utf-8' | 'latin1';
  /** Text of line i (0-based). */
  line(i: number): string;
  readonly count: number;
}

/** Splits `bytes` at CRLF, LF or CR and picks the decoding. */
export function readProgramText(stored: Uint8Array): ProgramText {
  const bytes = Buffer.from(stored.buffer, stored.byteOffset, stored.byteLength);
  const n = bytes.length;
  // Plain ASCII (nearly every NC file) decodes the same either way; latin1 is the fast copy.
  const utf8 = !isAscii(bytes) && isUtf8(bytes);
  const encoding: ProgramText['encoding'] = isAscii(bytes) || utf8 ? 'utf-8' : 'latin1';
  let start = utf8 && n >= 3 && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? 3 : 0;
  // Counted first so the offsets are allocated once at their size: fresh
  // memory is faulted in page by page, which costs more here than this pass.
  let lines = 1;
  for (let i = start; i < n; i++) {
    const b = bytes[i] as number;
    if (b === 10 || b === 13) lines++;
  }
  const starts = new Int32Array(lines);
  const ends = new Int32Array(lines);
  let count = 0;
  for (let i = start; i < n; i++) {
    const b = bytes[i] as number;
    if (b === 10 || b === 13) {
      starts[count] = start;
      ends[count++] = i;
      if (b === 13 && bytes[i + 1] === 10) i++;
      start = i + 1;
    }
  }
  const finalNewline = start >= n;
  if (!finalNewline) {
    starts[count] = start;
    ends[count++] = n;
  }
  const decode = utf8 ? 'utf8' : 'latin1';
  return {
    bytes,
    starts: starts.subarray(0, count),
    ends: ends.subarray(0, count),
    finalNewline,
    encoding,
    count,
    line: (i: number) => bytes.toString(decode, starts[i], ends[i]),
  };
}

// Markers read in the first lines of a program. Heidenhain conversational is
// unmistakable (BEGIN PGM, TOOL CALL, CYCL DEF, numbered `L X+..` lines);
// Siemens is recognised by constructs ISO G-code does not have.
const HEIDENHAIN = /^\s*\d*\s*(BEGIN PGM|END PGM|TOOL CALL|CYCL DEF|BLK FORM|LBL\s)|^\s*\d+\s+L\s+[XYZIJKABC][+-]/im;
const SIEMENS = /^%_N_|MSG\s*\(|\bCYCLE\d+\s*\(|\bT\s*=\s*"|\bG5(0[0-9]|[1-9][0-9])\b|\bDEF\s+(REAL|INT|BOOL|STRING|CHAR|AXIS|FRAME)\b|\b(TRANS|ATRANS|SUPA|MCALL|WORKPIECE|G642|CFC)\b|\bM17\b/im;
const SAMPLE_BYTES = 64 * 1024;

const sample = (text: ProgramText): string => text.bytes.toString('latin1', 0, Math.min(text.bytes.length, SAMPLE_BYTES));

/**
 * The dialect to canonicalise with. `auto` looks at the first 64 KiB of both
 * programs: Heidenhain if either shows Heidenhain markers, else Siemens if
 * either shows Siemens markers, else ISO (FANUC and alike).
 */
export function resolveDialect(option: DialectOption, from: ProgramText, to: ProgramText): Dialect {
  if (option === 'fanuc' || option === 'iso') return 'iso';
  if (option !== 'auto') return option;
  const a = sample(from);
  const b = sample(to);
  if (HEIDENHAIN.test(a) || HEIDENHAIN.test(b)) return 'heidenhain';
  if (SIEMENS.test(a) || SIEMENS.test(b)) return 'siemens';
  return 'iso';
}

/**
 * From stored bytes to lines: decoding, line endings, dialect detection.
 *
 * Decoding: UTF-8 when the bytes are valid UTF-8 (a leading BOM is dropped),
 * otherwise ISO-8859-1 (latin1), which maps every byte to one character and so
 * never fails. NC code itself is ASCII; only comments and operator messages
 * carry other characters, written by newer controls in UTF-8 and by older ones
 * and many post-processors in a latin1 code page.
 */
import { isAscii, isUtf8 } from 'node:buffer';
import type { Dialect, DialectOption } from './options.js';

/** A program split into lines, line endings removed. */
export interface ProgramText {
  lines: string[];
  /** Whether the last line ended with a line ending (as `diff` reports it). */
  finalNewline: boolean;
  encoding: 'utf-8' | 'latin1';
}

/** Decodes `bytes` and splits them at CRLF, LF or CR. */
export function readProgramText(bytes: Uint8Array): ProgramText {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let text: string;
  let encoding: ProgramText['encoding'] = 'utf-8';
  // Plain ASCII (nearly every NC file) decodes the same either way; latin1 is the fast copy.
  if (isAscii(buffer)) text = buffer.toString('latin1');
  else if (isUtf8(buffer)) text = buffer.toString('utf8').replace(/^\uFEFF/, '');
  else {
    text = buffer.toString('latin1');
    encoding = 'latin1';
  }
  if (text.length === 0) return { lines: [], finalNewline: true, encoding };
  const lines = text.includes('\r') ? text.split(/\r\n|\r|\n/) : text.split('\n');
  const last = text.charCodeAt(text.length - 1);
  const finalNewline = last === 10 || last === 13;
  if (finalNewline) lines.pop();
  return { lines, finalNewline, encoding };
}

// Markers read in the first lines of a program. Heidenhain conversational is
// unmistakable (BEGIN PGM, TOOL CALL, CYCL DEF, numbered `L X+..` lines);
// Siemens is recognised by constructs ISO G-code does not have.
const HEIDENHAIN = /^\s*\d*\s*(BEGIN PGM|END PGM|TOOL CALL|CYCL DEF|BLK FORM|LBL\s)|^\s*\d+\s+L\s+[XYZIJKABC][+-]/im;
const SIEMENS = /^%_N_|MSG\s*\(|\bCYCLE\d+\s*\(|\bT\s*=\s*"|\bG5(0[0-9]|[1-9][0-9])\b|\bDEF\s+(REAL|INT|BOOL|STRING|CHAR|AXIS|FRAME)\b|\b(TRANS|ATRANS|SUPA|MCALL|WORKPIECE|G642|CFC)\b|\bM17\b/im;
const SAMPLE_CHARS = 64 * 1024;

function sample(lines: readonly string[]): string {
  const out: string[] = [];
  let size = 0;
  for (const line of lines) {
    out.push(line);
    size += line.length + 1;
    if (size > SAMPLE_CHARS) break;
  }
  return out.join('\n');
}

/**
 * The dialect to canonicalise with. `auto` looks at the first 64 KiB of both
 * programs: Heidenhain if either shows Heidenhain markers, else Siemens if
 * either shows Siemens markers, else ISO (FANUC and alike).
 */
export function resolveDialect(option: DialectOption, from: readonly string[], to: readonly string[]): Dialect {
  if (option === 'fanuc' || option === 'iso') return 'iso';
  if (option !== 'auto') return option;
  const a = sample(from);
  const b = sample(to);
  if (HEIDENHAIN.test(a) || HEIDENHAIN.test(b)) return 'heidenhain';
  if (SIEMENS.test(a) || SIEMENS.test(b)) return 'siemens';
  return 'iso';
}

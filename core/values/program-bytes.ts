/**
 * NC programs are bytes. This is where the gateway and the program service
 * agree on what that means at their edges: how program bytes travel inside
 * an interface's input or answer (as they are in the process, base64 in
 * JSON), how they become text for a reader, and how a driver's limits on the
 * bytes it can carry are checked and said in words a plant understands.
 */
import { isAscii, isUtf8 } from 'node:buffer';
import { z } from 'zod';
import type { ProgramByteLimits } from '../driver-seam/driver.js';

/**
 * Program bytes inside an interface's input or answer. A caller in the same
 * process (the program service's in-process link) hands them over and gets
 * them back as they are; JSON, over HTTP or anywhere else, carries them as
 * base64 (`toJSON`).
 */
export class ProgramBytes {
  constructor(readonly bytes: Buffer) {}

  toJSON(): string {
    return this.bytes.toString('base64');
  }
}

/** The base64 alphabet of RFC 4648 with its padding at the end only. */
const BASE64_TEXT = /^[A-Za-z0-9+/]*={0,2}$/;

/**
 * Whether `text` is base64 (RFC 4648: its alphabet, padded to a multiple of
 * four, no whitespace), as zod's `z.base64()` decides, without decoding it:
 * zod checks by decoding with `atob` into a throwaway string, which for a
 * program of some hundred kilobytes cost more than the decoding the bytes
 * are then read with.
 */
export function isBase64(text: string): boolean {
  return text.length % 4 === 0 && BASE64_TEXT.test(text);
}

/** An input field of program bytes: base64 text from JSON, or ProgramBytes from a caller in the process. Documented as base64. */
export const programBytesInput = (description: string) =>
  z
    .custom<string | ProgramBytes>((v) => v instanceof ProgramBytes || (typeof v === 'string' && isBase64(v)), { error: 'expected base64 (RFC 4648)' })
    .meta({ type: 'string', contentEncoding: 'base64', description } as Record<string, unknown>);

/** The bytes of a programBytesInput value. */
export const bytesOf = (value: string | ProgramBytes): Buffer => (value instanceof ProgramBytes ? value.bytes : Buffer.from(value, 'base64'));

/** How program bytes were read as text: UTF-8 when they are valid UTF-8, else Windows-1252. */
export type ProgramEncoding = 'utf-8' | 'windows-1252';

/** Windows-1252 at 0x80–0x9F (WHATWG Encoding); its five unassigned bytes keep their C1 code point, so no two bytes read alike. */
const CP1252_HIGH = [
  0x20ac, 0x81, 0x201a, 0x192, 0x201e, 0x2026, 0x2020, 0x2021, 0x2c6, 0x2030, 0x160, 0x2039, 0x152, 0x8d, 0x17d, 0x8f,
  0x90, 0x2018, 0x2019, 0x201c, 0x201d, 0x2022, 0x2013, 0x2014, 0x2dc, 0x2122, 0x161, 0x203a, 0x153, 0x9d, 0x17e, 0x178,
].map((code) => String.fromCharCode(code));
const C1 = /[\x80-\x9f]/g;

/**
 * Program bytes as text for a reader. UTF-8 when the bytes are valid UTF-8 (a
 * byte-order mark is kept as a character); otherwise Windows-1252, the code
 * page older controls and CAM post-processors write comments in: every byte
 * is one character, so the text names each byte and nothing is lost or
 * replaced. (Node's own windows-1252 decoder reads 0x80–0x9F as Latin-1, and
 * only on some versions; the 32 differing characters are mapped here.)
 */
export function programText(bytes: Uint8Array): { text: string; encoding: ProgramEncoding } {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (isAscii(buffer) || isUtf8(buffer)) return { text: buffer.toString('utf8'), encoding: 'utf-8' };
  return { text: buffer.toString('latin1').replace(C1, (ch) => CP1252_HIGH[ch.charCodeAt(0) - 0x80] as string), encoding: 'windows-1252' };
}

/** Paper-tape characters a reader skips: NUL (blank tape), DC1–DC4 (reader and punch on/off) and DEL (rubout). */
export const isTapeCharacter = (byte: number): boolean => byte === 0x00 || (byte >= 0x11 && byte <= 0x14) || byte === 0x7f;

/** A line of program text (one character per byte) without its tape characters and surrounding blanks: what a controller reads in it. */
export function blockText(line: string): string {
  let kept = '';
  for (let i = 0; i < line.length; i++) if (!isTapeCharacter(line.charCodeAt(i))) kept += line[i];
  return kept.trim();
}

/** How many characters lead a line before its first word: blanks and tape characters. */
export function leadingBlanks(line: string): number {
  let i = 0;
  while (i < line.length && (isTapeCharacter(line.charCodeAt(i)) || /\s/.test(line[i] as string))) i++;
  return i;
}

const CONTROL_NAMES = ['NUL', 'SOH', 'STX', 'ETX', 'EOT', 'ENQ', 'ACK', 'BEL', 'BS', 'TAB', 'LF', 'VT', 'FF', 'CR', 'SO', 'SI', 'DLE', 'DC1', 'DC2', 'DC3', 'DC4', 'NAK', 'SYN', 'ETB', 'CAN', 'EM', 'SUB', 'ESC', 'FS', 'GS', 'RS', 'US'];

/** A byte for a person: `0xD8 ('Ø' in Windows-1252)`, `0x12 (DC2)`. */
export function describeByte(byte: number): string {
  const hex = `0x${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  if (byte < 0x20) return `${hex} (${CONTROL_NAMES[byte] ?? 'control'})`;
  if (byte === 0x7f) return `${hex} (DEL)`;
  if (byte < 0x80) return `${hex} ('${String.fromCharCode(byte)}')`;
  const ch = programText(Uint8Array.of(byte)).text;
  return byte >= 0xa0 || ch.charCodeAt(0) > 0xff ? `${hex} ('${ch}' in Windows-1252)` : `${hex} (unassigned in Windows-1252)`;
}

/** Where a byte a driver cannot carry sits in a program. */
export interface RefusedByte {
  byte: number;
  /** 0-based byte offset. */
  offset: number;
  /** 1-based line (LF, CR or CRLF end a line) and column (in bytes). */
  line: number;
  column: number;
}

/** The first byte of `content` that `limits` refuse, or undefined when the driver carries them all. */
export function findRefusedByte(content: Uint8Array, limits: ProgramByteLimits | null | undefined): RefusedByte | undefined {
  if (!limits || limits.refused.length === 0) return undefined;
  const buffer = Buffer.from(content.buffer, content.byteOffset, content.byteLength);
  // The usual limit (ASCII only) is checked in one vectorised pass.
  if (limits.refused.every((r) => r.from >= 0x80) && isAscii(buffer)) return undefined;
  const refused = new Uint8Array(256);
  for (const { from, to } of limits.refused) refused.fill(1, Math.max(0, from), Math.min(255, to) + 1);
  let line = 1;
  let lineStart = 0;
  for (let i = 0; i < buffer.length; i++) {
    const b = buffer[i] as number;
    if (refused[b]) return { byte: b, offset: i, line, column: i - lineStart + 1 };
    if (b === 0x0a || (b === 0x0d && buffer[i + 1] !== 0x0a)) {
      line++;
      lineStart = i + 1;
    }
  }
  return undefined;
}

/** `byte 0xD8 ('Ø' in Windows-1252) in line 2, column 9`. */
export const describeRefusedByte = (found: RefusedByte): string => `byte ${describeByte(found.byte)} in line ${found.line}, column ${found.column}`;

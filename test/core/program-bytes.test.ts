/** Program bytes at the edges: text for readers, the check of a driver's byte limits, and bytes inside interface answers. */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ProgramBytes, blockText, bytesOf, describeByte, findRefusedByte, isBase64, programBytesInput, programText } from '../../core/values/program-bytes.js';

describe('programText', () => {
  it('reads valid UTF-8 as UTF-8, keeping a byte-order mark as a character', () => {
    const bytes = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('O1 (Ø 25)\n', 'utf8')]);
    expect(programText(bytes)).toEqual({ text: '\ufeffO1 (Ø 25)\n', encoding: 'utf-8' });
  });

  it('reads anything else as Windows-1252: every byte is one character, and no two bytes read alike', () => {
    const all = Buffer.from(Array.from({ length: 256 }, (_, i) => i));
    const { text, encoding } = programText(all);
    expect(encoding).toBe('windows-1252');
    expect(text.length).toBe(256);
    expect(new Set(text).size).toBe(256);
    // Where Windows-1252 differs from Latin-1 (0x80–0x9F), and where both agree.
    expect([text[0x80], text[0x96], text[0x9f], text[0xd8], text[0xc4], text[0x41]]).toEqual(['€', '–', 'Ÿ', 'Ø', 'Ä', 'A']);
    // The five bytes Windows-1252 leaves unassigned keep their own code point.
    expect([0x81, 0x8d, 0x8f, 0x90, 0x9d].map((b) => text.charCodeAt(b))).toEqual([0x81, 0x8d, 0x8f, 0x90, 0x9d]);
  });
});

describe('findRefusedByte', () => {
  const asciiOnly = { refused: [{ from: 0x80, to: 0xff }], reason: 'ASCII only' };

  it('finds the first refused byte with its line and column, whatever the line ends', () => {
    const crlf = Buffer.from('%\r\nO1\r\n(Ø)\r\n', 'latin1');
    expect(findRefusedByte(crlf, asciiOnly)).toEqual({ byte: 0xd8, offset: 8, line: 3, column: 2 });
    expect(findRefusedByte(Buffer.from('%\rO1\r(\xd8)', 'latin1'), asciiOnly)).toMatchObject({ line: 3, column: 2 });
    expect(findRefusedByte(Buffer.from('%\nO1\n(\xd8)', 'latin1'), asciiOnly)).toMatchObject({ line: 3, column: 2 });
  });

  it('finds nothing when the driver carries every byte, or when every byte is allowed', () => {
    expect(findRefusedByte(Buffer.from([0xd8, 0x00]), null)).toBeUndefined();
    expect(findRefusedByte(Buffer.from([0xd8, 0x00]), { refused: [], reason: '' })).toBeUndefined();
    expect(findRefusedByte(Buffer.from('%\r\nO1\r\n\x14\x00', 'latin1'), asciiOnly)).toBeUndefined();
    expect(findRefusedByte(Buffer.from('O1\x00', 'latin1'), { refused: [{ from: 0, to: 0 }], reason: 'no NUL' })).toMatchObject({ byte: 0, column: 3 });
  });
});

describe('describing bytes and blocks', () => {
  it('names a byte for a person', () => {
    expect([0xd8, 0x12, 0x00, 0x7f, 0x41, 0x80, 0x81].map(describeByte)).toEqual([
      "0xD8 ('Ø' in Windows-1252)", '0x12 (DC2)', '0x00 (NUL)', '0x7F (DEL)', "0x41 ('A')", "0x80 ('€' in Windows-1252)", '0x81 (unassigned in Windows-1252)',
    ]);
  });

  it('reads a block as a tape reader does: tape characters and blanks around it do not count', () => {
    expect(['\x12%', ' O1234 (X) ', '\x14\x00\x00', '\x7f'].map(blockText)).toEqual(['%', 'O1234 (X)', '', '']);
  });
});

describe('ProgramBytes', () => {
  it('is the bytes themselves in the process and base64 in JSON; the input field takes either', () => {
    const bytes = Buffer.from([0x12, 0x25, 0xd8, 0x00]);
    const wrapped = new ProgramBytes(bytes);
    expect(JSON.parse(JSON.stringify({ contentBase64: wrapped }))).toEqual({ contentBase64: bytes.toString('base64') });
    const field = programBytesInput('the bytes');
    expect(bytesOf(field.parse(wrapped))).toBe(bytes);
    expect(bytesOf(field.parse(bytes.toString('base64')))).toEqual(bytes);
    expect(field.safeParse('not base64!').success).toBe(false);
    expect(field.safeParse(bytes).success).toBe(false);
  });
});

describe('isBase64', () => {
  it('decides as zod\'s z.base64() does, without decoding: the alphabet, padding at the end only, a multiple of four, no whitespace', () => {
    const zod = z.base64();
    const encoded = [0, 1, 2, 3, 4, 5, 255, 1000].map((n) => Buffer.from(Array.from({ length: n }, (_, i) => (i * 37) & 255)).toString('base64'));
    const refused = ['A', 'AB=', 'A===', '====', 'AB=C', 'ab cd', 'abc\n', ' abcd', 'ab-_', 'ab+/AB==AB==', 'QU=\u00e9', 'Zm9v\u0000', 'Zm9v\u200b'];
    for (const text of [...encoded, ...refused, '', 'ab+/', 'AB==', 'QUJD']) expect(isBase64(text), JSON.stringify(text)).toBe(zod.safeParse(text).success);
    expect(encoded.every(isBase64)).toBe(true);
    expect(refused.some(isBase64)).toBe(false);
  });
});

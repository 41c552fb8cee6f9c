import { describe, expect, it } from 'vitest';
import { decodeRegisters, encodeRegisters } from '../../../drivers/modbus/codec.js';
import { itemSchema, type RegisterItem } from '../../../drivers/modbus/register-items.js';

function item(raw: Record<string, unknown>): RegisterItem {
  const parsed = itemSchema({ kind: raw.type === 'string' ? 'text' : 'number' }).parse({ function: 'holding', address: 0, ...raw });
  if (parsed.source !== 'register') throw new Error('expected a register item');
  return parsed;
}

describe('modbus codec', () => {
  it('decodes 16-bit integers signed and unsigned, with scale', () => {
    expect(decodeRegisters([0xfffe], 0, item({ type: 'int16' }))).toBe(-2);
    expect(decodeRegisters([0xfffe], 0, item({ type: 'uint16' }))).toBe(65_534);
    expect(decodeRegisters([0, 1234], 1, item({ type: 'uint16', scale: 0.1 }))).toBeCloseTo(123.4, 9);
  });

  it('decodes 32-bit values in every word and byte order', () => {
    // 0x12345678 laid out as ABCD, CDAB (little word), BADC (little byte), DCBA (both).
    expect(decodeRegisters([0x1234, 0x5678], 0, item({ type: 'uint32' }))).toBe(0x12345678);
    expect(decodeRegisters([0x5678, 0x1234], 0, item({ type: 'uint32', wordOrder: 'little' }))).toBe(0x12345678);
    expect(decodeRegisters([0x3412, 0x7856], 0, item({ type: 'uint32', byteOrder: 'little' }))).toBe(0x12345678);
    expect(decodeRegisters([0x7856, 0x3412], 0, item({ type: 'uint32', wordOrder: 'little', byteOrder: 'little' }))).toBe(0x12345678);
    expect(decodeRegisters([0xffff, 0xfffb], 0, item({ type: 'int32' }))).toBe(-5);
    // 123.456 as an IEEE 754 float32 is 0x42F6E979.
    expect(decodeRegisters([0x42f6, 0xe979], 0, item({ type: 'float32' }))).toBe(123.456);
    expect(decodeRegisters([0xe979, 0x42f6], 0, item({ type: 'float32', wordOrder: 'little' }))).toBe(123.456);
  });

  it('round-trips every numeric type through encode and decode', () => {
    const cases: [Record<string, unknown>, number][] = [
      [{ type: 'int16', byteOrder: 'little' }, -1234],
      [{ type: 'uint16', scale: 0.01 }, 12.34],
      [{ type: 'int32', wordOrder: 'little' }, -70_000],
      [{ type: 'uint32', scale: 1000 }, 1_700_000_000_000],
      [{ type: 'float32', wordOrder: 'little', byteOrder: 'little' }, -0.5],
    ];
    for (const [raw, value] of cases) {
      const spec = item(raw);
      expect(decodeRegisters(encodeRegisters(value, spec), 0, spec)).toBeCloseTo(value, 6);
    }
  });

  it('decodes strings two characters per register, cut at NUL and trailing spaces, honouring byte order', () => {
    const words = [0x4f31, 0x3030, 0x3120, 0x0000]; // "O1001 " then NUL
    expect(decodeRegisters(words, 0, item({ type: 'string', length: 4 }))).toBe('O1001');
    expect(decodeRegisters([0x314f, 0x3030], 0, item({ type: 'string', length: 2, byteOrder: 'little' }))).toBe('O100');
    const text = item({ type: 'string', length: 3 });
    expect(encodeRegisters('AB', text)).toEqual([0x4142, 0, 0]);
    expect(decodeRegisters(encodeRegisters('TOO LONG TEXT', text), 0, text)).toBe('TOO LO');
  });

  it('decodes a register bool as non-zero', () => {
    const flag = itemSchema({ kind: 'boolean' }).parse({ function: 'holding', address: 0, type: 'bool' });
    if (flag.source !== 'register') throw new Error('expected a register item');
    expect(decodeRegisters([0], 0, flag)).toBe(false);
    expect(decodeRegisters([4], 0, flag)).toBe(true);
  });

  it('keeps enumerations as codes for the family mapping', () => {
    const state = itemSchema({ kind: 'choice', values: ['RESET', 'RUNNING'] }).parse({ function: 'holding', address: 0, type: 'uint16', enum: { '0': 'RESET', '3': 'RUNNING' } });
    if (state.source !== 'register') throw new Error('expected a register item');
    expect(decodeRegisters([3], 0, state)).toBe(3);
    expect(state.enumeration?.get(3)).toBe('RUNNING');
  });
});

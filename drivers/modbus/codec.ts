/**
 * Register words ↔ values. On the wire every register is big-endian; a
 * device that stores a value otherwise is described by the item's byte order
 * (bytes within each register) and word order (which register of a 32-bit
 * value comes first). Strings are 2 characters per register, cut at the first
 * NUL and trailing spaces.
 */
import type { RegisterItem } from './register-items.js';

export type DecodedValue = number | boolean | string;

const scratch = new DataView(new ArrayBuffer(4));

const swapBytes = (word: number): number => ((word & 0xff) << 8) | ((word >> 8) & 0xff);

/** The item's registers in the order the value's bytes run, each word in big-endian byte order. */
function orderedWords(words: readonly number[], offset: number, item: RegisterItem): number[] {
  const out: number[] = [];
  for (let i = 0; i < item.width; i++) {
    const word = words[offset + i] ?? 0;
    out.push(item.byteOrder === 'little' ? swapBytes(word) : word);
  }
  if (item.wordOrder === 'little' && item.width === 2 && item.type !== 'string') out.reverse();
  return out;
}

/** Decodes an item from register words; `offset` is the item's index into `words`. Enumerations are applied by the caller. */
export function decodeRegisters(words: readonly number[], offset: number, item: RegisterItem): DecodedValue {
  const w = orderedWords(words, offset, item);
  switch (item.type) {
    case 'bool':
      return (w[0] ?? 0) !== 0;
    case 'string': {
      let text = '';
      for (const word of w) text += String.fromCharCode(word >> 8, word & 0xff);
      const nul = text.indexOf('\u0000');
      return (nul >= 0 ? text.slice(0, nul) : text).trimEnd();
    }
    case 'int16':
    case 'uint16':
      scratch.setUint16(0, w[0] ?? 0);
      return scaled(item.type === 'int16' ? scratch.getInt16(0) : scratch.getUint16(0), item.scale);
    case 'int32':
    case 'uint32':
    case 'float32':
      scratch.setUint16(0, w[0] ?? 0);
      scratch.setUint16(2, w[1] ?? 0);
      // A float32 carries about 7 significant digits; more would only show the binary rounding.
      if (item.type === 'float32') return scaled(Number(scratch.getFloat32(0).toPrecision(7)), item.scale);
      return scaled(item.type === 'int32' ? scratch.getInt32(0) : scratch.getUint32(0), item.scale);
  }
}

/** Encodes a value into the item's register words (the inverse of decodeRegisters); numbers are unscaled and rounded for integer types. */
export function encodeRegisters(value: DecodedValue, item: RegisterItem): number[] {
  let words: number[];
  switch (item.type) {
    case 'bool':
      words = [value === true || (typeof value === 'number' && value !== 0) ? 1 : 0];
      break;
    case 'string': {
      const text = String(value);
      words = [];
      for (let i = 0; i < item.width; i++) words.push(((text.charCodeAt(2 * i) & 0xff || 0) << 8) | (text.charCodeAt(2 * i + 1) & 0xff || 0));
      break;
    }
    default: {
      const raw = Number(value) / item.scale;
      if (item.type === 'float32') scratch.setFloat32(0, raw);
      else {
        const rounded = Math.round(raw);
        if (item.type === 'int16') scratch.setInt16(0, clamp(rounded, -32_768, 32_767));
        else if (item.type === 'uint16') scratch.setUint16(0, clamp(rounded, 0, 65_535));
        else if (item.type === 'int32') scratch.setInt32(0, clamp(rounded, -2_147_483_648, 2_147_483_647));
        else scratch.setUint32(0, clamp(rounded, 0, 4_294_967_295));
      }
      words = item.width === 1 ? [scratch.getUint16(0)] : [scratch.getUint16(0), scratch.getUint16(2)];
    }
  }
  if (item.wordOrder === 'little' && item.width === 2 && item.type !== 'string') words.reverse();
  return item.byteOrder === 'little' ? words.map(swapBytes) : words;
}

const scaleDecimals = new Map<number, number>();

/** `raw × scale` without binary noise: 1586 × 0.1 is 158.6, not 158.60000000000002. */
function scaled(raw: number, scale: number): number {
  if (scale === 1) return raw;
  let decimals = scaleDecimals.get(scale);
  if (decimals === undefined) {
    decimals = Number.isInteger(scale) ? 0 : (/\.(\d+)$/.exec(String(scale))?.[1]?.length ?? 10);
    scaleDecimals.set(scale, decimals);
  }
  const value = raw * scale;
  return decimals === 0 ? value : Number(value.toFixed(Math.min(20, decimals + 7)));
}

function clamp(value: number, min: number, max: number): number {
  return Number.isFinite(value) ? Math.min(max, Math.max(min, value)) : 0;
}

/**
 * Canonical forms to dense ids, taken straight from the canonicaliser's
 * buffer: the code units are pooled and a string is made only when one is
 * asked for, so the forms of 100,000 blocks are not 100,000 strings for the
 * collector to move.
 */
import { buildSlots } from './slot-index.js';

export class UnitTable {
  private pool = new Uint16Array(1 << 16);
  private used = 0;
  private starts = new Int32Array(1024);
  private ends = new Int32Array(1024);
  private hashes = new Int32Array(1024);
  // Per form, which of the letters A–Z it contains (bit c − 65): the summary asks this of every block.
  private letters = new Int32Array(1024);
  private slots = new Int32Array(2048);
  private mask = 2047;
  size = 0;

  /** Entries the slot table holds (what keeping this table for reuse costs). */
  get capacity(): number {
    return this.slots.length;
  }

  /** Forgets every form (the memory stays, already faulted in, for the next diff). */
  clear(): void {
    this.size = 0;
    this.used = 0;
    this.slots.fill(0);
  }

  /**
   * Makes room for `more` new forms of about `units` code units in all, so
   * that a large program is not grown and rehashed step by step.
   */
  reserve(more: number, units: number): void {
    const need = this.size + more;
    if (need > this.hashes.length) {
      this.starts = widen(this.starts, need);
      this.ends = widen(this.ends, need);
      this.hashes = widen(this.hashes, need);
      this.letters = widen(this.letters, need);
    }
    if (this.used + units > this.pool.length) {
      const pool = new Uint16Array(this.used + units);
      pool.set(this.pool.subarray(0, this.used));
      this.pool = pool;
    }
    let slots = this.slots.length;
    while (need * 2 > slots) slots *= 2;
    if (slots > this.slots.length) this.rehash(slots);
  }

  /** The id of units[0..length), given a new one when new. */
  add(units: Uint16Array, length: number): number {
    let h = 0x811c9dc5;
    for (let k = 0; k < length; k++) h = Math.imul(h ^ (units[k] as number), 0x01000193);
    h |= 0;
    let slot = h & this.mask;
    for (; ; slot = (slot + 1) & this.mask) {
      const entry = this.slots[slot] as number;
      if (entry === 0) break;
      if (this.hashes[entry - 1] === h && this.equal(entry - 1, units, length)) return entry - 1;
    }
    const id = this.size++;
    if (id === this.hashes.length) {
      this.starts = widen(this.starts, id * 2);
      this.ends = widen(this.ends, id * 2);
      this.hashes = widen(this.hashes, id * 2);
      this.letters = widen(this.letters, id * 2);
    }
    while (this.used + length > this.pool.length) {
      const pool = new Uint16Array(this.pool.length * 2);
      pool.set(this.pool);
      this.pool = pool;
    }
    // A plain loop: a subarray view per form would cost an object and a native call.
    const pool = this.pool;
    let letters = 0;
    for (let k = 0; k < length; k++) {
      const c = units[k] as number;
      pool[this.used + k] = c;
      if (c >= 65 && c <= 90) letters |= 1 << (c - 65);
    }
    this.letters[id] = letters;
    this.starts[id] = this.used;
    this.used += length;
    this.ends[id] = this.used;
    this.hashes[id] = h;
    this.slots[slot] = id + 1;
    if (this.size * 2 > this.slots.length) this.rehash(this.slots.length * 2);
    return id;
  }

  /** The id of `s`, given a new one when new. */
  addString(s: string): number {
    const units = new Uint16Array(s.length);
    for (let i = 0; i < s.length; i++) units[i] = s.charCodeAt(i);
    return this.add(units, s.length);
  }

  /** The form with this id as a string. */
  text(id: number): string {
    const s = this.starts[id] as number;
    const e = this.ends[id] as number;
    return Buffer.from(this.pool.buffer, this.pool.byteOffset + 2 * s, 2 * (e - s)).toString('utf16le');
  }

  /** Whether the form with this id contains any of the capital letters in `wanted` (a mask from `letterMask`). */
  contains(id: number, wanted: number): boolean {
    return ((this.letters[id] as number) & wanted) !== 0;
  }

  private equal(id: number, units: Uint16Array, length: number): boolean {
    const s = this.starts[id] as number;
    if ((this.ends[id] as number) - s !== length) return false;
    for (let k = 0; k < length; k++) if (this.pool[s + k] !== units[k]) return false;
    return true;
  }

  private rehash(size: number): void {
    this.slots = buildSlots(this.hashes, this.size, size);
    this.mask = size - 1;
  }
}

function widen(a: Int32Array<ArrayBuffer>, length: number): Int32Array<ArrayBuffer> {
  const b = new Int32Array(length);
  b.set(a);
  return b;
}

/** The capital letters of `letters` as a mask for `UnitTable.contains` (bit c − 65). */
export function letterMask(letters: string): number {
  let mask = 0;
  for (const c of letters) {
    const code = c.charCodeAt(0);
    if (code < 65 || code > 90) throw new RangeError(`not a capital letter: ${c}`);
    mask |= 1 << (code - 65);
  }
  return mask;
}

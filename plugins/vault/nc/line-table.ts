/**
 * Distinct lines of the programs being compared, found by their bytes: each
 * line is hashed and compared where it is stored, so a line already seen is
 * recognised without being decoded into a string. Ids are dense (0, 1, 2...).
 */
import { buildSlots } from './slot-index.js';
import type { ProgramText } from './program-text.js';

export class LineTable {
  private texts: ProgramText[] = [];
  // Per id: hash, the program it was first seen in (index into texts) and its line there.
  private hashes = new Int32Array(1024);
  private owner = new Int32Array(1024);
  private lineNo = new Int32Array(1024);
  private slots = new Int32Array(2048); // id + 1, 0 = empty
  private mask = 2047;
  size = 0;

  /** Entries the slot table holds (what keeping this table for reuse costs). */
  get capacity(): number {
    return this.slots.length;
  }

  /** Forgets every line and program (the memory stays, already faulted in, for the next diff). */
  clear(): void {
    this.texts = [];
    this.size = 0;
    this.slots.fill(0);
  }

  /** Registers a program whose lines will be added; returns its index for `add`. */
  program(text: ProgramText): number {
    this.texts.push(text);
    return this.texts.length - 1;
  }

  /**
   * Makes room for `more` new lines at once, so that a large program is not
   * grown and rehashed step by step (each step a fresh allocation the
   * allocator may have to fault in again).
   */
  reserve(more: number): void {
    const need = this.size + more;
    if (need > this.hashes.length) {
      const grow = (a: Int32Array<ArrayBuffer>): Int32Array<ArrayBuffer> => {
        const b = new Int32Array(need);
        b.set(a.subarray(0, this.size));
        return b;
      };
      this.hashes = grow(this.hashes);
      this.owner = grow(this.owner);
      this.lineNo = grow(this.lineNo);
    }
    let slots = this.slots.length;
    while (need * 2 > slots) slots *= 2;
    if (slots > this.slots.length) this.rehash(slots);
  }

  /** The id of line `i` of program `p` (as returned by `program`), new ids counting up from `size`. */
  add(p: number, i: number): number {
    const text = this.texts[p] as ProgramText;
    const bytes = text.bytes;
    const s = text.starts[i] as number;
    const e = text.ends[i] as number;
    let h = 0x811c9dc5;
    for (let k = s; k < e; k++) h = Math.imul(h ^ (bytes[k] as number), 0x01000193);
    h |= 0;
    let slot = h & this.mask;
    for (; ; slot = (slot + 1) & this.mask) {
      const entry = this.slots[slot] as number;
      if (entry === 0) break;
      const id = entry - 1;
      if (this.hashes[id] === h && this.equal(id, bytes, s, e)) return id;
    }
    const id = this.size++;
    if (id === this.hashes.length) this.widen();
    this.hashes[id] = h;
    this.owner[id] = p;
    this.lineNo[id] = i;
    this.slots[slot] = id + 1;
    // Kept at most half full, so probe runs stay short.
    if (this.size * 2 > this.slots.length) this.rehash(this.slots.length * 2);
    return id;
  }

  private equal(id: number, bytes: Buffer, s: number, e: number): boolean {
    const other = this.texts[this.owner[id] as number] as ProgramText;
    const line = this.lineNo[id] as number;
    const os = other.starts[line] as number;
    if ((other.ends[line] as number) - os !== e - s) return false;
    const ob = other.bytes;
    for (let k = 0; k < e - s; k++) if (ob[os + k] !== bytes[s + k]) return false;
    return true;
  }

  private widen(): void {
    const grow = (a: Int32Array<ArrayBuffer>): Int32Array<ArrayBuffer> => {
      const b = new Int32Array(a.length * 2);
      b.set(a);
      return b;
    };
    this.hashes = grow(this.hashes);
    this.owner = grow(this.owner);
    this.lineNo = grow(this.lineNo);
  }

  private rehash(size: number): void {
    this.slots = buildSlots(this.hashes, this.size, size);
    this.mask = size - 1;
  }
}

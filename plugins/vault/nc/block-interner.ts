/**
 * Lines to canonical block ids shared by both programs. A line already seen
 * (the same text anywhere in either program) is not canonicalised again:
 * two versions of a program share nearly all their lines, so about half the
 * canonicalisation is saved, and the diff compares integers.
 */
import { canonicalInto, canonicalLoaded, canonicalUnits, loadLineBytes, loadLineString, type CanonicalRules } from './blocks.js';
import type { ProgramText } from './program-text.js';
import { LineTable } from './line-table.js';
import { UnitTable } from './unit-table.js';

/** One program's compared blocks: canonical id and original line (1-based) of each. */
export interface ComparedBlocks {
  ids: Int32Array;
  lineOf: Int32Array;
}

const DROPPED = -1;

// The tables of the last diff, kept for the next one: on this kind of machine
// every page of fresh memory costs a fault (tens of microseconds), and a
// 100,000-block diff fills megabytes of tables. Kept only up to about a
// million lines, so an outsized program does not hold its memory afterwards.
const KEEP_SLOTS = 1 << 21;
let spare: { lines: LineTable; byKey: UnitTable; idOfLine: Int32Array; blockArrays: Int32Array[] } | null = null;

export class BlockInterner {
  // Each distinct line seen, and per line its canonical id (or DROPPED).
  private readonly lines: LineTable;
  private idOfLine: Int32Array;
  // The ids and line numbers arrays of the first two programs, per program.
  private readonly blockArrays: Int32Array[];
  private readonly byKey: UnitTable;
  // Form the machine summary reads (every rule on) per id, when it differs from the compared form.
  private readonly machine: string[] = [];
  private readonly dropEmpty: boolean;
  private readonly same: boolean;

  constructor(
    private readonly rules: CanonicalRules,
    private readonly machineRules: CanonicalRules,
  ) {
    this.dropEmpty = rules.ignore.whitespace || rules.ignore.comments;
    this.same = sameRules(rules, machineRules);
    const kept = spare;
    spare = null;
    this.lines = kept?.lines ?? new LineTable();
    this.byKey = kept?.byKey ?? new UnitTable();
    this.idOfLine = kept?.idOfLine ?? new Int32Array(1024);
    this.blockArrays = kept?.blockArrays ?? [];
  }

  /** An array of at least n entries for program p: kept from an earlier diff for the first two programs. */
  private blockArray(p: number, k: number, n: number): Int32Array {
    if (p > 1) return new Int32Array(n);
    const kept = this.blockArrays[2 * p + k];
    if (kept !== undefined && kept.length >= n) return kept;
    const made = new Int32Array(n);
    this.blockArrays[2 * p + k] = made;
    return made;
  }

  /**
   * Hands the tables on to the next interner (cleared, so no program is held).
   * Neither this interner nor the blocks it gave may be used afterwards: the
   * next diff writes over them.
   */
  release(): void {
    if (this.lines.capacity > KEEP_SLOTS || this.byKey.capacity > KEEP_SLOTS) return;
    this.lines.clear();
    this.byKey.clear();
    spare = { lines: this.lines, byKey: this.byKey, idOfLine: this.idOfLine, blockArrays: this.blockArrays };
  }

  /** Number of distinct canonical forms (ids are below it). */
  get size(): number {
    return this.byKey.size;
  }

  /** The canonical form with this id. */
  key(id: number): string {
    return this.byKey.text(id);
  }

  /**
   * Whether the machine form of this id may contain one of `wanted`'s
   * characters (true whenever the compared form is not the machine form).
   */
  machineFormMayContain(id: number, wanted: number): boolean {
    return !this.same || this.byKey.contains(id, wanted);
  }

  /** The form the machine summary reads for this id (every rule on). */
  machineForm(id: number): string {
    return this.same ? this.byKey.text(id) : (this.machine[id] as string);
  }

  /** Records the machine form of a new id from the loaded line. */
  private added(id: number, before: number): number {
    if (id === before && !this.same) this.machine.push(canonicalLoaded(this.machineRules));
    return id;
  }

  /** Loads line i of `text` into the canonicaliser: straight from its bytes unless it is UTF-8 beyond ASCII. */
  private load(text: ProgramText, i: number): void {
    const latin1 = text.encoding === 'latin1';
    if (!loadLineBytes(text.bytes, text.starts[i] as number, text.ends[i] as number, !latin1)) loadLineString(text.line(i));
  }

  /** The compared blocks of one program; blocks empty once canonicalised are left out when comments or blanks are ignored. */
  blocks(text: ProgramText): ComparedBlocks {
    const n = text.count;
    const p = this.lines.program(text);
    // The first program's lines are nearly all new: room for all of them at
    // once (canonical forms are rarely longer than their bytes). The second
    // shares most of its lines with the first and grows the tables as needed.
    if (this.lines.size === 0) {
      this.lines.reserve(n);
      this.byKey.reserve(n, text.bytes.length);
      if (n > this.idOfLine.length) this.idOfLine = new Int32Array(n);
    }
    const ids = this.blockArray(p, 0, n);
    const lineOf = this.blockArray(p, 1, n);
    let k = 0;
    for (let i = 0; i < n; i++) {
      const seen = this.lines.size;
      const lineId = this.lines.add(p, i);
      let id: number;
      if (lineId < seen) {
        id = this.idOfLine[lineId] as number;
      } else {
        this.load(text, i);
        const length = canonicalInto(this.rules);
        const before = this.byKey.size;
        id = length === 0 && this.dropEmpty ? DROPPED : this.added(this.byKey.add(canonicalUnits(), length), before);
        if (lineId >= this.idOfLine.length) {
          const grown = new Int32Array(this.idOfLine.length * 2);
          grown.set(this.idOfLine);
          this.idOfLine = grown;
        }
        this.idOfLine[lineId] = id;
      }
      if (id === DROPPED) continue;
      // Compared as written, a last line without its line ending differs from one with it, as in diff.
      if (i === n - 1 && !text.finalNewline && !this.rules.ignore.whitespace) {
        const before = this.byKey.size;
        const marked = this.byKey.addString(`${this.key(id)}\u0000`);
        if (marked === before && !this.same) this.load(text, i);
        id = this.added(marked, before);
      }
      ids[k] = id;
      lineOf[k] = i + 1;
      k++;
    }
    return { ids: ids.subarray(0, k), lineOf: lineOf.subarray(0, k) };
  }
}

function sameRules(a: CanonicalRules, b: CanonicalRules): boolean {
  return a.pointSignificant === b.pointSignificant && (Object.keys(a.ignore) as (keyof CanonicalRules['ignore'])[]).every((k) => a.ignore[k] === b.ignore[k]);
}

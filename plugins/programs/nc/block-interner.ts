/**
 * Lines to canonical block ids shared by both programs. A line already seen
 * (the same text anywhere in either program) is not canonicalised again:
 * two versions of a program share nearly all their lines, so about half the
 * canonicalisation is saved, and the diff compares integers.
 */
import { canonicalBlock, type CanonicalRules } from './blocks.js';
import type { ProgramText } from './program-text.js';
import { LineTable } from './line-table.js';
import { StringTable } from './string-table.js';

/** One program's compared blocks: canonical id and original line (1-based) of each. */
export interface ComparedBlocks {
  ids: Int32Array;
  lineOf: Int32Array;
}

const DROPPED = -1;

export class BlockInterner {
  // Each distinct line seen, and per line its canonical id (or DROPPED).
  private readonly lines = new LineTable();
  private idOfLine = new Int32Array(1024);
  private readonly byKey = new StringTable();
  /** Form the machine summary reads (every rule on) per id. */
  readonly machine: string[] = [];
  private readonly dropEmpty: boolean;
  private readonly same: boolean;

  constructor(
    private readonly rules: CanonicalRules,
    private readonly machineRules: CanonicalRules,
  ) {
    this.dropEmpty = rules.ignore.whitespace || rules.ignore.comments;
    this.same = sameRules(rules, machineRules);
  }

  /** Canonical form per id. */
  get keys(): readonly string[] {
    return this.byKey.strings;
  }

  private intern(key: string, line: string): number {
    const before = this.byKey.size;
    const id = this.byKey.add(key);
    if (id === before) this.machine.push(this.same ? key : canonicalBlock(line, this.machineRules));
    return id;
  }

  /** The compared blocks of one program; blocks empty once canonicalised are left out when comments or blanks are ignored. */
  blocks(text: ProgramText): ComparedBlocks {
    const n = text.count;
    const p = this.lines.program(text);
    const ids = new Int32Array(n);
    const lineOf = new Int32Array(n);
    let k = 0;
    for (let i = 0; i < n; i++) {
      const seen = this.lines.size;
      const lineId = this.lines.add(p, i);
      let id: number;
      if (lineId < seen) {
        id = this.idOfLine[lineId] as number;
      } else {
        const line = text.line(i);
        const key = canonicalBlock(line, this.rules);
        id = key === '' && this.dropEmpty ? DROPPED : this.intern(key, line);
        if (lineId >= this.idOfLine.length) {
          const grown = new Int32Array(this.idOfLine.length * 2);
          grown.set(this.idOfLine);
          this.idOfLine = grown;
        }
        this.idOfLine[lineId] = id;
      }
      if (id === DROPPED) continue;
      // Compared as written, a last line without its line ending differs from one with it, as in diff.
      if (i === n - 1 && !text.finalNewline && !this.rules.ignore.whitespace) id = this.intern(`${this.keys[id] as string}\u0000`, text.line(i));
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

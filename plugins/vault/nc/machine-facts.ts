/**
 * What one program tells the machine, read from its blocks in canonical form
 * (every rule on): the feed and spindle speed in effect after a block, the
 * tools it calls with the data each is called with, and per block its M-codes
 * and work offsets. docs/nc-diff.md gives the rules per dialect.
 */
import type { Dialect } from './options.js';
import { letterMask } from './unit-table.js';

/** A programmed value: a number, or the expression written (`#1`, `R5`). */
export type ProgramValue = number | string;

/**
 * A modal value per block, as an index into `values` (-1: none programmed
 * yet): typed, so 100,000 blocks cost no objects; or, when only the blocks
 * around the changes are read, a map from block to index.
 */
export interface ModalValues {
  at: Int32Array | Map<number, number>;
  values: ProgramValue[];
}

/** The modal value in effect after block i (null before it is first programmed, or for i < 0). */
export function modalAt(modal: ModalValues, i: number): ProgramValue | null {
  const k = i >= 0 ? ((modal.at instanceof Map ? modal.at.get(i) : modal.at[i]) ?? -1) : -1;
  return k >= 0 ? (modal.values[k] as ProgramValue) : null;
}

export interface ProgramFacts {
  /** Feed in effect after each block (`readProgramFacts` fills only the blocks the summary reads: in and just before each change). */
  feed: ModalValues;
  /** Spindle speed in effect after each block (likewise). */
  speed: ModalValues;
  /** Each tool called, with the sorted data it was called with (offset numbers, axis, oversizes). */
  tools: Map<string, string[]>;
}

// An address word in canonical form: a letter not inside a name, then a value,
// or `=` and an expression (Siemens `S1=1200`, `F=R1`, `T="DRILL"`).
const WORD = /(?<![A-Z_])([DFHMPST])(?:(\d?)=("[^"]*"|[#A-Z_][A-Z_0-9]*|-?\d*\.?\d+\.?)|(-?\d+\.?\d*|-?\.\d+|#\d+|\[[^\]]*\]))/g;
const TOOL_CALL = /^TOOL CALL ?("[^"]*"|\d+(?:\.\d+)?)? ?([UVWXYZ](?![A-Z]))?/;
const OVERSIZE = /(DL|DR2|DR)([+-]?\d*\.?\d+)/g;

/** A value as a number when it is one, else the text written. */
export function programValue(text: string): ProgramValue {
  const unquoted = text.startsWith('"') ? text.slice(1, -1) : text;
  return /^-?\d*\.?\d*$/.test(unquoted) && /\d/.test(unquoted) ? Number(unquoted) : unquoted;
}

/** The address words of a canonical block, as [letter, spindle index or '', value]. */
export function addressWords(canonical: string): [string, string, string][] {
  const out: [string, string, string][] = [];
  WORD.lastIndex = 0;
  for (let m = WORD.exec(canonical); m !== null; m = WORD.exec(canonical)) out.push([m[1] as string, m[2] ?? '', (m[3] ?? m[4]) as string]);
  return out;
}

type Words = [string, string, string][];
const WORD_LETTERS = letterMask('DFHMPST');
const NONE: Words = [];

/** The address words of each canonical block id, read once per id however often the block occurs. */
export class BlockWords {
  private readonly cache: (Words | undefined)[] = [];
  private readonly toolCalls = new Map<number, string>();

  /**
   * `form(id)`: the canonical form (every rule on) of block id;
   * `mayHave(id, letters)`: false when that form surely has none of `letters`, so it need not be made.
   */
  constructor(
    readonly form: (id: number) => string,
    private readonly mayHave: (id: number, letters: number) => boolean = () => true,
  ) {}

  of(id: number): Words {
    let words = this.cache[id];
    if (words === undefined) {
      // Most blocks are plain moves without any of these letters (T also catches TOOL CALL).
      if (this.mayHave(id, WORD_LETTERS)) {
        const form = this.form(id);
        if (form.startsWith('TOOL CALL')) this.toolCalls.set(id, form);
        words = /[DFHMPST]/.test(form) ? addressWords(form) : NONE;
      } else {
        words = NONE;
      }
      this.cache[id] = words;
    }
    return words;
  }

  /** False when block id surely has none of `letters` (a 128-entry ASCII lookup), so its words need not be read for them. */
  mayContain(id: number, letters: number): boolean {
    return this.mayHave(id, letters);
  }

  /** The form of block id when it is a Heidenhain TOOL CALL (after `of(id)`). */
  toolCall(id: number): string | undefined {
    return this.toolCalls.get(id);
  }
}

const isM6 = ([letter, index, text]: [string, string, string]): boolean => letter === 'M' && index === '' && Number(text) === 6;

const M_LETTER = letterMask('M');
// Tool data comes from T, M6, H and D words (Heidenhain: TOOL CALL, which has a T).
const TOOL_LETTERS = letterMask('DHMT');

/**
 * The tools a program calls, with the sorted data each is called with. Only
 * blocks that may hold a T, M, H or D word are read: the others change
 * nothing here, and most blocks are moves.
 */
export function readProgramTools(ids: Int32Array, words: BlockWords, dialect: Dialect): Map<string, string[]> {
  const n = ids.length;
  const toolData = new Map<string, Set<string>>();
  let usesM6 = false;
  if (dialect !== 'heidenhain') {
    for (let i = 0; i < n && !usesM6; i++) {
      const id = ids[i] as number;
      usesM6 = words.mayContain(id, M_LETTER) && words.of(id).some(isM6);
    }
  }
  let pending: string | null = null;
  let active: string | null = null;
  const note = (tool: string | null, item: string | null): void => {
    if (tool === null) return;
    let set = toolData.get(tool);
    if (!set) toolData.set(tool, (set = new Set()));
    if (item !== null) set.add(item);
  };
  for (let i = 0; i < n; i++) {
    const id = ids[i] as number;
    if (!words.mayContain(id, TOOL_LETTERS)) continue;
    const list = words.of(id);
    if (dialect === 'heidenhain') {
      const c = words.toolCall(id);
      if (c !== undefined) {
        const call = TOOL_CALL.exec(c);
        if (call?.[1] !== undefined) active = String(programValue(call[1]));
        note(active, call?.[2] !== undefined ? `axis ${call[2]}` : null);
        OVERSIZE.lastIndex = 0;
        for (let m = OVERSIZE.exec(c); m !== null; m = OVERSIZE.exec(c)) note(active, `${m[1]}${Number(m[2])}`);
      }
      continue;
    }
    // H and D in the block that names a tool belong to that tool (`T5 D1`, before its M6); elsewhere to the tool in the spindle.
    let owner = active;
    for (const word of list) {
      const [letter, , text] = word;
      if (letter === 'T') {
        pending = String(programValue(text));
        owner = pending;
        if (!usesM6) active = pending;
        note(pending, null);
      } else if (isM6(word)) active = pending;
      else if (letter === 'H' && dialect === 'iso') note(owner, `H${text}`);
      else if (letter === 'D') note(owner, `D${text}`);
    }
  }
  const tools = new Map<string, string[]>();
  for (const [tool, set] of toolData) tools.set(tool, [...set].sort());
  return tools;
}

const ISO_OFFSET = /(?<![A-Z_])G(5[4-9](?:\.1)?|1[1-2]\d|154)(?![\d])/g;
const SIEMENS_OFFSET = /(?<![A-Z_])G(5[4-7]|500|5[0-9][0-9])(?![\d.])/g;

/** The M-codes and work offsets a canonical block names, e.g. `M8`, `G54.1 P3`, `DATUM SHIFT X10`. */
export function blockCodes(canonical: string, words: Words, dialect: Dialect): { mCodes: string[]; workOffsets: string[] } {
  const mCodes: string[] = [];
  const workOffsets: string[] = [];
  if (canonical === '') return { mCodes, workOffsets };
  let p: string | undefined;
  for (const [letter, index, text] of words) {
    if (letter === 'M') mCodes.push(index === '' ? `M${text}` : `M${index}=${text}`);
    if (letter === 'P' && p === undefined) p = text;
  }
  if (dialect === 'heidenhain') {
    const shift = /^CYCL DEF 7\.\d ?([XYZABCUVW])?(-?\d*\.?\d+|#\d+)/.exec(canonical);
    if (shift) workOffsets.push(`DATUM SHIFT ${shift[1] ?? ''}${shift[2]}`);
    const preset = /(?<![A-Z_])Q339=(\d+)/.exec(canonical);
    if (preset) workOffsets.push(`PRESET ${preset[1]}`);
    if (/^PRESET SELECT|^TRANS DATUM/.test(canonical)) workOffsets.push(canonical);
    return { mCodes, workOffsets };
  }
  const offsets = dialect === 'siemens' ? SIEMENS_OFFSET : ISO_OFFSET;
  offsets.lastIndex = 0;
  for (let m = offsets.exec(canonical); m !== null; m = offsets.exec(canonical)) {
    const g = m[1] as string;
    // G54.1 and Haas' G154 pick an extra offset with P (G54.1 alone is P1).
    if (g === '54.1' || g === '154') workOffsets.push(`G${g} P${p ?? '1'}`);
    else workOffsets.push(`G${g}`);
  }
  return { mCodes, workOffsets };
}

/**
 * What the summary reads from one program: its tools over the whole program,
 * and the modal feed and spindle speed only at the blocks it compares (in
 * each change and the block just before it). Reading F and S over all
 * 100,000 blocks of a program cost more than the diff itself; the value in
 * effect at a change is found by scanning back from the change, never past
 * the previous change, so all the scanning together stays within one pass
 * over the block ids, and blocks without the letter are skipped without
 * making their form.
 */
import { programValue, readProgramTools, type BlockWords, type ModalValues, type ProgramFacts } from './machine-facts.js';
import type { ChangeRun } from './machine-summary.js';
import type { Dialect } from './options.js';
import { letterMask } from './unit-table.js';

const F_LETTER = letterMask('F');
const S_LETTER = letterMask('S');

/** Which side of the change runs a program is. */
export type RunSide = 'from' | 'to';

/**
 * The value of the last `letter` word of block i pushed to `values`, as its
 * index; -1 when the block has none.
 */
function valueIn(ids: Int32Array, i: number, words: BlockWords, letter: string, letters: number, values: ModalValues['values']): number {
  const id = ids[i] as number;
  if (!words.mayContain(id, letters)) return -1;
  let text: string | null = null;
  for (const [l, , t] of words.of(id)) if (l === letter) text = t;
  return text === null ? -1 : values.push(programValue(text)) - 1;
}

/**
 * The modal value of `letter` (F or S) after each block in [run start − 1,
 * run end) of every change run; no other block has an entry.
 */
export function modalAround(ids: Int32Array, words: BlockWords, letter: 'F' | 'S', changes: readonly ChangeRun[], side: RunSide): ModalValues {
  const letters = letter === 'F' ? F_LETTER : S_LETTER;
  // A map, not an array per block: only a few blocks are read, and a large fresh array is faulted in page by page.
  const at = new Map<number, number>();
  const modal: ModalValues = { at, values: [] };
  // The state after block `known` is `state` (-1: nothing programmed yet).
  let known = -1;
  let state = -1;
  for (const run of changes) {
    const lo = Math.max(0, (side === 'from' ? run.a0 : run.b0) - 1);
    const hi = (side === 'from' ? run.a1 : run.b1) - 1;
    if (hi < lo) continue;
    let i = known + 1;
    if (lo > i) {
      // The last block before the run that programs the value, if after `known`.
      for (let j = lo - 1; j > known; j--) {
        const v = valueIn(ids, j, words, letter, letters, modal.values);
        if (v >= 0) {
          state = v;
          break;
        }
      }
      i = lo;
    }
    for (; i <= hi; i++) {
      const v = valueIn(ids, i, words, letter, letters, modal.values);
      if (v >= 0) state = v;
      at.set(i, state);
    }
    known = hi;
  }
  return modal;
}

/** The facts the summary reads from one side of the diff. */
export function readProgramFacts(ids: Int32Array, words: BlockWords, dialect: Dialect, changes: readonly ChangeRun[], side: RunSide): ProgramFacts {
  return {
    feed: modalAround(ids, words, 'F', changes, side),
    speed: modalAround(ids, words, 'S', changes, side),
    tools: readProgramTools(ids, words, dialect),
  };
}

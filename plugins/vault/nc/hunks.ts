/**
 * Hunks from the equal runs of a block diff: change runs with `context`
 * unchanged blocks around them, joined when the unchanged stretch between two
 * changes is at most twice the context (as `diff -u` does), and bounded in
 * number and in lines.
 */
import type { ChangeRun } from './machine-summary.js';
import type { ProgramText } from './program-text.js';

export interface HunkLine {
  op: ' ' | '-' | '+';
  /** Line in the `from` program (1-based), for ' ' and '-'. */
  fromLine?: number;
  /** Line in the `to` program (1-based), for ' ' and '+'. */
  toLine?: number;
  /** The line as written in the program (`from` for ' ' and '-', `to` for '+'). */
  text: string;
}

export interface Hunk {
  /** Line of the first `from` block listed; with none listed, the line before the change (0 at the start). */
  fromStart: number;
  /** `from` blocks listed (' ' and '-'). */
  fromCount: number;
  toStart: number;
  toCount: number;
  lines: HunkLine[];
  /** Present when the line limit cut this hunk short; the counts above still describe the whole hunk. */
  cut?: true;
}

/** One program: the original line number (1-based) of each compared block, and its text. */
export interface HunkSide {
  lineOf: Int32Array;
  text: ProgramText;
}

const textOf = (side: HunkSide, i: number): string => side.text.line((side.lineOf[i] as number) - 1);

/** The change runs between the equal runs (flat `[a, b, length]` triples) of two sequences of lengths nA and nB. */
export function changeRuns(runs: readonly number[], nA: number, nB: number): ChangeRun[] {
  const out: ChangeRun[] = [];
  let a = 0;
  let b = 0;
  for (let i = 0; i <= runs.length; i += 3) {
    const ra = i < runs.length ? (runs[i] as number) : nA;
    const rb = i < runs.length ? (runs[i + 1] as number) : nB;
    if (ra > a || rb > b) out.push({ a0: a, a1: ra, b0: b, b1: rb });
    if (i < runs.length) {
      a = ra + (runs[i + 2] as number);
      b = rb + (runs[i + 2] as number);
    }
  }
  return out;
}

export interface HunkList {
  hunks: Hunk[];
  totalHunks: number;
  totalLines: number;
  shownLines: number;
}

/** Groups change runs into hunks with `context` blocks around them, keeping at most maxHunks hunks and maxLines lines. */
export function buildHunks(changes: readonly ChangeRun[], from: HunkSide, to: HunkSide, context: number, maxHunks: number, maxLines: number): HunkList {
  const nA = from.lineOf.length;
  const nB = to.lineOf.length;
  const hunks: Hunk[] = [];
  let totalHunks = 0;
  let totalLines = 0;
  let shownLines = 0;
  let i = 0;
  while (i < changes.length) {
    // Changes i..j-1 form one hunk.
    let j = i + 1;
    while (j < changes.length && (changes[j] as ChangeRun).a0 - (changes[j - 1] as ChangeRun).a1 <= 2 * context) j++;
    const first = changes[i] as ChangeRun;
    const last = changes[j - 1] as ChangeRun;
    const lead = Math.min(context, first.a0);
    const trail = Math.min(context, nA - last.a1, nB - last.b1);
    const a0 = first.a0 - lead;
    const b0 = first.b0 - lead;
    const a1 = last.a1 + trail;
    const b1 = last.b1 + trail;
    // Lines listed: context and removed blocks (all of from's side) plus added ones.
    const size = a1 - a0 + (b1 - b0) - (a1 - a0 - sumRemoved(changes, i, j));
    totalHunks++;
    totalLines += size;
    if (hunks.length < maxHunks && shownLines < maxLines) {
      const hunk: Hunk = {
        fromStart: a1 > a0 ? (from.lineOf[a0] as number) : a0 > 0 ? (from.lineOf[a0 - 1] as number) : 0,
        fromCount: a1 - a0,
        toStart: b1 > b0 ? (to.lineOf[b0] as number) : b0 > 0 ? (to.lineOf[b0 - 1] as number) : 0,
        toCount: b1 - b0,
        lines: [],
      };
      const room = maxLines - shownLines;
      const push = (line: HunkLine): boolean => {
        if (hunk.lines.length >= room) {
          hunk.cut = true;
          return false;
        }
        hunk.lines.push(line);
        return true;
      };
      const same = (ia: number, ib: number): boolean => push({ op: ' ', fromLine: from.lineOf[ia] as number, toLine: to.lineOf[ib] as number, text: textOf(from, ia) });
      let ok = true;
      for (let k = 0; k < lead && ok; k++) ok = same(a0 + k, b0 + k);
      for (let c = i; c < j && ok; c++) {
        const run = changes[c] as ChangeRun;
        for (let x = run.a0; x < run.a1 && ok; x++) ok = push({ op: '-', fromLine: from.lineOf[x] as number, text: textOf(from, x) });
        for (let y = run.b0; y < run.b1 && ok; y++) ok = push({ op: '+', toLine: to.lineOf[y] as number, text: textOf(to, y) });
        const next = c + 1 < j ? (changes[c + 1] as ChangeRun).a0 : run.a1 + trail;
        for (let x = run.a1, y = run.b1; x < next && ok; x++, y++) ok = same(x, y);
      }
      shownLines += hunk.lines.length;
      hunks.push(hunk);
    }
    i = j;
  }
  return { hunks, totalHunks, totalLines, shownLines };
}

function sumRemoved(changes: readonly ChangeRun[], i: number, j: number): number {
  let n = 0;
  for (let c = i; c < j; c++) n += (changes[c] as ChangeRun).a1 - (changes[c] as ChangeRun).a0;
  return n;
}

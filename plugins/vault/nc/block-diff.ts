/**
 * The sequence diff of two programs as arrays of canonical block ids.
 *
 * Common prefix and suffix are trimmed first. A small remaining region
 * (at most SMALL_REGION blocks on both sides together) goes to Myers, which
 * is exact there. A larger one is cut by patience anchors: blocks that occur
 * exactly once on each side, kept in the longest chain that is increasing on
 * both sides; every gap between two anchors is diffed the same way on its
 * own, so Myers only ever sees small gaps. All of it draws on one work
 * budget; a region that cannot be finished within it (or that needs more
 * than MAX_D edits) is reported as replaced as a whole, and the result says
 * how many regions and blocks were treated so.
 */
import { myersRuns, type WorkBudget } from './myers.js';

/** Regions this small (both sides together) go straight to Myers. */
const SMALL_REGION = 2_000;
/** Myers gives up on a region needing more edits than this (its walk-back trace is about MAX_D² integers). */
const MAX_D = 2_000;

/** Equal runs, and what had to be replaced wholesale. */
export interface BlockDiff {
  /** Flat triples `[fromIndex, toIndex, length]` of equal runs, in order, none touching the next. */
  runs: number[];
  /** Regions given up on and replaced as a whole, with their sizes. */
  coarse: { regions: number; fromBlocks: number; toBlocks: number };
}

/** Patience levels deeper than this are not cut further (each costs a pass over its region). */
const MAX_DEPTH = 1_000;

interface DiffState {
  a: Int32Array;
  b: Int32Array;
  budget: WorkBudget;
  coarse: BlockDiff['coarse'];
  runs: number[];
  countA: Int32Array;
  countB: Int32Array;
  posA: Int32Array;
}

/** Diffs `a` against `b`; ids are dense integers below `idCount`. */
export function diffBlocks(a: Int32Array, b: Int32Array, idCount: number, workLimit: number): BlockDiff {
  const state: DiffState = {
    a,
    b,
    budget: { left: workLimit },
    coarse: { regions: 0, fromBlocks: 0, toBlocks: 0 },
    runs: [],
    countA: new Int32Array(idCount),
    countB: new Int32Array(idCount),
    posA: new Int32Array(idCount),
  };
  diffRegion(state, 0, a.length, 0, b.length, 0);
  return { runs: state.runs, coarse: state.coarse };
}

/** Appends an equal run, joining it to the previous one when they touch. */
function equal(runs: number[], a0: number, b0: number, length: number): void {
  if (length <= 0) return;
  const k = runs.length - 3;
  if (k >= 0 && (runs[k] as number) + (runs[k + 2] as number) === a0 && (runs[k + 1] as number) + (runs[k + 2] as number) === b0) runs[k + 2] = (runs[k + 2] as number) + length;
  else runs.push(a0, b0, length);
}

function giveUp(state: DiffState, n: number, m: number): void {
  state.coarse.regions++;
  state.coarse.fromBlocks += n;
  state.coarse.toBlocks += m;
}

/** Myers on the region, or the region given up on when it costs too much. */
function exact(state: DiffState, a0: number, a1: number, b0: number, b1: number): void {
  const found: number[] = [];
  if (!myersRuns(state.a, a0, a1, state.b, b0, b1, MAX_D, state.budget, found)) {
    giveUp(state, a1 - a0, b1 - b0);
    return;
  }
  for (let i = 0; i < found.length; i += 3) equal(state.runs, found[i] as number, found[i + 1] as number, found[i + 2] as number);
}

function diffRegion(state: DiffState, a0: number, a1: number, b0: number, b1: number, depth: number): void {
  const { a, b, budget, runs } = state;
  let prefix = 0;
  while (a0 + prefix < a1 && b0 + prefix < b1 && a[a0 + prefix] === b[b0 + prefix]) prefix++;
  let suffix = 0;
  while (a1 - suffix > a0 + prefix && b1 - suffix > b0 + prefix && a[a1 - suffix - 1] === b[b1 - suffix - 1]) suffix++;
  budget.left -= prefix + suffix;
  equal(runs, a0, b0, prefix);
  const s0 = a0 + prefix;
  const s1 = a1 - suffix;
  const t0 = b0 + prefix;
  const t1 = b1 - suffix;
  const n = s1 - s0;
  const m = t1 - t0;
  if (n > 0 && m > 0) {
    if (budget.left < 0) {
      giveUp(state, n, m);
    } else if (n + m <= SMALL_REGION || depth >= MAX_DEPTH) {
      exact(state, s0, s1, t0, t1);
    } else {
      const anchors = patienceAnchors(state, s0, s1, t0, t1);
      if (anchors.length === 0) {
        exact(state, s0, s1, t0, t1);
      } else {
        let pa = s0;
        let pb = t0;
        for (let i = 0; i < anchors.length; i += 2) {
          const ai = anchors[i] as number;
          const bi = anchors[i + 1] as number;
          if (ai > pa || bi > pb) diffRegion(state, pa, ai, pb, bi, depth + 1);
          equal(runs, ai, bi, 1);
          pa = ai + 1;
          pb = bi + 1;
        }
        if (s1 > pa || t1 > pb) diffRegion(state, pa, s1, pb, t1, depth + 1);
      }
    }
  }
  equal(runs, s1, t1, suffix);
}

/**
 * Blocks unique on both sides of the region, as flat pairs `[aIndex, bIndex]`,
 * reduced to the longest chain increasing on both sides (patience sorting).
 */
function patienceAnchors(state: DiffState, a0: number, a1: number, b0: number, b1: number): Int32Array {
  const { a, b, countA, countB, posA, budget } = state;
  budget.left -= 3 * (a1 - a0 + b1 - b0);
  for (let i = a0; i < a1; i++) {
    const id = a[i] as number;
    countA[id] = (countA[id] as number) + 1;
    posA[id] = i;
  }
  for (let j = b0; j < b1; j++) {
    const id = b[j] as number;
    countB[id] = (countB[id] as number) + 1;
  }
  // Typed arrays throughout: a plain array this long (new Array(n) above ~32,000) is a slow dictionary.
  const candA = new Int32Array(Math.min(a1 - a0, b1 - b0));
  const candB = new Int32Array(candA.length);
  let k = 0;
  for (let j = b0; j < b1; j++) {
    const id = b[j] as number;
    if (countA[id] === 1 && countB[id] === 1) {
      candA[k] = posA[id] as number;
      candB[k] = j;
      k++;
    }
  }
  for (let i = a0; i < a1; i++) countA[a[i] as number] = 0;
  for (let j = b0; j < b1; j++) countB[b[j] as number] = 0;
  // Longest increasing subsequence of candA (candB is increasing already).
  const tails = new Int32Array(k);
  let length = 0;
  const back = new Int32Array(k);
  for (let c = 0; c < k; c++) {
    const x = candA[c] as number;
    let lo = 0;
    let hi = length;
    // Nearly always the chain just grows: try the end first.
    if (length > 0 && (candA[tails[length - 1] as number] as number) < x) lo = length;
    else {
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        if ((candA[tails[mid] as number] as number) < x) lo = mid + 1;
        else hi = mid;
      }
    }
    back[c] = lo > 0 ? (tails[lo - 1] as number) : -1;
    tails[lo] = c;
    if (lo === length) length++;
  }
  budget.left -= k * 4;
  const out = new Int32Array(length * 2);
  let c = length > 0 ? (tails[length - 1] as number) : -1;
  for (let i = length - 1; i >= 0; i--) {
    out[2 * i] = candA[c] as number;
    out[2 * i + 1] = candB[c] as number;
    c = back[c] as number;
  }
  return out;
}

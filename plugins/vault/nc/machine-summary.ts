/**
 * The summary of a diff in machine terms: tools added, removed or called with
 * other data; feed and spindle speed changes with their percentage; work
 * offsets and M-codes added or removed; and the count of blocks changed,
 * added and removed. Semantics in docs/nc-diff.md ("Summary").
 */
import { blockCodes, modalAt, type BlockWords, type ModalValues, type ProgramFacts, type ProgramValue } from './machine-facts.js';
import type { Dialect } from './options.js';

export interface ValueChange {
  /** Line in the `to` program where the new value takes effect (0 when it has no blocks). */
  line: number;
  /** Line in the `from` program where the old value was in effect (0 when none). */
  fromLine: number;
  from: ProgramValue | null;
  to: ProgramValue | null;
  /** (to − from) / from in percent, rounded to 0.1; null unless both are numbers and from ≠ 0. */
  changePercent: number | null;
}

export interface CodeAtLine {
  code: string;
  /** Line of the block in the program it was added to (`to`) or removed from (`from`). */
  line: number;
}

export interface ToolChange {
  tool: string;
  from: string[];
  to: string[];
}

export interface MachineSummary {
  tools: { added: string[]; removed: string[]; changed: ToolChange[] };
  feeds: ValueChange[];
  spindleSpeeds: ValueChange[];
  workOffsets: { added: CodeAtLine[]; removed: CodeAtLine[] };
  mCodes: { added: CodeAtLine[]; removed: CodeAtLine[] };
  blocksChanged: number;
  blocksAdded: number;
  blocksRemoved: number;
}

/** One side of the diff: its compared blocks (canonical ids), their words, its facts, and each block's original line number. */
export interface SummarySide {
  ids: Int32Array;
  words: BlockWords;
  facts: ProgramFacts;
  lineOf: Int32Array;
}

/** A change run: blocks `from[a0..a1)` were replaced by `to[b0..b1)`. */
export interface ChangeRun {
  a0: number;
  a1: number;
  b0: number;
  b1: number;
}

function percent(from: ProgramValue | null, to: ProgramValue | null): number | null {
  if (typeof from !== 'number' || typeof to !== 'number' || from === 0) return null;
  return Math.round(((to - from) / from) * 1000) / 10;
}

/** Modal value changes (feed or speed) over the change runs, compared per changed block pair. */
function valueChanges(changes: readonly ChangeRun[], from: SummarySide, to: SummarySide, modalA: ModalValues, modalB: ModalValues): ValueChange[] {
  const out: ValueChange[] = [];
  const at = modalAt;
  const lineAt = (side: SummarySide, i: number): number => (i >= 0 && i < side.lineOf.length ? (side.lineOf[i] as number) : 0);
  for (const run of changes) {
    let lastA = at(modalA, run.a0 - 1);
    let lastB = at(modalB, run.b0 - 1);
    const compare = (ia: number, ib: number, lineB: number, lineA: number): void => {
      const va = at(modalA, ia);
      const vb = at(modalB, ib);
      if (va !== vb && (va !== lastA || vb !== lastB)) out.push({ line: lineB, fromLine: lineA, from: va, to: vb, changePercent: percent(va, vb) });
      lastA = va;
      lastB = vb;
    };
    const pairs = Math.min(run.a1 - run.a0, run.b1 - run.b0);
    for (let k = 0; k < pairs; k++) compare(run.a0 + k, run.b0 + k, lineAt(to, run.b0 + k), lineAt(from, run.a0 + k));
    // The state the run leaves behind, as the next unchanged block sees it.
    const lineB = run.b1 > run.b0 ? lineAt(to, run.b1 - 1) : lineAt(to, Math.min(run.b1, to.lineOf.length - 1));
    const lineA = run.a1 > run.a0 ? lineAt(from, run.a1 - 1) : lineAt(from, Math.min(run.a1, from.lineOf.length - 1));
    compare(run.a1 - 1, run.b1 - 1, lineB, lineA);
  }
  return out;
}

/** Codes named by the blocks removed and added in each change run, netted per run. */
function codeChanges(changes: readonly ChangeRun[], from: SummarySide, to: SummarySide, dialect: Dialect, pick: 'mCodes' | 'workOffsets'): { added: CodeAtLine[]; removed: CodeAtLine[] } {
  const added: CodeAtLine[] = [];
  const removed: CodeAtLine[] = [];
  const collect = (side: SummarySide, i0: number, i1: number): Map<string, number[]> => {
    const found = new Map<string, number[]>();
    for (let i = i0; i < i1; i++) {
      const id = side.ids[i] as number;
      for (const code of blockCodes(side.words.form(id), side.words.of(id), dialect)[pick]) {
        const lines = found.get(code);
        if (lines) lines.push(side.lineOf[i] as number);
        else found.set(code, [side.lineOf[i] as number]);
      }
    }
    return found;
  };
  for (const run of changes) {
    const gone = collect(from, run.a0, run.a1);
    const come = collect(to, run.b0, run.b1);
    for (const [code, lines] of come) for (const line of lines.slice(gone.get(code)?.length ?? 0)) added.push({ code, line });
    for (const [code, lines] of gone) for (const line of lines.slice(come.get(code)?.length ?? 0)) removed.push({ code, line });
  }
  return { added, removed };
}

/** Tools called only in one program, and tools called in both with different data. */
function toolChanges(from: ProgramFacts, to: ProgramFacts): MachineSummary['tools'] {
  const byName = (a: string, b: string): number => a.localeCompare(b, 'en', { numeric: true });
  const added = [...to.tools.keys()].filter((t) => !from.tools.has(t)).sort(byName);
  const removed = [...from.tools.keys()].filter((t) => !to.tools.has(t)).sort(byName);
  const changed: ToolChange[] = [];
  for (const [tool, data] of to.tools) {
    const before = from.tools.get(tool);
    if (before && before.join('\n') !== data.join('\n')) changed.push({ tool, from: before, to: data });
  }
  changed.sort((x, y) => byName(x.tool, y.tool));
  return { added, removed, changed };
}

/** The machine summary of a diff given its change runs. */
export function summarise(changes: readonly ChangeRun[], from: SummarySide, to: SummarySide, dialect: Dialect): MachineSummary {
  let blocksChanged = 0;
  let blocksAdded = 0;
  let blocksRemoved = 0;
  for (const run of changes) {
    const paired = Math.min(run.a1 - run.a0, run.b1 - run.b0);
    blocksChanged += paired;
    blocksAdded += run.b1 - run.b0 - paired;
    blocksRemoved += run.a1 - run.a0 - paired;
  }
  return {
    tools: toolChanges(from.facts, to.facts),
    feeds: valueChanges(changes, from, to, from.facts.feed, to.facts.feed),
    spindleSpeeds: valueChanges(changes, from, to, from.facts.speed, to.facts.speed),
    workOffsets: codeChanges(changes, from, to, dialect, 'workOffsets'),
    mCodes: codeChanges(changes, from, to, dialect, 'mCodes'),
    blocksChanged,
    blocksAdded,
    blocksRemoved,
  };
}

import { describe, expect, it } from 'vitest';
import { canonicalBlock, machineRules } from '../../../../plugins/vault/nc/blocks.js';
import { diffBlocks } from '../../../../plugins/vault/nc/block-diff.js';
import { diffPrograms, type ProgramDiff } from '../../../../plugins/vault/nc/index.js';
import { editProgram, generateProgram, randomBlock, seeded } from './generated-programs.js';

const ISO = machineRules('iso', false);
const bytes = (lines: string[]): Buffer => Buffer.from(`${lines.join('\n')}\n`);

/** The compared blocks of a program: [line, canonical form] of each line with something left in it. */
function compared(lines: string[]): [number, string][] {
  const out: [number, string][] = [];
  lines.forEach((line, i) => {
    const c = canonicalBlock(line, ISO);
    if (c !== '') out.push([i + 1, c]);
  });
  return out;
}

/** Applies the hunks to from's canonical blocks; returns the result and checks context lines on the way. */
function applyHunks(from: string[], to: string[], d: ProgramDiff): string[] {
  const a = compared(from);
  const indexOfLine = new Map(a.map(([line], k) => [line, k]));
  const out: string[] = [];
  let pos = 0;
  for (const hunk of d.hunks) {
    // A hunk that only adds names the from block it follows (0: the start).
    if (hunk.fromCount === 0) for (; pos < a.length && (a[pos] as [number, string])[0] <= hunk.fromStart; pos++) out.push((a[pos] as [number, string])[1]);
    for (const l of hunk.lines) {
      if (l.op === '+') {
        out.push(canonicalBlock(to[(l.toLine as number) - 1] as string, ISO));
        continue;
      }
      const k = indexOfLine.get(l.fromLine as number) as number;
      expect(k).toBeGreaterThanOrEqual(pos);
      for (; pos < k; pos++) out.push((a[pos] as [number, string])[1]);
      pos = k + 1;
      if (l.op === ' ') {
        expect(canonicalBlock(to[(l.toLine as number) - 1] as string, ISO)).toBe((a[k] as [number, string])[1]);
        out.push((a[k] as [number, string])[1]);
      }
    }
  }
  for (; pos < a.length; pos++) out.push((a[pos] as [number, string])[1]);
  return out;
}

/** Minimum number of removed plus added blocks (n + m − 2·LCS), by dynamic programming. */
function lcsEdits(a: string[], b: string[]): number {
  let prev = new Int32Array(b.length + 1);
  let cur = new Int32Array(b.length + 1);
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) cur[j] = a[i - 1] === b[j - 1] ? (prev[j - 1] as number) + 1 : Math.max(prev[j] as number, cur[j - 1] as number);
    [prev, cur] = [cur, prev];
  }
  return a.length + b.length - 2 * (prev[b.length] as number);
}

const edits = (d: ProgramDiff): number => d.hunks.reduce((n, h) => n + h.lines.filter((l) => l.op !== ' ').length, 0);

/** A small program over a small alphabet of blocks, so that lines repeat often. */
function smallProgram(rnd: () => number, size: number, alphabet: number): string[] {
  return Array.from({ length: size }, (_, i) => (rnd() < 0.1 ? '(NOTE)' : `N${i + 1} G1 X${Math.floor(rnd() * alphabet)}. F${rnd() < 0.2 ? 300 : 500}.`));
}

function randomEdits(rnd: () => number, lines: string[], count: number, alphabet: number): string[] {
  const out = [...lines];
  for (let e = 0; e < count; e++) {
    const at = Math.floor(rnd() * (out.length + 1));
    const r = rnd();
    const block = `G1 X${Math.floor(rnd() * alphabet)}. F500.`;
    if (r < 0.4 && at < out.length) out[at] = block;
    else if (r < 0.7) out.splice(at, 0, block);
    else out.splice(at, 1);
  }
  return out;
}

describe('NC block diff', () => {
  it('applying the hunks to from gives to, block for block (random programs, random edits)', () => {
    const rnd = seeded(42);
    for (let round = 0; round < 150; round++) {
      const alphabet = 2 + Math.floor(rnd() * 20);
      const from = smallProgram(rnd, Math.floor(rnd() * 60), alphabet);
      const to = randomEdits(rnd, from, Math.floor(rnd() * 12), alphabet);
      const d = diffPrograms(bytes(from), bytes(to), { dialect: 'fanuc', context: Math.floor(rnd() * 4) });
      expect(applyHunks(from, to, d)).toEqual(compared(to).map(([, c]) => c));
    }
  });

  it('applying the hunks gives to on generated 3,000-block programs, where anchors cut the regions', () => {
    for (const seed of [1, 2, 3]) {
      const from = generateProgram(3_000, seed, 500);
      const to = editProgram(from, 0.03, seed + 10);
      const d = diffPrograms(bytes(from), bytes(to), { dialect: 'fanuc' });
      expect(d.coarse).toBeUndefined();
      expect(applyHunks(from, to, d)).toEqual(compared(to).map(([, c]) => c));
    }
  });

  it('identical programs give no hunks and count no changed block', () => {
    const rnd = seeded(7);
    for (let round = 0; round < 20; round++) {
      const p = smallProgram(rnd, Math.floor(rnd() * 80), 5);
      const d = diffPrograms(bytes(p), bytes(p));
      expect(d.identical).toBe(true);
      expect(d.hunks).toEqual([]);
      expect(d.summary).toMatchObject({ blocksChanged: 0, blocksAdded: 0, blocksRemoved: 0, feeds: [], spindleSpeeds: [] });
      expect(d.from.sha256).toBe(d.to.sha256);
    }
  });

  it('on small inputs the diff is minimal: no more removed and added blocks than a reference LCS', () => {
    const rnd = seeded(99);
    for (let round = 0; round < 200; round++) {
      const alphabet = 2 + Math.floor(rnd() * 6);
      const from = smallProgram(rnd, Math.floor(rnd() * 40), alphabet);
      const to = randomEdits(rnd, from, Math.floor(rnd() * 15), alphabet);
      const d = diffPrograms(bytes(from), bytes(to), { dialect: 'fanuc' });
      expect(edits(d)).toBe(lcsEdits(compared(from).map(([, c]) => c), compared(to).map(([, c]) => c)));
    }
  });

  it('on generated 3,000-block programs the anchored diff stays within 2% of the LCS minimum', () => {
    const from = generateProgram(3_000, 5, 500);
    const to = editProgram(from, 0.02, 6);
    const d = diffPrograms(bytes(from), bytes(to), { dialect: 'fanuc' });
    const minimum = lcsEdits(compared(from).map(([, c]) => c), compared(to).map(([, c]) => c));
    expect(edits(d)).toBeGreaterThanOrEqual(minimum);
    expect(edits(d)).toBeLessThanOrEqual(Math.ceil(minimum * 1.02));
  });

  it('two unrelated 100,000-block programs: the work limit holds, the rest is replaced as a whole and the result says so', () => {
    const from = generateProgram(100_000, 11);
    const to = generateProgram(100_000, 12);
    const started = Date.now();
    const d = diffPrograms(bytes(from), bytes(to), { dialect: 'fanuc', workLimit: 5_000_000 });
    expect(Date.now() - started).toBeLessThan(15_000);
    expect(d.coarse).toMatchObject({ regions: expect.any(Number) });
    expect(d.coarse?.regions).toBeGreaterThan(0);
    expect(d.coarse?.reason).toMatch(/work limit/);
    expect(d.truncated?.lines?.total).toBeGreaterThan(d.truncated?.lines?.shown ?? Infinity);
  });

  it('a region over the work limit is one removed-and-added region', () => {
    const a = Int32Array.from([1, 2, 3, 4, 5, 6]);
    const b = Int32Array.from([1, 9, 3, 8, 5, 6]);
    expect(diffBlocks(a, b, 10, 1_000_000)).toEqual({ runs: [0, 0, 1, 2, 2, 1, 4, 4, 2], coarse: { regions: 0, fromBlocks: 0, toBlocks: 0 } });
    expect(diffBlocks(a, b, 10, 0)).toEqual({ runs: [0, 0, 1, 4, 4, 2], coarse: { regions: 1, fromBlocks: 3, toBlocks: 3 } });
  });

  it('hunks and lines are bounded, with the totals reported', () => {
    const from = Array.from({ length: 200 }, (_, i) => `G1 X${i}.`);
    const to = from.map((l, i) => (i % 10 === 0 ? `${l} Y1.` : l));
    const d = diffPrograms(bytes(from), bytes(to), { dialect: 'fanuc', context: 1, maxHunks: 5, maxLines: 12 });
    expect(d.truncated?.hunks).toEqual({ shown: 4, total: 20 });
    expect(d.truncated?.lines).toEqual({ shown: 12, total: 20 * 4 - 1 });
    expect(d.hunks.reduce((n, h) => n + h.lines.length, 0)).toBe(12);
    const full = diffPrograms(bytes(from), bytes(to), { dialect: 'fanuc', context: 1 });
    expect(full.truncated).toBeUndefined();
    expect(full.hunks).toHaveLength(20);
  });

  it('line numbers are those of the original files, comments and blank lines included', () => {
    const from = ['%', 'O1 (A)', '', '(COMMENT)', 'N10 G1 X1.', 'N20 G1 X2.', '%'];
    const to = ['%', 'O1 (A)', 'N10 G1 X1.', '(NEW COMMENT)', '', '', 'N20 G1 X3.', '%'];
    const d = diffPrograms(bytes(from), bytes(to), { dialect: 'fanuc', context: 0 });
    expect(d.hunks).toEqual([{ fromStart: 6, fromCount: 1, toStart: 7, toCount: 1, lines: [{ op: '-', fromLine: 6, text: 'N20 G1 X2.' }, { op: '+', toLine: 7, text: 'N20 G1 X3.' }] }]);
    expect(d.from).toMatchObject({ blocks: 5, lines: 7 });
  });

  it('random blocks from the generator canonicalise without throwing and keep their words', () => {
    const rnd = seeded(3);
    for (let i = 0; i < 500; i++) {
      const block = randomBlock(rnd, i);
      const c = canonicalBlock(block, ISO);
      if (!block.startsWith('(')) expect(c).toMatch(/^[GMS]/);
    }
  });
});

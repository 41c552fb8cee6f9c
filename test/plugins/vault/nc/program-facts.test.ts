import { describe, expect, it } from 'vitest';
import { BlockInterner } from '../../../../plugins/vault/nc/block-interner.js';
import { diffBlocks } from '../../../../plugins/vault/nc/block-diff.js';
import { machineRules } from '../../../../plugins/vault/nc/blocks.js';
import { changeRuns } from '../../../../plugins/vault/nc/hunks.js';
import { BlockWords, modalAt } from '../../../../plugins/vault/nc/machine-facts.js';
import { summarise, type ChangeRun } from '../../../../plugins/vault/nc/machine-summary.js';
import type { Dialect } from '../../../../plugins/vault/nc/options.js';
import { readProgramFacts } from '../../../../plugins/vault/nc/program-facts.js';
import { readProgramText } from '../../../../plugins/vault/nc/program-text.js';
import { readProgramFacts as oracleFacts } from './facts-oracle.js';
import { editProgram, generateProgram, seeded } from './generated-programs.js';

/** Adds the words the other dialects' summaries read: Heidenhain TOOL CALLs with oversizes, Siemens spindle-numbered speeds and D edges. */
function dialectLines(lines: string[], dialect: Dialect, seed: number): string[] {
  if (dialect === 'iso') return lines;
  const rnd = seeded(seed);
  return lines.map((line, i) => {
    if (i % 97 !== 50) return line;
    const n = 1 + Math.floor(rnd() * 9);
    return dialect === 'heidenhain' ? `TOOL CALL ${n} Z S${1000 + n * 100} F${100 + n} DL+0.${n} DR-0.0${n}` : `T="TOOL_${n}" D${n} S1=${1000 + n * 100} F=R${n}`;
  });
}

/** Drops F and S from every block but one in `every`, which programs both: the value in effect at a change was then programmed far before it. */
function sparseFeeds(lines: string[], every: number): string[] {
  return lines.map((line, i) => {
    const bare = line.replace(/ [FS]\d+\.?/g, '');
    return i % every === 10 ? `${bare} F${i + 100}. S${i + 1000}` : bare;
  });
}

function compare(fromLines: string[], toLines: string[], dialect: Dialect): { changes: number; read: number } {
  const rules = machineRules(dialect, false);
  const interner = new BlockInterner(rules, rules);
  const from = interner.blocks(readProgramText(Buffer.from(`${fromLines.join('\n')}\n`)));
  const to = interner.blocks(readProgramText(Buffer.from(`${toLines.join('\n')}\n`)));
  const changes: ChangeRun[] = changeRuns(diffBlocks(from.ids, to.ids, interner.size, 30_000_000).runs, from.ids.length, to.ids.length);
  const words = new BlockWords(
    (id) => interner.machineForm(id),
    (id, letters) => interner.machineFormMayContain(id, letters),
  );
  const plainWords = new BlockWords((id) => interner.machineForm(id));
  const fast = { from: readProgramFacts(from.ids, words, dialect, changes, 'from'), to: readProgramFacts(to.ids, words, dialect, changes, 'to') };
  const plain = { from: oracleFacts(from.ids, plainWords, dialect), to: oracleFacts(to.ids, plainWords, dialect) };
  expect(fast.from.tools).toEqual(plain.from.tools);
  expect(fast.to.tools).toEqual(plain.to.tools);
  let read = 0;
  for (const run of changes) {
    for (let i = run.a0 - 1; i < run.a1; i++, read++) {
      expect(modalAt(fast.from.feed, i)).toBe(modalAt(plain.from.feed, i));
      expect(modalAt(fast.from.speed, i)).toBe(modalAt(plain.from.speed, i));
    }
    for (let i = run.b0 - 1; i < run.b1; i++, read++) {
      expect(modalAt(fast.to.feed, i)).toBe(modalAt(plain.to.feed, i));
      expect(modalAt(fast.to.speed, i)).toBe(modalAt(plain.to.speed, i));
    }
  }
  const side = (blocks: typeof from, facts: typeof fast.from) => ({ ids: blocks.ids, words, facts, lineOf: blocks.lineOf });
  expect(summarise(changes, side(from, fast.from), side(to, fast.to), dialect)).toEqual(summarise(changes, side(from, plain.from), side(to, plain.to), dialect));
  return { changes: changes.length, read };
}

describe('machine facts read only around the changes', () => {
  it.each(['iso', 'siemens', 'heidenhain'] as Dialect[])('give the same tools, modal values and summary as the full pass over every block (%s)', (dialect) => {
    for (const [seed, fraction] of [[3, 0.01], [4, 0.05], [5, 0.2]] as const) {
      const from = dialectLines(generateProgram(8_000, seed, 700), dialect, seed);
      const to = editProgram(from, fraction, seed + 10);
      const { changes, read } = compare(from, to, dialect);
      expect(changes).toBeGreaterThan(10);
      expect(read).toBeGreaterThan(changes);
    }
  });

  it('give the same values where the feed in effect was programmed thousands of blocks before the change', () => {
    const from = sparseFeeds(generateProgram(8_000, 9, 4_000), 3_000);
    // Edited blocks program no feed or speed either, so the values in effect stay the ones from far back.
    const kept = new Set(from);
    const to = editProgram(from, 0.01, 19).map((line) => (kept.has(line) ? line : line.replace(/ [FS]\d+\.?/g, '')));
    expect(from.filter((line) => / F\d/.test(line))).toHaveLength(3);
    const { changes } = compare(from, to, 'iso');
    expect(changes).toBeGreaterThan(10);
  });
});

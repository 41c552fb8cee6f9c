import { describe, expect, it } from 'vitest';
import { BlockInterner } from '../../../../plugins/vault/nc/block-interner.js';
import { canonicalBlock, machineRules, type CanonicalRules } from '../../../../plugins/vault/nc/blocks.js';
import type { Dialect, IgnoreRules } from '../../../../plugins/vault/nc/options.js';
import { readProgramText } from '../../../../plugins/vault/nc/program-text.js';
import { canonicalBlock as oracleBlock } from './canonical-oracle.js';
import { editProgram, generateProgram, seeded } from './generated-programs.js';

// Pieces NC lines are made of, with the marks every rule looks at (block skip,
// comments, quotes, signs, points, Heidenhain `*`, Siemens `:`), and text
// beyond ASCII as comments carry it.
const PIECES = [
  'N10', 'n0020', ':100', '/', '/2', '7 ', ' ', '  ', '\t', 'G01', 'g1', 'X3.100', 'x-0.0', 'Z.5', 'Y+10.000', 'F0500', 'S01200', 'R1=+5.0',
  '#1=#2+5', '(ROUGH)', '(open', ')', ';rest', '"Tool 5"', '"a;b', 'MSG(', 'L0100', 'L X+10 R0 FMAX', 'TOOL CALL 15 Z', '* - ROUGHING', 'DEF REAL A',
  'PART01A', 'é', 'Ü', 'ø', '→', '.', '+', '-', '=', '[', ']', ',', '3', '0', 'T="MILL_D10"', 'M6', 'H12', 'D1',
];

function randomLine(rnd: () => number, wide: boolean): string {
  let line = '';
  const parts = 1 + Math.floor(rnd() * 8);
  for (let k = 0; k < parts; k++) {
    const piece = PIECES[Math.floor(rnd() * PIECES.length)] as string;
    if (!wide && piece === '→') continue;
    line += piece;
  }
  return line;
}

const DIALECTS: Dialect[] = ['iso', 'siemens', 'heidenhain'];
const RULE_NAMES: (keyof IgnoreRules)[] = ['blockNumbers', 'comments', 'whitespace', 'case', 'numberFormat'];

function randomRules(rnd: () => number, dialect: Dialect): CanonicalRules {
  const ignore = Object.fromEntries(RULE_NAMES.map((name) => [name, rnd() < 0.7])) as unknown as IgnoreRules;
  return { dialect, ignore, pointSignificant: dialect === 'iso' && rnd() < 0.5 };
}

/** Checks every line of `bytes` through the interner (the byte path) against the string canonicaliser kept as the oracle. */
function expectInternerMatchesOracle(bytes: Buffer, lines: string[], rules: CanonicalRules): number {
  const machine = machineRules(rules.dialect, !rules.pointSignificant);
  const interner = new BlockInterner(rules, machine);
  const text = readProgramText(bytes);
  const { ids, lineOf } = interner.blocks(text);
  const dropEmpty = rules.ignore.whitespace || rules.ignore.comments;
  let k = 0;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] as string;
    const expected = oracleBlock(line, rules);
    if (expected === '' && dropEmpty) continue;
    expect(lineOf[k]).toBe(i + 1);
    expect(interner.key(ids[k] as number)).toBe(expected);
    expect(interner.machineForm(ids[k] as number)).toBe(oracleBlock(line, machine));
    k++;
  }
  expect(k).toBe(ids.length);
  return k;
}

describe('canonical forms read from the stored bytes', () => {
  it('equal the string canonicaliser on the generated programs and their edits, for every dialect', () => {
    const from = generateProgram(6_000, 5, 500);
    const to = editProgram(from, 0.05, 6);
    for (const dialect of DIALECTS) {
      const rules = machineRules(dialect, false);
      const interner = new BlockInterner(rules, rules);
      for (const lines of [from, to]) {
        const { ids, lineOf } = interner.blocks(readProgramText(Buffer.from(`${lines.join('\n')}\n`)));
        expect(ids.length).toBeGreaterThan(5_000);
        for (let k = 0; k < ids.length; k++) expect(interner.key(ids[k] as number)).toBe(oracleBlock(lines[(lineOf[k] as number) - 1] as string, rules));
      }
    }
  });

  it('equal the string canonicaliser on random lines under random rules, in UTF-8 and in latin1', () => {
    const rnd = seeded(77);
    let compared = 0;
    for (let round = 0; round < 60; round++) {
      const dialect = DIALECTS[round % 3] as Dialect;
      const rules = randomRules(rnd, dialect);
      // UTF-8 may carry any character; latin1 only one byte per character (an é alone is not valid UTF-8, so it is read as latin1).
      const wide = round % 2 === 0;
      const lines = Array.from({ length: 200 }, () => randomLine(rnd, wide));
      if (!wide) lines.push('é;');
      const bytes = Buffer.from(`${lines.join('\n')}\n`, wide ? 'utf8' : 'latin1');
      expect(readProgramText(bytes).encoding).toBe(wide ? 'utf-8' : 'latin1');
      compared += expectInternerMatchesOracle(bytes, lines, rules);
      for (const line of lines.slice(0, 50)) expect(canonicalBlock(line, rules)).toBe(oracleBlock(line, rules));
    }
    expect(compared).toBeGreaterThan(5_000);
  });
});

import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { diffPrograms } from '../../../../plugins/vault/nc/index.js';
import { seeded } from './generated-programs.js';

const RULES_OFF = { blockNumbers: false, comments: false, whitespace: false, case: false, numberFormat: false };
const dir = mkdtempSync(join(tmpdir(), 'nc-diff-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** `diff -U context` of the two texts, without its two header lines. */
function systemDiff(from: string, to: string, context: number): string {
  writeFileSync(join(dir, 'a'), from);
  writeFileSync(join(dir, 'b'), to);
  const run = spawnSync('diff', [`-U${context}`, join(dir, 'a'), join(dir, 'b')], { encoding: 'latin1' });
  expect(run.status).not.toBe(2);
  return run.stdout.split('\n').slice(2).join('\n');
}

function ours(from: string, to: string, context: number): string {
  const d = diffPrograms(Buffer.from(from, 'latin1'), Buffer.from(to, 'latin1'), { dialect: 'fanuc', ignore: RULES_OFF, unified: true, context });
  return (d.unified ?? '').split('\n').slice(2).join('\n');
}

/** Random edits of lines; fresh lines come from `fresh`. */
function edit(rnd: () => number, lines: string[], count: number, fresh: () => string): string[] {
  const out = [...lines];
  for (let e = 0; e < count; e++) {
    const at = Math.floor(rnd() * (out.length + 1));
    const r = rnd();
    if (r < 0.4 && at < out.length) out[at] = fresh();
    else if (r < 0.7) out.splice(at, 0, fresh());
    else out.splice(at, 1);
  }
  return out;
}

const text = (lines: string[], finalNewline = true): string => (lines.length === 0 ? '' : `${lines.join('\n')}${finalNewline ? '\n' : ''}`);

describe('NC diff unified text against diff -u (canonicalisation off)', () => {
  it('the same hunks as diff -u on programs whose lines are all distinct', () => {
    const rnd = seeded(5);
    let next = 0;
    const fresh = (): string => `N${++next} G1 X${(rnd() * 100).toFixed(3)}`;
    for (let round = 0; round < 60; round++) {
      const from = Array.from({ length: Math.floor(rnd() * 50) }, fresh);
      const to = edit(rnd, from, Math.floor(rnd() * 10), fresh);
      const context = Math.floor(rnd() * 5);
      const finalNewline = rnd() < 0.85;
      const a = text(from, finalNewline);
      const b = text(to, finalNewline || rnd() < 0.5);
      expect(ours(a, b, context)).toBe(systemDiff(a, b, context));
    }
  });

  it('as many removed and added lines as diff -u where lines repeat (the alignment may differ, the size not)', () => {
    const rnd = seeded(8);
    const pool = ['G0 Z5.', 'G1 Z-1. F150.', 'M8', 'G1 X10. Y10.', 'G1 X20. Y10.', '(NOTE)', ''];
    const pick = (): string => pool[Math.floor(rnd() * pool.length)] as string;
    const count = (u: string, op: string): number => u.split('\n').filter((l) => l.startsWith(op) && !l.startsWith(`${op}${op}${op}`)).length;
    for (let round = 0; round < 60; round++) {
      const from = Array.from({ length: Math.floor(rnd() * 40) }, pick);
      const to = edit(rnd, from, Math.floor(rnd() * 10), pick);
      const [a, b] = [text(from), text(to)];
      const mine = ours(a, b, 3);
      const theirs = systemDiff(a, b, 3);
      expect([count(mine, '-'), count(mine, '+')]).toEqual([count(theirs, '-'), count(theirs, '+')]);
    }
  });

  it('an empty file against a program, and a program against an empty file', () => {
    const p = text(['%', 'O1', 'G1 X1.', '%']);
    expect(ours('', p, 3)).toBe(systemDiff('', p, 3));
    expect(ours(p, '', 3)).toBe(systemDiff(p, '', 3));
  });
});

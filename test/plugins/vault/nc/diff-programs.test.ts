import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../../../core/interfaces/errors.js';
import { diffPrograms } from '../../../../plugins/vault/nc/index.js';
import { editProgram, generateProgram } from './generated-programs.js';
import { LineTable } from '../../../../plugins/vault/nc/line-table.js';
import { readProgramText } from '../../../../plugins/vault/nc/program-text.js';
import { UnitTable } from '../../../../plugins/vault/nc/unit-table.js';
import { tapeProgram } from '../../../fixtures/tape-program.js';

const FANUC = ['%', 'O1001 (PLATE)', 'N10 G21 G90', 'N20 T1 M6', 'N30 G54 G0 X0. Y0. S3000 M3', 'N40 G1 X50. F500.', 'N50 M30', '%'];
const lf = (lines: string[]): Buffer => Buffer.from(`${lines.join('\n')}\n`);

function invalid(options: object): string {
  try {
    diffPrograms(lf(FANUC), lf(FANUC), options);
  } catch (err) {
    expect(err).toBeInstanceOf(GatewayError);
    expect((err as GatewayError).errorName).toBe('INVALID_PARAMETER');
    return (err as GatewayError).message;
  }
  throw new Error('no error');
}

describe('diffPrograms', () => {
  it('CRLF, LF and CR line endings compare equal, and line numbers stay those of each file', () => {
    const crlf = Buffer.from(`${FANUC.join('\r\n')}\r\n`);
    const cr = Buffer.from(FANUC.join('\r'));
    expect(diffPrograms(lf(FANUC), crlf).identical).toBe(true);
    expect(diffPrograms(crlf, cr).identical).toBe(true);
    const changed = Buffer.from(`${FANUC.join('\r\n')}\r\n`.replace('F500.', 'F550.'));
    const d = diffPrograms(cr, changed, { context: 0 });
    expect(d.hunks).toEqual([{ fromStart: 6, fromCount: 1, toStart: 6, toCount: 1, lines: [{ op: '-', fromLine: 6, text: 'N40 G1 X50. F500.' }, { op: '+', toLine: 6, text: 'N40 G1 X50. F550.' }] }]);
  });

  it('reports bytes, blocks, lines and the sha256 of each side; identical means canonically equal', () => {
    const renumbered = lf(FANUC.map((l) => l.replace(/^N(\d+)/, (_m, n: string) => `N${Number(n) + 1}`)));
    const d = diffPrograms(lf(FANUC), renumbered);
    expect(d.identical).toBe(true);
    expect(d.from).toEqual({ blocks: 8, lines: 8, bytes: lf(FANUC).length, sha256: createHash('sha256').update(lf(FANUC)).digest('hex'), encoding: 'utf-8' });
    expect(d.to.sha256).toBe(createHash('sha256').update(renumbered).digest('hex'));
    expect(d.from.sha256).not.toBe(d.to.sha256);
  });

  it('decodes UTF-8 when valid and latin1 otherwise, so comments in either survive', () => {
    const utf8 = Buffer.from('G1 X1. (Schlüssel)\nG1 X2.\n', 'utf8');
    const latin1 = Buffer.from('G1 X1. (Schlüssel)\nG1 X3.\n', 'latin1');
    const d = diffPrograms(utf8, latin1, { ignore: { comments: false }, context: 1 });
    expect([d.from.encoding, d.to.encoding]).toEqual(['utf-8', 'latin1']);
    expect(d.hunks[0]?.lines[0]).toEqual({ op: ' ', fromLine: 1, toLine: 1, text: 'G1 X1. (Schlüssel)' });
  });

  it('a dialect given overrides detection', () => {
    const p = lf(['N10 G1 X10 ; cut', 'N20 M30']);
    expect(diffPrograms(p, p).dialect).toBe('iso');
    expect(diffPrograms(p, p, { dialect: 'siemens' }).dialect).toBe('siemens');
    expect(diffPrograms(p, p, { dialect: 'fanuc' }).dialect).toBe('iso');
  });

  it('each ignore rule can be switched off', () => {
    const a = lf(['N10 G01 X3.100 (A)']);
    const b = lf(['n20 g1  x3.1 (B)']);
    expect(diffPrograms(a, b).identical).toBe(true);
    for (const rule of ['blockNumbers', 'comments', 'whitespace', 'case', 'numberFormat']) {
      expect(diffPrograms(a, b, { ignore: { [rule]: false } }).identical, rule).toBe(false);
    }
  });

  it('the unified text is offered on request, with the NC-aware hunks', () => {
    const to = lf(FANUC.map((l) => l.replace('F500.', 'F600.')));
    expect(diffPrograms(lf(FANUC), to).unified).toBeUndefined();
    const u = diffPrograms(lf(FANUC), to, { unified: true, context: 1 }).unified;
    expect(u).toBe('--- from\n+++ to\n@@ -5,3 +5,3 @@\n N30 G54 G0 X0. Y0. S3000 M3\n-N40 G1 X50. F500.\n+N40 G1 X50. F600.\n N50 M30\n');
  });

  it('the summary lists are bounded, with their totals reported', () => {
    const from = Array.from({ length: 50 }, (_, i) => `G1 X${i}. F${100 + i}.`);
    const to = from.map((l) => l.replace(/F(\d+)/, (_m, f: string) => `F${Number(f) * 2}`));
    const d = diffPrograms(lf(from), lf(to), { maxSummaryItems: 10 });
    expect(d.summary.feeds).toHaveLength(10);
    expect(d.truncated?.summary).toEqual({ feeds: { shown: 10, total: 50 } });
    expect(d.summary.feeds[0]).toEqual({ line: 1, fromLine: 1, from: 100, to: 200, changePercent: 100 });
  });

  it.each([
    [{ dialect: 'mazak' }, /dialect must be one of auto, iso, fanuc, siemens, heidenhain/],
    [{ ignore: { comment: true } }, /ignore\.comment is not a rule; the rules are blockNumbers, comments, whitespace, case, numberFormat/],
    [{ ignore: { case: 'yes' } }, /ignore\.case must be true or false/],
    [{ context: -1 }, /context must be an integer from 0 to 1000/],
    [{ maxHunks: 0 }, /maxHunks must be an integer from 1/],
    [{ unified: 1 }, /unified must be true or false/],
  ])('a bad option %j is INVALID_PARAMETER naming the field and the accepted values', (options, message) => {
    expect(invalid(options)).toMatch(message);
  });

  it('a diff gives the same result whatever diffs ran before it (the tables kept for reuse carry nothing over)', () => {
    const a = generateProgram(3_000, 21, 400);
    const b = editProgram(a, 0.05, 22);
    const first = diffPrograms(lf(a), lf(b), { unified: true });
    expect(first.hunks.length).toBeGreaterThan(10);
    // Other programs in between, one with lines equal to a's under other ids, one under other rules and a dialect.
    const c = generateProgram(5_000, 23, 300);
    diffPrograms(lf(c), lf(editProgram(c, 0.1, 24)), { unified: true });
    diffPrograms(lf(b), lf(a), { dialect: 'siemens', ignore: { case: false, comments: false } });
    expect(() => diffPrograms(lf(a), lf(b), { context: -1 })).toThrow(GatewayError);
    expect(diffPrograms(lf(a), lf(b), { unified: true })).toEqual(first);
  });

  it('empty programs diff to nothing', () => {
    const d = diffPrograms(Buffer.alloc(0), Buffer.alloc(0), { unified: true });
    expect(d).toMatchObject({ identical: true, hunks: [], unified: '', from: { blocks: 0, lines: 0, bytes: 0 } });
  });
});

describe('UnitTable', () => {
  it('gives each distinct form one id, the empty one included, across growth, and gives the form back', () => {
    const table = new UnitTable();
    const words = ['', 'G1', 'g1', 'MSG("Schlüssel ✓")', ...Array.from({ length: 5_000 }, (_, i) => `X${i}`)];
    const ids = words.map((w) => table.addString(w));
    expect(ids).toEqual(words.map((_, i) => i));
    expect(words.map((w) => table.addString(w))).toEqual(ids);
    expect(ids.map((id) => table.text(id))).toEqual(words);
    expect(table.size).toBe(words.length);
  });
});

describe('LineTable', () => {
  it('gives equal lines of either program one id, blank lines included, whatever their line endings', () => {
    const table = new LineTable();
    const a = readProgramText(Buffer.from('\nG1 X1.\r\n\nG1 X1.'));
    const b = readProgramText(Buffer.from('G1 X1.\r\rG1 X2.\n'));
    const pa = table.program(a);
    const pb = table.program(b);
    expect([0, 1, 2, 3].map((i) => table.add(pa, i))).toEqual([0, 1, 0, 1]);
    expect([0, 1, 2].map((i) => table.add(pb, i))).toEqual([1, 0, 2]);
    expect([a.line(1), b.line(2), a.finalNewline, b.finalNewline]).toEqual(['G1 X1.', 'G1 X2.', false, true]);
  });
});

describe('diffPrograms on Windows-1252 tape programs', () => {
  it('two versions of a Latin-1 CRLF program with tape characters: only the changed blocks, their comments readable, the summary in machine terms, the hashes of the exact bytes', () => {
    const v1 = tapeProgram('O4711');
    const v2 = tapeProgram('O4711', { diameter: 20, feed: 250 });
    expect(diffPrograms(v1, Buffer.from(v1)).identical).toBe(true);
    const d = diffPrograms(v1, v2, { ignore: { comments: false }, context: 0 });
    expect([d.from.encoding, d.to.encoding]).toEqual(['latin1', 'latin1']);
    expect([d.from.sha256, d.to.sha256]).toEqual([v1, v2].map((b) => createHash('sha256').update(b).digest('hex')));
    expect([d.from.bytes, d.from.lines]).toEqual([v1.length, 11]);
    // Line 2 (the title comment), line 3 (the tool comment) and line 8 (the feed) changed; the tape header and trailer did not.
    expect(d.hunks.flatMap((h) => h.lines.map((l) => `${l.op}${l.fromLine ?? l.toLine} ${l.text}`))).toEqual([
      '-2 O4711 (Ø 25 SCHAFTFRÄSER)', '-3 (WERKZEUG T01 \x96 25 MM \x80 12,50)', '+2 O4711 (Ø 20 SCHAFTFRÄSER)', '+3 (WERKZEUG T01 \x96 20 MM \x80 12,50)',
      '-8 G01 Z-2. F300', '+8 G01 Z-2. F250',
    ]);
    expect(d.summary.feeds).toEqual([expect.objectContaining({ from: 300, to: 250, changePercent: -16.7 })]);
    // With comments ignored (the default), only the feed is a change.
    expect(diffPrograms(v1, v2).summary.blocksChanged).toBe(1);
  });
});

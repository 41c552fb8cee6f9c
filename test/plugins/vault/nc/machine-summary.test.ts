import { describe, expect, it } from 'vitest';
import { diffPrograms } from '../../../../plugins/vault/nc/index.js';

const bytes = (lines: string[]): Buffer => Buffer.from(`${lines.join('\n')}\n`);
const diff = (from: string[], to: string[], dialect: 'fanuc' | 'siemens' | 'heidenhain' | 'auto' = 'auto') => diffPrograms(bytes(from), bytes(to), { dialect });

const FANUC = ['%', 'O1001 (PLATE)', 'N10 G21 G90 G17', 'N20 T1 M6', 'N30 G54 G0 X0. Y0. S3000 M3', 'N40 G43 Z50. H1 M8', 'N50 G1 Z-2. F200.', 'N60 G1 X50. F500.', 'N70 G1 Y50.', 'N80 G0 Z50. M9', 'N90 T2 M6', 'N100 G0 X10. Y10. S1500 M3', 'N110 G43 Z50. H2', 'N120 G81 Z-10. R2. F100.', 'N130 G80 M5', 'N140 M30', '%'];

const SIEMENS = ['; PLATE', 'N10 G17 G90 G500', 'N20 T="MILL_D10" D1', 'N30 M6', 'N40 G54 G0 X0 Y0 S3000 M3', 'N50 G1 Z-2 F200', 'N60 G1 X50 F500', 'N70 G1 Y50', 'N80 MSG("ROUGHING DONE")', 'N90 T="DRILL_D5" D1', 'N100 M6', 'N110 S1500 M3', 'N120 CYCLE81(50,0,2,-10)', 'N130 M5', 'N140 M30'];

const HEIDENHAIN = ['0 BEGIN PGM PLATE MM', '1 BLK FORM 0.1 Z X+0 Y+0 Z-20', '2 BLK FORM 0.2 X+100 Y+100 Z+0', '3 TOOL CALL 5 Z S3000 F200', '4 CYCL DEF 7.0 DATUM SHIFT', '5 CYCL DEF 7.1 X+10', '6 L X+0 Y+0 R0 FMAX M3', '7 L Z-2 R0 F200', '8 L X+50 R0 F500', '9 L Y+50', '10 L Z+100 R0 FMAX M5', '11 TOOL CALL 7 Z S1500', '12 L X+10 Y+10 R0 FMAX M3', '13 L Z+100 R0 FMAX M30', '14 END PGM PLATE MM'];

const edit = (lines: string[], index: number, line: string | null): string[] => {
  const out = [...lines];
  if (line === null) out.splice(index, 1);
  else out[index] = line;
  return out;
};
const insert = (lines: string[], index: number, line: string): string[] => [...lines.slice(0, index), line, ...lines.slice(index)];

describe('NC diff machine summary', () => {
  it('detects the dialect of each sample program', () => {
    expect(diff(FANUC, FANUC).dialect).toBe('iso');
    expect(diff(SIEMENS, SIEMENS).dialect).toBe('siemens');
    expect(diff(HEIDENHAIN, HEIDENHAIN).dialect).toBe('heidenhain');
  });

  it('FANUC: a feed change is reported at its line with the percentage, and as the modal value the next blocks run at', () => {
    const d = diff(FANUC, edit(FANUC, 7, 'N60 G1 X50. F650.'));
    expect(d.summary.feeds).toEqual([{ line: 8, fromLine: 8, from: 500, to: 650, changePercent: 30 }]);
    expect(d.summary.blocksChanged).toBe(1);
  });

  it('FANUC: removing an F word makes the earlier feed modal, reported as a change of the feed in effect', () => {
    const d = diff(FANUC, edit(FANUC, 7, 'N60 G1 X50.'));
    expect(d.summary.feeds).toEqual([{ line: 8, fromLine: 8, from: 500, to: 200, changePercent: -60 }]);
  });

  it('FANUC: a spindle speed change with its percentage rounded to 0.1', () => {
    const d = diff(FANUC, edit(FANUC, 4, 'N30 G54 G0 X0. Y0. S3100 M3'));
    expect(d.summary.spindleSpeeds).toEqual([{ line: 5, fromLine: 5, from: 3000, to: 3100, changePercent: 3.3 }]);
    expect(d.summary.feeds).toEqual([]);
  });

  it('FANUC: a tool added and a tool removed', () => {
    const d = diff(FANUC, edit(FANUC, 10, 'N90 T3 M6'));
    expect(d.summary.tools).toEqual({ added: ['3'], removed: ['2'], changed: [] });
  });

  it('FANUC: the same tool with another length offset is a changed tool', () => {
    const d = diff(FANUC, edit(FANUC, 12, 'N110 G43 Z50. H12'));
    expect(d.summary.tools).toEqual({ added: [], removed: [], changed: [{ tool: '2', from: ['H2'], to: ['H12'] }] });
  });

  it('FANUC: work offsets and M-codes added and removed, with their lines', () => {
    const d = diff(FANUC, insert(edit(FANUC, 4, 'N30 G55 G0 X0. Y0. S3000 M3'), 9, 'N75 M9'));
    expect(d.summary.workOffsets).toEqual({ added: [{ code: 'G55', line: 5 }], removed: [{ code: 'G54', line: 5 }] });
    expect(d.summary.mCodes).toEqual({ added: [{ code: 'M9', line: 10 }], removed: [] });
    expect(d.summary.blocksAdded).toBe(1);
  });

  it('FANUC: G54.1 P-numbers are work offsets of their own', () => {
    const d = diff(FANUC, edit(FANUC, 4, 'N30 G54.1 P3 G0 X0. Y0. S3000 M3'));
    expect(d.summary.workOffsets).toEqual({ added: [{ code: 'G54.1 P3', line: 5 }], removed: [{ code: 'G54', line: 5 }] });
  });

  it('FANUC: coolant removed from a block is an M-code removed', () => {
    const d = diff(FANUC, edit(FANUC, 5, 'N40 G43 Z50. H1'));
    expect(d.summary.mCodes).toEqual({ added: [], removed: [{ code: 'M8', line: 6 }] });
  });

  it('Siemens: tool by name, cutting edge D changed, feed and speed, G500 to G54 and M-codes', () => {
    let d = diff(SIEMENS, edit(SIEMENS, 2, 'N20 T="MILL_D10" D2'));
    expect(d.summary.tools.changed).toEqual([{ tool: 'MILL_D10', from: ['D1'], to: ['D2'] }]);
    d = diff(SIEMENS, edit(SIEMENS, 9, 'N90 T="DRILL_D6" D1'));
    expect(d.summary.tools).toEqual({ added: ['DRILL_D6'], removed: ['DRILL_D5'], changed: [] });
    d = diff(SIEMENS, edit(SIEMENS, 5, 'N50 G1 Z-2 F180'));
    expect(d.summary.feeds).toEqual([{ line: 6, fromLine: 6, from: 200, to: 180, changePercent: -10 }]);
    d = diff(SIEMENS, edit(SIEMENS, 11, 'N110 S1800 M4'));
    expect(d.summary.spindleSpeeds).toEqual([{ line: 12, fromLine: 12, from: 1500, to: 1800, changePercent: 20 }]);
    expect(d.summary.mCodes).toEqual({ added: [{ code: 'M4', line: 12 }], removed: [{ code: 'M3', line: 12 }] });
    d = diff(SIEMENS, edit(SIEMENS, 1, 'N10 G17 G90 G505'));
    expect(d.summary.workOffsets).toEqual({ added: [{ code: 'G505', line: 2 }], removed: [{ code: 'G500', line: 2 }] });
  });

  it('Heidenhain: TOOL CALL speed and feed are spindle speed and feed changes, not tool changes', () => {
    const d = diff(HEIDENHAIN, edit(HEIDENHAIN, 3, '3 TOOL CALL 5 Z S3300 F250'));
    expect(d.summary.tools).toEqual({ added: [], removed: [], changed: [] });
    expect(d.summary.spindleSpeeds).toEqual([{ line: 4, fromLine: 4, from: 3000, to: 3300, changePercent: 10 }]);
    expect(d.summary.feeds).toEqual([{ line: 4, fromLine: 4, from: 200, to: 250, changePercent: 25 }]);
  });

  it('Heidenhain: another tool axis or oversize in TOOL CALL is a changed tool; another number is added and removed', () => {
    let d = diff(HEIDENHAIN, edit(HEIDENHAIN, 11, '11 TOOL CALL 7 Z S1500 DR-0.05'));
    expect(d.summary.tools.changed).toEqual([{ tool: '7', from: ['axis Z'], to: ['DR-0.05', 'axis Z'] }]);
    d = diff(HEIDENHAIN, edit(HEIDENHAIN, 11, '11 TOOL CALL 8 Z S1500'));
    expect(d.summary.tools).toEqual({ added: ['8'], removed: ['7'], changed: [] });
  });

  it('Heidenhain: a datum shift changed in CYCL DEF 7 and M-codes', () => {
    const d = diff(HEIDENHAIN, edit(edit(HEIDENHAIN, 5, '5 CYCL DEF 7.1 X+20'), 10, '10 L Z+100 R0 FMAX M9'));
    expect(d.summary.workOffsets).toEqual({ added: [{ code: 'DATUM SHIFT X20', line: 6 }], removed: [{ code: 'DATUM SHIFT X10', line: 6 }] });
    expect(d.summary.mCodes).toEqual({ added: [{ code: 'M9', line: 11 }], removed: [{ code: 'M5', line: 11 }] });
  });

  it('Heidenhain: a preset chosen through cycle 247 is a work offset', () => {
    const from = [...HEIDENHAIN.slice(0, 4), '4 CYCL DEF 247 DATUM SETTING', '5 Q339=+1 ;DATUM NUMBER', ...HEIDENHAIN.slice(6)];
    const d = diff(from, edit(from, 5, '5 Q339=+2 ;DATUM NUMBER'));
    expect(d.summary.workOffsets).toEqual({ added: [{ code: 'PRESET 2', line: 6 }], removed: [{ code: 'PRESET 1', line: 6 }] });
  });

  it('a feed written as an expression is reported without a percentage', () => {
    const d = diff(FANUC, edit(FANUC, 7, 'N60 G1 X50. F#101'));
    expect(d.summary.feeds).toEqual([{ line: 8, fromLine: 8, from: 500, to: '#101', changePercent: null }]);
  });

  it('counts changed, added and removed blocks: a change pairs a removed block with an added one', () => {
    const to = insert(edit(edit(FANUC, 8, 'N70 G1 Y60.'), 13, null), 2, 'N15 G40 G49 G80');
    const s = diff(FANUC, to).summary;
    expect([s.blocksChanged, s.blocksAdded, s.blocksRemoved]).toEqual([1, 1, 1]);
  });

  it('renumbered blocks, reworded comments and respaced words change nothing', () => {
    const to = FANUC.map((l, i) => l.replace(/^N(\d+)/, (_m, n: string) => `N${Number(n) * 10 + i}`).replace('(PLATE)', '(PLATE REV B)').replace(/ /g, '  '));
    const d = diff(FANUC, to);
    expect(d.identical).toBe(true);
    expect(d.hunks).toEqual([]);
    expect(d.summary.blocksChanged + d.summary.blocksAdded + d.summary.blocksRemoved).toBe(0);
  });
});

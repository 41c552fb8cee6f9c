/** The declarative transform: rules on the bytes, every untouched line kept byte for byte. */
import { describe, expect, it } from 'vitest';
import { applyTransform, transformSchema, TransformError, type TemplateValues } from '../../../plugins/assignments/transform.js';
import { tapeProgram, tapeProgramText } from '../../fixtures/tape-program.js';

const values: TemplateValues = { program: 'BRACKET', programNumber: '1234', version: '3', versionId: 'ver_0123456789abcdef', sha256: 'ab'.repeat(32), sha8: 'abababab', date: '2026-11-24', machine: 'M01' };
const t = (input: unknown) => transformSchema.parse(input);
const run = (content: string | Buffer, input: unknown) => {
  const r = applyTransform(Buffer.isBuffer(content) ? content : Buffer.from(content, 'latin1'), t(input), values);
  return { ...r, text: r.content.toString('latin1') };
};

describe('transform', () => {
  it('PV-34 with no rules changes nothing, byte for byte (CRLF, LF, lone CR, Latin-1, no final newline)', () => {
    const odd = Buffer.concat([Buffer.from('%\r\nO1001\nG1 X1\rM30'), Buffer.from([0xe4, 0xff])]);
    const r = applyTransform(odd, t({}), values);
    expect(Buffer.compare(r.content, odd)).toBe(0);
    expect(r.fileName).toBe('BRACKET');
  });

  it('PV-34 renumbers the O line, adds header and footer from templates, keeping the file\'s line ending', () => {
    const r = run('%\r\nO1001 (BRACKET)\r\nG90 G54\r\nM30\r\n%\r\n', { fileName: 'O{programNumber}', programNumber: 42, header: ['(PROGRAM {program} V{version} {sha8})', '(RELEASED {date} FOR {machine})'], footer: ['(END {versionId})'] });
    expect(r.fileName).toBe('O0042');
    expect(r.text).toBe('%\r\nO0042 (BRACKET)\r\n(PROGRAM BRACKET V3 abababab)\r\n(RELEASED 2026-11-24 FOR M01)\r\nG90 G54\r\nM30\r\n(END ver_0123456789abcdef)\r\n%\r\n');
  });

  it('PV-34 converts line endings and applies literal substitutions in order', () => {
    expect(run('O1\r\nG01 X1\r\nM30\r\n', { lineEnding: 'lf', substitutions: [{ from: 'G01', to: 'G1' }, { from: 'M30', to: 'M2' }] }).text).toBe('O1\nG1 X1\nM2\n');
    expect(run('O1\nM30', { lineEnding: 'crlf' }).text).toBe('O1\r\nM30');
    // A footer on a file without a closing % or final newline: the last line gets one.
    expect(run('O1\nM30', { footer: ['(END)'] }).text).toBe('O1\nM30\n(END)\n');
  });

  it('PV-34 on a Windows-1252 tape program (DC2 %, CRLF, Ø comments, DC4 and NULs) every rule applies and every untouched byte stays as it was', () => {
    const source = tapeProgram('O4711');
    const r = applyTransform(source, t({ programNumber: 4712, header: ['(V{version})'], footer: ['(ENDE)'], substitutions: [{ from: 'G01', to: 'G1' }] }), values);
    const lines = tapeProgramText('O4711').split('\r\n');
    const expected = [lines[0], lines[1]?.replace('O4711', 'O4712'), '(V3)', ...lines.slice(2, 7), lines[7]?.replace('G01', 'G1'), lines[8], '(ENDE)', ...lines.slice(9)].join('\r\n');
    expect(r.content.toString('hex')).toBe(Buffer.from(expected, 'latin1').toString('hex'));
    // Nothing to change: the very bytes, tape trailer included.
    expect(applyTransform(source, t({}), values).content.equals(source)).toBe(true);
    expect(applyTransform(source, t({ lineEnding: 'lf' }), values).content.toString('latin1')).toBe(lines.join('\n'));
  });

  it('PV-34 refuses what cannot apply, naming the rule', () => {
    expect(() => applyTransform(Buffer.from('G1 X1\n'), t({ programNumber: 5 }), values)).toThrow(TransformError);
    expect(() => applyTransform(Buffer.from('O1\n'), t({ fileName: '../{program}' }), values)).toThrow(/not a plain file name/);
    const bad = transformSchema.safeParse({ header: ['({operator})'] });
    expect(bad.success).toBe(false);
    expect(bad.error?.issues[0]?.message).toMatch(/unknown variable\(s\) \{operator\}; accepted: \{program\}/);
    expect(transformSchema.safeParse({ header: ['(\u00e4)'] }).success).toBe(false);
  });

  it('PV-34 puts a value that is not printable ASCII as ?', () => {
    expect(applyTransform(Buffer.from('O1\n'), t({ header: ['({program})'] }), { ...values, program: 'FLANSCH-ä' }).content.toString('latin1')).toBe('O1\n(FLANSCH-?)\n');
  });
});

import { describe, expect, it } from 'vitest';
import { canonicalBlock, machineRules, type CanonicalRules } from '../../../../plugins/vault/nc/blocks.js';
import type { Dialect, IgnoreRules } from '../../../../plugins/vault/nc/options.js';

const ALL_ON: IgnoreRules = { blockNumbers: true, comments: true, whitespace: true, case: true, numberFormat: true };

function rules(dialect: Dialect, off: Partial<Record<keyof IgnoreRules, false>> = {}, pointSignificant = dialect === 'iso'): CanonicalRules {
  return { dialect, ignore: { ...ALL_ON, ...off }, pointSignificant };
}

const same = (dialect: Dialect, a: string, b: string, r = rules(dialect)): boolean => canonicalBlock(a, r) === canonicalBlock(b, r);

// [rule, dialect, a, b]: with every rule on a and b are equal; with `rule` off they differ.
const EQUAL_UNDER_RULE: [keyof IgnoreRules, Dialect, string, string][] = [
  ['blockNumbers', 'iso', 'N10 G1 X10.', 'N2000 G1 X10.'],
  ['blockNumbers', 'iso', '/N10 G1 X10.', '/N20 G1 X10.'],
  ['blockNumbers', 'iso', 'N0010G0Z5.', 'G0Z5.'],
  ['blockNumbers', 'siemens', 'N10 G1 X10 F500', 'N20 G1 X10 F500'],
  ['blockNumbers', 'siemens', ':100 G0 X0', 'G0 X0'],
  ['blockNumbers', 'heidenhain', '7 L X+10 Y-5 R0 FMAX', '8 L X+10 Y-5 R0 FMAX'],
  ['comments', 'iso', 'G1 X10. (ROUGH)', 'G1 X10. (FINISH)'],
  ['comments', 'iso', 'G0 Z5.;retract', 'G0 Z5.'],
  ['comments', 'siemens', 'G1 X10 ; rough', 'G1 X10 ; finish'],
  ['comments', 'heidenhain', '5 L Z+100 R0 FMAX ; retract', '5 L Z+100 R0 FMAX'],
  ['whitespace', 'iso', 'G1 X10. Y5.', 'G1X10.Y5.'],
  ['whitespace', 'iso', 'G1\tX10.  Y5. ', 'G1 X10. Y5.'],
  ['whitespace', 'siemens', 'G1 X10 Y5 F500', 'G1X10Y5F500'],
  ['whitespace', 'heidenhain', '5 TOOL CALL 5  Z S3000', '5 TOOL CALL 5 Z  S3000'],
  ['case', 'iso', 'g1 x10. y5.', 'G1 X10. Y5.'],
  ['case', 'siemens', 'g1 x10 f500', 'G1 X10 F500'],
  ['case', 'heidenhain', '5 l x+10 r0 fmax', '5 L X+10 R0 FMAX'],
  ['numberFormat', 'iso', 'G01 X3.100', 'G1 X3.1'],
  ['numberFormat', 'iso', 'G0 X-0.0 Y.5', 'G0 X0 Y0.5'],
  ['numberFormat', 'iso', 'M03 S01200', 'M3 S1200'],
  ['numberFormat', 'iso', 'G1 X3.0', 'G1 X3.'],
  ['numberFormat', 'iso', '#101=#100+05.50', '#101=#100+5.5'],
  ['numberFormat', 'siemens', 'G01 X3.100 F0500', 'G1 X3.1 F500'],
  ['numberFormat', 'siemens', 'R1=+5.0', 'R1=5'],
  ['numberFormat', 'heidenhain', '5 L X+10.000 Y-5.50 R0 FMAX', '5 L X+10 Y-5.5 R0 FMAX'],
  ['numberFormat', 'heidenhain', '5 L X-0.000 FMAX', '5 L X+0 FMAX'],
];

// [dialect, a, b]: never equal, whatever the rules.
const ALWAYS_DIFFERENT: [Dialect, string, string][] = [
  ['iso', 'G1 X3', 'G1 X3.'], // 3 µm against 3 mm when decimal-point input is off
  ['iso', 'G1 X10.', 'G1 X10.1'],
  ['iso', '/G1 X10.', 'G1 X10.'], // block skip changes what runs
  ['iso', '#1=#2+5', '#1=#25'], // a plus between two operands is not a sign
  ['iso', 'G1 X10.', 'G0 X10.'],
  ['iso', 'O1234', 'O1235'],
  ['siemens', 'L0100', 'L100'], // different subprograms on a Sinumerik
  ['siemens', 'MSG("Tool 5")', 'MSG("TOOL 5")'], // operator messages stay as written
  ['siemens', 'DEF REAL A', 'DEF REALA'],
  ['siemens', 'CALL "PART01A"', 'CALL "PART1A"'],
  ['heidenhain', '5 TOOL CALL 5 Z S3000', '5 TOOL CALL 5 Z S3500'],
  ['heidenhain', '5 L X+10 R0 FMAX', '5 L X-10 R0 FMAX'],
];

describe('NC block canonicalisation', () => {
  it.each(EQUAL_UNDER_RULE)('rule %s (%s): %j equals %j, and differs with the rule off', (rule, dialect, a, b) => {
    expect(canonicalBlock(a, rules(dialect))).toBe(canonicalBlock(b, rules(dialect)));
    expect(same(dialect, a, b, rules(dialect, { [rule]: false }))).toBe(false);
  });

  it.each(ALWAYS_DIFFERENT)('%s: %j never equals %j', (dialect, a, b) => {
    expect(same(dialect, a, b)).toBe(false);
  });

  it('ISO with calculator-type decimal input reads X3 as X3.', () => {
    expect(same('iso', 'G1 X3', 'G1 X3.', rules('iso', {}, false))).toBe(true);
    expect(same('iso', 'G1 X3', 'G1 X3.', machineRules('iso', true))).toBe(true);
    expect(same('iso', 'G1 X3', 'G1 X3.', machineRules('iso', false))).toBe(false);
  });

  it('Siemens and Heidenhain read X3 as X3. (values are always in mm or inch)', () => {
    expect(same('siemens', 'G1 X3', 'G1 X3.')).toBe(true);
    expect(same('heidenhain', '5 L X+3 FMAX', '5 L X+3. FMAX')).toBe(true);
  });

  it.each([
    ['iso', '(TOOL 5 - ENDMILL D10)'],
    ['iso', '   '],
    ['iso', 'N100 (SECTION)'],
    ['siemens', '; ROUGHING'],
    ['siemens', 'N20 ;comment'],
    ['heidenhain', '7 * - ROUGHING'],
    ['heidenhain', '8 ; comment'],
  ] as [Dialect, string][])('%s: %j has nothing left once comments and block numbers go', (dialect, line) => {
    expect(canonicalBlock(line, rules(dialect))).toBe('');
  });

  it('with every rule off a line is compared exactly as written', () => {
    const off = rules('iso', { blockNumbers: false, comments: false, whitespace: false, case: false, numberFormat: false });
    for (const line of ['N10 G01 X3.100 (a)', '  g1 x3', '%', '']) expect(canonicalBlock(line, off)).toBe(line);
  });

  it('ISO ( ) comments are not comments in Siemens or Heidenhain, where parentheses are code', () => {
    expect(same('iso', 'G1 X10. (A)', 'G1 X10. (B)')).toBe(true);
    expect(same('siemens', 'X=R1*(2+3)', 'X=R1*(2+4)')).toBe(false);
  });

  it('a semicolon inside a Siemens string does not start a comment', () => {
    expect(same('siemens', 'MSG("A;B")', 'MSG("A;C")')).toBe(false);
  });

  it('Heidenhain keeps the blank between names and numbers: TOOL CALL 15 is not TOOL CALL 1 5', () => {
    expect(same('heidenhain', '5 TOOL CALL 15 Z', '5 TOOL CALL 1 5 Z')).toBe(false);
  });
});

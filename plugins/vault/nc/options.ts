/**
 * Options of the NC-aware diff, their defaults and their validation. A bad
 * option is the caller's mistake: it answers INVALID_PARAMETER naming the
 * field and the accepted values.
 */
import { GatewayError } from '../../../core/interfaces/errors.js';

/** Dialects the canonicaliser knows. `fanuc` is a synonym of `iso`. */
export const DIALECTS = ['auto', 'iso', 'fanuc', 'siemens', 'heidenhain'] as const;
export type DialectOption = (typeof DIALECTS)[number];
/** The dialect a diff actually used (auto resolved, fanuc folded into iso). */
export type Dialect = 'iso' | 'siemens' | 'heidenhain';

/** Canonicalisation rules; each one on by default. */
export interface IgnoreRules {
  /** Leading block numbers: `N120`, Siemens `:10`, Heidenhain's leading line number. */
  blockNumbers: boolean;
  /** `(...)` (ISO), `;...` (all dialects), Heidenhain `*` structure lines. */
  comments: boolean;
  /** Spaces and tabs that do not separate two names. */
  whitespace: boolean;
  /** Letter case of the code (quoted strings and comments stay as written). */
  case: boolean;
  /** Number spelling: `G01`=`G1`, `X3.100`=`X3.1`, `X-0.0`=`X0`, `.5`=`0.5`, `X+10`=`X10`. */
  numberFormat: boolean;
}

export interface DiffOptions {
  dialect: DialectOption;
  ignore: IgnoreRules;
  /**
   * ISO/FANUC only: the control reads `X3` as 3 mm ("calculator-type" decimal
   * point input, FANUC parameter 3401#0 DPI=1), so `X3` equals `X3.`. Off by
   * default: with DPI=0, `X3` is 3 least increments (0.003 mm).
   */
  calculatorDecimalInput: boolean;
  /** Unchanged blocks shown around each change. */
  context: number;
  /** Also render the hunks as unified diff text. */
  unified: boolean;
  /** At most this many hunks in the answer. */
  maxHunks: number;
  /** At most this many hunk lines in the answer (over all hunks). */
  maxLines: number;
  /** At most this many entries in each summary list. */
  maxSummaryItems: number;
  /**
   * Work units (compared elements) the exact diff may spend before the rest
   * falls back to replacing whole regions. About 10 ns each.
   */
  workLimit: number;
}

export const DEFAULT_OPTIONS: DiffOptions = {
  dialect: 'auto',
  ignore: { blockNumbers: true, comments: true, whitespace: true, case: true, numberFormat: true },
  calculatorDecimalInput: false,
  context: 3,
  unified: false,
  maxHunks: 2_000,
  maxLines: 50_000,
  maxSummaryItems: 1_000,
  workLimit: 30_000_000,
};

/** Caller-supplied options: every field optional, `ignore` per rule. */
export type DiffOptionsInput = Partial<Omit<DiffOptions, 'ignore'>> & { ignore?: Partial<IgnoreRules> };

const IGNORE_KEYS = Object.keys(DEFAULT_OPTIONS.ignore) as (keyof IgnoreRules)[];

function wholeNumber(name: string, value: unknown, min: number, max: number): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw new GatewayError('INVALID_PARAMETER', `${name} must be an integer from ${min} to ${max}.`);
  }
  return value;
}

function flag(name: string, value: unknown): boolean {
  if (typeof value !== 'boolean') throw new GatewayError('INVALID_PARAMETER', `${name} must be true or false.`);
  return value;
}

/** Defaults filled in and every field checked. */
export function resolveOptions(input: DiffOptionsInput = {}): DiffOptions {
  const out: DiffOptions = { ...DEFAULT_OPTIONS, ignore: { ...DEFAULT_OPTIONS.ignore } };
  if (input.dialect !== undefined) {
    if (!(DIALECTS as readonly unknown[]).includes(input.dialect)) {
      throw new GatewayError('INVALID_PARAMETER', `dialect must be one of ${DIALECTS.join(', ')}.`);
    }
    out.dialect = input.dialect;
  }
  if (input.ignore !== undefined) {
    if (typeof input.ignore !== 'object' || input.ignore === null) {
      throw new GatewayError('INVALID_PARAMETER', `ignore must be an object with the fields ${IGNORE_KEYS.join(', ')}.`);
    }
    for (const [key, value] of Object.entries(input.ignore)) {
      if (!(IGNORE_KEYS as string[]).includes(key)) {
        throw new GatewayError('INVALID_PARAMETER', `ignore.${key} is not a rule; the rules are ${IGNORE_KEYS.join(', ')}.`);
      }
      out.ignore[key as keyof IgnoreRules] = flag(`ignore.${key}`, value);
    }
  }
  if (input.calculatorDecimalInput !== undefined) out.calculatorDecimalInput = flag('calculatorDecimalInput', input.calculatorDecimalInput);
  if (input.unified !== undefined) out.unified = flag('unified', input.unified);
  if (input.context !== undefined) out.context = wholeNumber('context', input.context, 0, 1_000);
  if (input.maxHunks !== undefined) out.maxHunks = wholeNumber('maxHunks', input.maxHunks, 1, 1_000_000);
  if (input.maxLines !== undefined) out.maxLines = wholeNumber('maxLines', input.maxLines, 1, 10_000_000);
  if (input.maxSummaryItems !== undefined) out.maxSummaryItems = wholeNumber('maxSummaryItems', input.maxSummaryItems, 1, 1_000_000);
  if (input.workLimit !== undefined) out.workLimit = wholeNumber('workLimit', input.workLimit, 0, 1e12);
  return out;
}

/** Everything the canonicaliser needs to know. */
export interface CanonicalRules {
  dialect: Dialect;
  ignore: IgnoreRules;
  /** `X3` and `X3.` differ (ISO without calculator-type decimal input). */
  pointSignificant: boolean;
}

/** Every rule on, for the given dialect: the form the machine summary reads. */
export function machineRules(dialect: Dialect, calculatorDecimalInput: boolean): CanonicalRules {
  return {
    dialect,
    ignore: { blockNumbers: true, comments: true, whitespace: true, case: true, numberFormat: true },
    pointSignificant: dialect === 'iso' && !calculatorDecimalInput,
  };
}

/**
 * The one place analysis figures are rounded, as they leave the analysis
 * (docs/analysis.md, "Rounding"): durations in seconds to 3 decimals (the
 * millisecond resolution they are computed in), ratios to 4 decimals, counts
 * are integers already. Everything before this works on exact integer
 * milliseconds and unrounded ratios, so rounding never compounds.
 */

/** Decimals of a duration in seconds (a figure whose name ends in `Sec`, and every number inside one). */
export const SECONDS_DECIMALS = 3;
/** Decimals of a ratio between 0 and 1. */
export const RATIO_DECIMALS = 4;
/** The ratio figures. */
export const RATIO_FIGURES: ReadonlySet<string> = new Set(['availability', 'performance', 'quality', 'oee']);

type Unit = 'seconds' | 'ratio' | undefined;

function unitOf(key: string, parent: Unit): Unit {
  if (key.endsWith('Sec')) return 'seconds';
  if (RATIO_FIGURES.has(key)) return 'ratio';
  // Members of a seconds object (stateTimeSec.running, e10TimeSec.productive) are seconds too.
  return parent === 'seconds' ? 'seconds' : undefined;
}

function roundTo(value: number, decimals: number): number {
  const scale = 10 ** decimals;
  return Math.round(value * scale) / scale;
}

function walk(value: unknown, unit: Unit): unknown {
  if (typeof value === 'number') {
    if (unit === 'seconds') return roundTo(value, SECONDS_DECIMALS);
    if (unit === 'ratio') return roundTo(value, RATIO_DECIMALS);
    return value;
  }
  if (Array.isArray(value)) return value.map((v) => walk(v, unit));
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, walk(v, unitOf(k, unit))]));
  }
  return value;
}

/** A copy of `figures` with every duration and ratio rounded as documented. */
export function roundFigures<T>(figures: T): T {
  return walk(figures, undefined) as T;
}

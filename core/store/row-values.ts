/** Column values of a row as a store reads them back, where SQL NULL stays null. */

/** A numeric column (an INTEGER, BIGINT or NUMERIC may come back as a string or a bigint-safe number). */
export function numOrNull(value: unknown): number | null {
  return value === null || value === undefined ? null : Number(value);
}

/** A text column. */
export function strOrNull(value: unknown): string | null {
  return value === null || value === undefined ? null : String(value);
}

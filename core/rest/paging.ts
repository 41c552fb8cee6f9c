/**
 * Cursor paging of `/api/v1` lists. A list takes `limit` (default 100, at
 * most 1000) and `cursor` (opaque, from the previous page's `nextCursor`)
 * and answers `{ items, nextCursor }`; `nextCursor` is null on the last
 * page. A cursor is base64url JSON of where the page ended (e.g. the last
 * item's sort key and id), so pages stay stable while items are added.
 */
import { z } from 'zod';
import { ProblemError } from './problem.js';

export const DEFAULT_PAGE_LIMIT = 100;
export const MAX_PAGE_LIMIT = 1000;
/** A cursor longer than this is not one of ours. */
export const MAX_CURSOR_LENGTH = 512;

/** The query members every list takes; spread into a list's query schema. */
export const pageQueryShape = {
  limit: z.coerce
    .number()
    .int()
    .min(1)
    .max(MAX_PAGE_LIMIT)
    .default(DEFAULT_PAGE_LIMIT)
    .describe(`Items per page, 1..${MAX_PAGE_LIMIT} (default ${DEFAULT_PAGE_LIMIT}).`),
  cursor: z.string().min(1).max(MAX_CURSOR_LENGTH).optional().describe('The nextCursor of the previous page.'),
};

/** The page answer of a list of `item`. */
export function pageOf<T extends z.ZodType>(item: T) {
  return z.object({
    items: z.array(item),
    nextCursor: z.string().nullable().describe('Pass as `cursor` for the next page; null on the last page.'),
  });
}

/** Encodes where a page ended. */
export function encodeCursor(position: Record<string, string | number>): string {
  return Buffer.from(JSON.stringify(position), 'utf8').toString('base64url');
}

/**
 * Decodes a cursor made by encodeCursor; `keys` are the members it must
 * carry with their types. A cursor that is not ours is 400, naming `query.cursor`.
 */
export function decodeCursor<K extends string>(cursor: string, keys: Record<K, 'string' | 'number'>): Record<K, string | number> {
  const refuse = (): never => {
    throw new ProblemError('invalid-request', 'query.cursor: not a cursor this list gave out', {
      errors: [{ field: 'query.cursor', message: 'not a cursor this list gave out', accepted: 'the nextCursor of the previous page' }],
    });
  };
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    return refuse();
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return refuse();
  const out = {} as Record<K, string | number>;
  for (const [key, type] of Object.entries(keys) as [K, 'string' | 'number'][]) {
    const member = (value as Record<string, unknown>)[key];
    if (typeof member !== type) return refuse();
    out[key] = member as string | number;
  }
  return out;
}

/**
 * One page from `rows` read with `limit + 1`: the first `limit`, and the
 * cursor after the last of them when there were more.
 */
export function pageAfter<T>(rows: readonly T[], limit: number, positionOf: (last: T) => Record<string, string | number>): { items: T[]; nextCursor: string | null } {
  const items = rows.slice(0, limit);
  const last = items[items.length - 1];
  return { items, nextCursor: rows.length > limit && last !== undefined ? encodeCursor(positionOf(last)) : null };
}

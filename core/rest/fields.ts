/**
 * Fields the program service's operations share: times as ISO-8601 UTC
 * instants, and names under one rule.
 */
import { z } from 'zod';

/** A time (unix ms) as an ISO-8601 UTC instant with milliseconds. */
export function iso(ms: number): string {
  return new Date(ms).toISOString();
}

/** As `iso`, with null kept for a time that has not happened (not yet decided, never seen). */
export function isoOrNull(ms: number | null): string | null {
  return ms === null ? null : iso(ms);
}

/**
 * The name of a record a person gives (a library, program, gateway, group,
 * service token, adopted program): blanks around it are trimmed, then 1..128
 * characters and no control characters. One rule for every name.
 */
export const nameSchema = z.string().trim().min(1).max(128).regex(/^[^\p{Cc}]+$/u, 'no control characters');

/** Checks on values parsed from JSON (a request body, a wire message, a gateway's answer). */

/** A JSON object: not null, not an array. */
export const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

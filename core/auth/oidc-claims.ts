/**
 * Reading a provider's claims for the consoles' mappings: the values of a
 * claim (a string, or a list of strings, at a name or a dotted path such as
 * Keycloak's `realm_access.roles`), the user name a sign-in gets, and the
 * values a refused user was seen with. Everything read is bounded: a token
 * with thousands of groups, or very long ones, costs a bounded amount and is
 * quoted only in part.
 */

/** At most this many values of one claim are read. */
export const MAX_CLAIM_VALUES = 500;
/** A value longer than this is cut where it is quoted. */
export const MAX_QUOTED_VALUE = 120;

/** The value at a claim name or dotted path. */
function valueAt(claims: Record<string, unknown>, path: string): unknown {
  if (Object.hasOwn(claims, path)) return claims[path];
  let at: unknown = claims;
  for (const key of path.split('.')) {
    if (at === null || typeof at !== 'object' || Array.isArray(at) || !Object.hasOwn(at, key)) return undefined;
    at = (at as Record<string, unknown>)[key];
  }
  return at;
}

/** The string values of a claim: one for a string, the strings of a list (others skipped), none otherwise. */
export function claimValues(claims: Record<string, unknown>, path: string): string[] {
  const value = valueAt(claims, path);
  if (typeof value === 'string') return value === '' ? [] : [value];
  if (!Array.isArray(value)) return [];
  const out: string[] = [];
  for (const item of value.slice(0, MAX_CLAIM_VALUES)) if (typeof item === 'string' && item !== '') out.push(item);
  return out;
}

/** The entries of `mapping` (in its order) whose key is among `values`. */
export function matchingEntries<T>(mapping: Readonly<Record<string, T>>, values: readonly string[]): [string, T][] {
  const have = new Set(values);
  return Object.entries(mapping).filter(([key]) => have.has(key));
}

/** A claim value as a page or a log quotes it. */
export function quotedValue(value: string): string {
  return value.length > MAX_QUOTED_VALUE ? `${value.slice(0, MAX_QUOTED_VALUE)}…` : value;
}

/** What a refused sign-in was seen with: each claim path the mapping reads, with its values (at most `max` each, quoted). */
export function seenValues(claims: Record<string, unknown>, paths: readonly string[], max = 50): { claim: string; values: string[]; more: number }[] {
  return [...new Set(paths)].map((claim) => {
    const values = claimValues(claims, claim);
    return { claim, values: values.slice(0, max).map(quotedValue), more: Math.max(0, values.length - max) };
  });
}

/**
 * The user name a sign-in gets: the `usernameClaim` (then `email`, then
 * `sub`), with the characters a user name may not hold replaced by `_` and
 * cut to 64, so the consoles' own rule for names holds. Two people whose
 * names come out equal are told apart by their subject (the account is kept
 * by issuer and subject, never by name).
 */
export function usernameFrom(claims: Record<string, unknown>, usernameClaim: string): string {
  const candidate = [usernameClaim, 'email', 'sub'].map((c) => valueAt(claims, c)).find((v): v is string => typeof v === 'string' && v.trim() !== '') ?? 'user';
  const cleaned = candidate.trim().replace(/[^A-Za-z0-9_.@-]/g, '_').replace(/^[^A-Za-z0-9]+/, '').slice(0, 64);
  return cleaned === '' ? 'user' : cleaned;
}

/** A claim as a short text (a name, an e-mail), or undefined when absent or not text. */
export function textClaim(claims: Record<string, unknown>, name: string, maxLength = 256): string | undefined {
  const value = claims[name];
  return typeof value === 'string' && value.trim() !== '' ? value.trim().slice(0, maxLength) : undefined;
}

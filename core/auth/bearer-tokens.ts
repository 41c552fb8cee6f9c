/**
 * Bearer tokens of the form `<prefix>_<id>_<secret>`: a 12-hex-digit id that
 * names the stored record and a 256-bit random secret, stored only as a
 * SHA-256 (it is 256 random bits, so a fast hash is enough; passwords, which
 * are not, use scrypt). Each role picks its own prefix (the gateway's secret
 * keys are `gwk`), so a token of one role is never mistaken for another's.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/** A newly created token: `key` is shown once, only `id` and `hash` are stored. */
export interface NewBearerToken {
  id: string;
  /** The whole token, shown once. */
  key: string;
  hash: string;
}

const PREFIX_PATTERN = /^[a-z][a-z0-9]{1,15}$/;

function checkPrefix(prefix: string): void {
  // A prefix with '_' or regex characters would make parsing ambiguous.
  if (!PREFIX_PATTERN.test(prefix)) throw new Error(`bearer token prefix '${prefix}' must match ${PREFIX_PATTERN.source}`);
}

/** Creates a token `<prefix>_<id>_<secret>` with a random id and secret. */
export function createBearerToken(prefix: string): NewBearerToken {
  checkPrefix(prefix);
  const id = randomBytes(6).toString('hex');
  const secret = randomBytes(32).toString('base64url');
  return { id, key: `${prefix}_${id}_${secret}`, hash: hashSecret(secret) };
}

/** Splits `<prefix>_<id>_<secret>`; null when the text is not of that form with exactly this prefix. */
export function parseBearerToken(prefix: string, token: string): { id: string; secret: string } | null {
  checkPrefix(prefix);
  const match = new RegExp(`^${prefix}_([0-9a-f]{12})_([A-Za-z0-9_-]{43})$`).exec(token);
  return match ? { id: match[1] as string, secret: match[2] as string } : null;
}

/** The stored form of a token's secret part. */
export function hashSecret(secret: string): string {
  return createHash('sha256').update(secret).digest('base64');
}

/** True when `secret` hashes to `storedHash`; compares in constant time. */
export function secretMatches(secret: string, storedHash: string): boolean {
  const a = Buffer.from(hashSecret(secret), 'base64');
  const b = Buffer.from(storedHash, 'base64');
  return a.length === b.length && timingSafeEqual(a, b);
}

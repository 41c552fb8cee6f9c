/**
 * JWTs (HS256, pinned) signed with a key generated on first start and kept in
 * the data directory, and secret keys of the form `gwk_<id>_<secret>`, stored
 * only as a SHA-256 of the secret part (it is 256 random bits, so a fast
 * hash is enough; passwords, which are not, use scrypt).
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { jwtVerify, SignJWT } from 'jose';

export const JWT_ALGORITHM = 'HS256';
export const JWT_ISSUER = 'cnc-machine-gateway';
export const JWT_VALIDITY_SEC = 24 * 3600;
const KEY_FILE = 'jwt-signing.key';

/** Loads the signing key from the data dir, creating it (mode 0600) on first start. */
export function loadSigningKey(dataDir: string): Uint8Array {
  const file = join(dataDir, KEY_FILE);
  if (!existsSync(file)) {
    writeFileSync(file, randomBytes(32).toString('base64'), { mode: 0o600 });
    chmodSync(file, 0o600);
  }
  const key = Buffer.from(readFileSync(file, 'utf8').trim(), 'base64');
  if (key.length < 32) throw new Error(`${file}: signing key shorter than 256 bits; delete it to generate a new one`);
  return new Uint8Array(key);
}

export interface JwtClaims {
  /** The `sub` claim: the user name, which change-password reads (GW-31). */
  username: string;
  /** The `aid` claim: the account the token was issued to; a user created again under the same name is another account. */
  accountId: string;
  /** The `tv` claim: the user's token version when the token was issued; a password change invalidates older tokens. */
  tokenVersion: number;
}

export async function signJwt(key: Uint8Array, claims: JwtClaims, nowMs: number): Promise<string> {
  const iat = Math.floor(nowMs / 1000);
  return new SignJWT({ aid: claims.accountId, tv: claims.tokenVersion })
    .setProtectedHeader({ alg: JWT_ALGORITHM, typ: 'JWT' })
    .setSubject(claims.username)
    .setIssuer(JWT_ISSUER)
    .setIssuedAt(iat)
    .setExpirationTime(iat + JWT_VALIDITY_SEC)
    .sign(key);
}

/** Verifies signature, algorithm (HS256 only), issuer and expiry; returns the claims or null. */
export async function verifyJwt(key: Uint8Array, token: string, nowMs: number): Promise<JwtClaims | null> {
  try {
    const { payload } = await jwtVerify(token, key, {
      algorithms: [JWT_ALGORITHM],
      issuer: JWT_ISSUER,
      currentDate: new Date(nowMs),
      requiredClaims: ['sub', 'exp', 'iat'],
    });
    if (typeof payload.sub !== 'string' || typeof payload.aid !== 'string' || typeof payload.tv !== 'number') return null;
    return { username: payload.sub, accountId: payload.aid, tokenVersion: payload.tv };
  } catch {
    return null;
  }
}

/** Shape check only: three base64url segments. */
export function looksLikeJwt(token: string): boolean {
  return /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/.test(token);
}

export const SECRET_KEY_PREFIX = 'gwk';

export interface NewSecretKey {
  id: string;
  /** The whole key, shown once. */
  key: string;
  hash: string;
}

export function createSecretKey(): NewSecretKey {
  const id = randomBytes(6).toString('hex');
  const secret = randomBytes(32).toString('base64url');
  return { id, key: `${SECRET_KEY_PREFIX}_${id}_${secret}`, hash: hashSecret(secret) };
}

/** Splits `gwk_<id>_<secret>`; null when the text is not of that form. */
export function parseSecretKey(token: string): { id: string; secret: string } | null {
  const match = /^gwk_([0-9a-f]{12})_([A-Za-z0-9_-]{43})$/.exec(token);
  return match ? { id: match[1] as string, secret: match[2] as string } : null;
}

export function hashSecret(secret: string): string {
  return createHash('sha256').update(secret).digest('base64');
}

export function secretMatches(secret: string, storedHash: string): boolean {
  const a = Buffer.from(hashSecret(secret), 'base64');
  const b = Buffer.from(storedHash, 'base64');
  return a.length === b.length && timingSafeEqual(a, b);
}

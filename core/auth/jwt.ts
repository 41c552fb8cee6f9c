/**
 * JWTs signed with HMAC-SHA256 only: the algorithm is pinned on both sides, so
 * a token claiming `none` or another algorithm is refused. The signing key is
 * generated on first start and kept (mode 0600) in the role's data directory.
 * What the claims mean is the role's business; this file only signs and checks.
 */
import { join } from 'node:path';
import { jwtVerify, SignJWT, type JWTPayload } from 'jose';
import { loadOrCreateKeyFile } from '../store/key-file.js';

export const JWT_ALGORITHM = 'HS256';
/** The signing key's file in the data directory. */
export const JWT_SIGNING_KEY_FILE = 'jwt-signing.key';
const DEFAULT_KEY_FILE = JWT_SIGNING_KEY_FILE;

/** Loads the signing key from the data dir, creating it (mode 0600) on first start. */
export function loadSigningKey(dataDir: string, fileName: string = DEFAULT_KEY_FILE): Uint8Array {
  const file = join(dataDir, fileName);
  const { key } = loadOrCreateKeyFile(file, 32);
  if (key.length < 32) throw new Error(`${file}: signing key shorter than 256 bits; delete it to generate a new one`);
  return new Uint8Array(key);
}

/** Who issues the token and for how long it is valid. */
export interface JwtIssue {
  issuer: string;
  validitySec: number;
}

/** Signs `claims` for `subject`, issued at `nowMs`, expiring `validitySec` later. */
export async function signJwt(key: Uint8Array, subject: string, claims: JWTPayload, issue: JwtIssue, nowMs: number): Promise<string> {
  const iat = Math.floor(nowMs / 1000);
  return new SignJWT(claims)
    .setProtectedHeader({ alg: JWT_ALGORITHM, typ: 'JWT' })
    .setSubject(subject)
    .setIssuer(issue.issuer)
    .setIssuedAt(iat)
    .setExpirationTime(iat + issue.validitySec)
    .sign(key);
}

/** Verifies signature, algorithm (HS256 only), issuer and expiry at `nowMs`; returns the payload or null. */
export async function verifyJwt(key: Uint8Array, token: string, issuer: string, nowMs: number): Promise<JWTPayload | null> {
  try {
    const { payload } = await jwtVerify(token, key, {
      algorithms: [JWT_ALGORITHM],
      issuer,
      currentDate: new Date(nowMs),
      requiredClaims: ['sub', 'exp', 'iat'],
    });
    return payload;
  } catch {
    return null;
  }
}

/** Shape check only: three base64url segments. */
export function looksLikeJwt(token: string): boolean {
  return /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/.test(token);
}

/**
 * The gateway's tokens: JWTs (HS256, pinned, 24 h) carrying the user name,
 * account and token version, and secret keys of the form `gwk_<id>_<secret>`.
 * The primitives are in core/auth; this file fixes the gateway's issuer,
 * validity, claims and prefix.
 */
import { createBearerToken, parseBearerToken, type NewBearerToken } from '../../core/auth/bearer-tokens.js';
import { signJwt as signAnyJwt, verifyJwt as verifyAnyJwt } from '../../core/auth/jwt.js';

export { JWT_ALGORITHM, loadSigningKey, looksLikeJwt } from '../../core/auth/jwt.js';
export { hashSecret, secretMatches } from '../../core/auth/bearer-tokens.js';

export const JWT_ISSUER = 'cnc-machine-gateway';
export const JWT_VALIDITY_SEC = 24 * 3600;

export interface JwtClaims {
  /** The `sub` claim: the user name, which change-password reads (GW-31). */
  username: string;
  /** The `aid` claim: the account the token was issued to; a user created again under the same name is another account. */
  accountId: string;
  /** The `tv` claim: the user's token version when the token was issued; a password change invalidates older tokens. */
  tokenVersion: number;
  /** The `sid` claim of a token from a sign-in through the provider: its session, which a logout ends (./sso/sessions.ts). */
  sessionId?: string;
}

/** Signs a gateway login token. */
export async function signJwt(key: Uint8Array, claims: JwtClaims, nowMs: number): Promise<string> {
  const extra = claims.sessionId ? { sid: claims.sessionId } : {};
  return signAnyJwt(key, claims.username, { aid: claims.accountId, tv: claims.tokenVersion, ...extra }, { issuer: JWT_ISSUER, validitySec: JWT_VALIDITY_SEC }, nowMs);
}

/** Verifies a gateway login token (signature, HS256 only, issuer, expiry, claim types); returns the claims or null. */
export async function verifyJwt(key: Uint8Array, token: string, nowMs: number): Promise<JwtClaims | null> {
  const payload = await verifyAnyJwt(key, token, JWT_ISSUER, nowMs);
  if (!payload || typeof payload.sub !== 'string' || typeof payload.aid !== 'string' || typeof payload.tv !== 'number') return null;
  if (payload.sid !== undefined && typeof payload.sid !== 'string') return null;
  return { username: payload.sub, accountId: payload.aid, tokenVersion: payload.tv, ...(payload.sid ? { sessionId: payload.sid } : {}) };
}

/** The prefix of the gateway's secret keys. */
export const SECRET_KEY_PREFIX = 'gwk';

export type NewSecretKey = NewBearerToken;

/** A new gateway secret key `gwk_<id>_<secret>`. */
export function createSecretKey(): NewSecretKey {
  return createBearerToken(SECRET_KEY_PREFIX);
}

/** Splits `gwk_<id>_<secret>`; null when the text is not of that form. */
export function parseSecretKey(token: string): { id: string; secret: string } | null {
  return parseBearerToken(SECRET_KEY_PREFIX, token);
}

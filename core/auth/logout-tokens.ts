/**
 * Logout tokens of OpenID Connect Back-Channel Logout 1.0: the provider
 * POSTs one to a console when a person signs out at the provider (or in
 * another console), and the console ends that person's sessions at once.
 * A logout token is accepted only when it is a JWT signed by the provider
 * (its JWKS, asymmetric algorithms only: `AccessTokenVerifier`), with `iss`
 * the provider, `aud` this console's client, `iat` and `exp` present and
 * `exp` in the future, the back-channel logout event in `events`, no
 * `nonce` (which would make it an ID token), a `sid` or a `sub`, and a
 * `jti` not seen before (a replayed token is refused).
 */
import { decodeProtectedHeader } from 'jose';
import { AccessTokenError, AccessTokenVerifier } from './oauth-access-tokens.js';

export const BACKCHANNEL_LOGOUT_EVENT = 'http://schemas.openid.net/event/backchannel-logout';

/** Whose sessions a logout token ends: the provider's session (`sid`), the subject (`sub`), or both. */
export interface LogoutRequest {
  sid?: string;
  sub?: string;
}

/** A refused logout token: a message that quotes nothing of the token. */
export class LogoutTokenError extends Error {
  constructor(message: string, readonly issuerUnavailable = false) {
    super(message);
    this.name = 'LogoutTokenError';
  }
}

/** At most this many token ids are remembered against replays (each until its token expires). */
const MAX_SEEN = 10_000;

const MESSAGES: Partial<Record<AccessTokenError['reason'], string>> = {
  oversized: 'the logout token is too long',
  malformed: 'the logout token is not a well-formed signed JWT',
  algorithm: "the logout token's signing algorithm is not accepted",
  signature: "the logout token's signature does not verify",
  'unknown-key': 'the logout token names a key the provider does not publish',
  issuer: 'the logout token was issued by another provider',
  audience: 'the logout token is meant for another client',
  expired: 'the logout token has expired',
  'not-yet-valid': 'the logout token is not valid yet',
};

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/** Checks the logout tokens of one provider for one client. */
export class LogoutTokenVerifier {
  private readonly tokens: AccessTokenVerifier;
  private readonly seen = new Map<string, number>();

  constructor(issuer: string, clientId: string, private readonly now: () => number = Date.now) {
    this.tokens = new AccessTokenVerifier({ issuer, audience: clientId, now });
  }

  /** Whose sessions the token ends; throws `LogoutTokenError` when it is not acceptable. */
  async verify(token: string): Promise<LogoutRequest> {
    let claims: Record<string, unknown>;
    try {
      claims = await this.tokens.verify(token);
    } catch (err) {
      if (err instanceof AccessTokenError) throw new LogoutTokenError(MESSAGES[err.reason] ?? `the provider's keys cannot be read: ${err.message.slice(0, 200)}`, err.reason === 'issuer-unavailable');
      throw err;
    }
    const typ = decodeProtectedHeader(token).typ;
    if (typ !== undefined && !['logout+jwt', 'jwt'].includes(typ.toLowerCase())) throw new LogoutTokenError('the logout token\'s typ is not logout+jwt');
    if (typeof claims.iat !== 'number') throw new LogoutTokenError('the logout token has no iat');
    if (!isObject(claims.events) || !isObject(claims.events[BACKCHANNEL_LOGOUT_EVENT])) throw new LogoutTokenError(`the logout token's events claim does not hold ${BACKCHANNEL_LOGOUT_EVENT}`);
    if (claims.nonce !== undefined) throw new LogoutTokenError('the logout token has a nonce: it is not a logout token');
    const sid = typeof claims.sid === 'string' && claims.sid !== '' ? claims.sid.slice(0, 256) : undefined;
    const sub = typeof claims.sub === 'string' && claims.sub !== '' ? claims.sub.slice(0, 256) : undefined;
    if (!sid && !sub) throw new LogoutTokenError('the logout token names neither a session (sid) nor a subject (sub)');
    if (typeof claims.jti !== 'string' || claims.jti === '') throw new LogoutTokenError('the logout token has no jti');
    this.remember(claims.jti.slice(0, 256), Number(claims.exp) * 1000);
    return { ...(sid ? { sid } : {}), ...(sub ? { sub } : {}) };
  }

  /** Refuses a token id seen before; forgets the ids of expired tokens, and keeps at most MAX_SEEN. */
  private remember(jti: string, expiresAt: number): void {
    const now = this.now();
    if ((this.seen.get(jti) ?? 0) > now) throw new LogoutTokenError('the logout token was used before (its jti is known)');
    if (this.seen.size >= MAX_SEEN) {
      for (const [id, until] of this.seen) if (until <= now) this.seen.delete(id);
      // Still full of live ids: the oldest go first; a replay of one of them would still meet its token's expiry soon.
      for (const id of this.seen.keys()) {
        if (this.seen.size < MAX_SEEN) break;
        this.seen.delete(id);
      }
    }
    this.seen.set(jti, expiresAt);
  }
}

/**
 * The resource server's side of OAuth 2.1: a bearer access token that an
 * identity provider issued for this resource, as a JWT (RFC 9068), checked
 * against the issuer's keys (its JWKS found by discovery, fetched again when
 * a token names a key it has not seen, so the provider's key rotation needs
 * no restart), with the algorithm pinned to asymmetric ones (never `none`,
 * never an HMAC: a token "signed" with the public key as an HMAC secret is
 * refused), `iss` the issuer, `aud` this resource (RFC 8707), `exp` in the
 * future, and its size bounded before anything is parsed. Every role that
 * accepts such tokens (the MCP endpoints, the program service's API) checks
 * them here; what the claims grant is the role's business.
 */
import { createRemoteJWKSet, customFetch, errors, jwtVerify, type JWTPayload } from 'jose';
import { fetchBoundedJson, IssuerDiscovery, IssuerUnavailableError } from './issuer-metadata.js';

/** Why a token was refused; `issuer-unavailable` is the provider's fault, not the token's. */
export type AccessTokenRefusal =
  | 'malformed'
  | 'oversized'
  | 'algorithm'
  | 'signature'
  | 'unknown-key'
  | 'issuer'
  | 'audience'
  | 'expired'
  | 'not-yet-valid'
  | 'issuer-unavailable';

/** A refused access token: the reason, and a message that quotes nothing of the token. */
export class AccessTokenError extends Error {
  constructor(readonly reason: AccessTokenRefusal, message: string) {
    super(message);
    this.name = 'AccessTokenError';
  }
}

/** The asymmetric algorithms accepted unless a setting narrows them. */
export const DEFAULT_ACCESS_TOKEN_ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA'] as const;
/** Tokens longer than this are refused unread (a token with many groups is a few KiB). */
export const MAX_ACCESS_TOKEN_CHARS = 16 * 1024;

export interface AccessTokenVerifierOptions {
  /** The issuer, exactly as its tokens' `iss` and its metadata's `issuer` say. */
  issuer: string;
  /** This resource's identifier(s); a token's `aud` must contain one. */
  audience: string | string[];
  /** Accepted algorithms, a subset of `DEFAULT_ACCESS_TOKEN_ALGORITHMS`. */
  algorithms?: readonly string[];
  /** Clock skew allowed on `exp`/`nbf`, seconds (default 30). */
  clockToleranceSec?: number;
  /** The current time, unix ms (tests). */
  now?: () => number;
  /** How long after a fetch of the keys a token naming an unknown key does not cause another fetch, ms (default 30 s). */
  jwksCooldownMs?: number;
}

function refusalOf(err: unknown): AccessTokenError {
  if (err instanceof AccessTokenError) return err;
  if (err instanceof IssuerUnavailableError) return new AccessTokenError('issuer-unavailable', err.message);
  if (err instanceof errors.JWTExpired) return new AccessTokenError('expired', 'the access token has expired');
  if (err instanceof errors.JWTClaimValidationFailed) {
    if (err.claim === 'iss') return new AccessTokenError('issuer', 'the access token was issued by another issuer');
    if (err.claim === 'aud') return new AccessTokenError('audience', 'the access token is meant for another resource');
    if (err.claim === 'nbf' || err.claim === 'iat') return new AccessTokenError('not-yet-valid', 'the access token is not valid yet');
    return new AccessTokenError('malformed', `the access token's ${err.claim} claim is not acceptable`);
  }
  if (err instanceof errors.JOSEAlgNotAllowed) return new AccessTokenError('algorithm', "the access token's signing algorithm is not accepted");
  if (err instanceof errors.JWSSignatureVerificationFailed) return new AccessTokenError('signature', "the access token's signature does not verify");
  if (err instanceof errors.JWKSNoMatchingKey) return new AccessTokenError('unknown-key', "the access token names a key the issuer does not publish");
  if (err instanceof errors.JWKSTimeout || err instanceof errors.JWKSInvalid) return new AccessTokenError('issuer-unavailable', "the issuer's keys cannot be read");
  if (err instanceof errors.JOSEError) return new AccessTokenError('malformed', 'the access token is not a well-formed signed JWT');
  // A failed fetch of the JWKS (connection refused, not JSON, too large).
  return new AccessTokenError('issuer-unavailable', `the issuer's keys cannot be read: ${(err as Error).message.slice(0, 200)}`);
}

/** The JWKS fetch jose makes, bounded like discovery. */
const boundedJwksFetch = async (url: string, init: RequestInit): Promise<Response> => {
  const value = await fetchBoundedJson(url, init.signal ?? undefined);
  return new Response(JSON.stringify(value), { headers: { 'content-type': 'application/json' } });
};

/** Checks access tokens of one issuer for one resource. */
export class AccessTokenVerifier {
  private readonly discovery: IssuerDiscovery;
  private jwks: ReturnType<typeof createRemoteJWKSet> | undefined;
  private readonly algorithms: string[];

  constructor(private readonly options: AccessTokenVerifierOptions) {
    this.discovery = new IssuerDiscovery(options.issuer);
    const allowed = new Set<string>(DEFAULT_ACCESS_TOKEN_ALGORITHMS);
    this.algorithms = [...(options.algorithms ?? DEFAULT_ACCESS_TOKEN_ALGORITHMS)];
    const wrong = this.algorithms.filter((a) => !allowed.has(a));
    if (wrong.length > 0 || this.algorithms.length === 0) {
      throw new Error(`access token algorithms: ${wrong.join(', ') || 'none given'} not accepted; accepted: ${[...allowed].join(', ')}`);
    }
  }

  get issuer(): string {
    return this.options.issuer;
  }

  /** The token's claims when it is acceptable; otherwise throws `AccessTokenError`. */
  async verify(token: string): Promise<JWTPayload> {
    if (token.length > MAX_ACCESS_TOKEN_CHARS) throw new AccessTokenError('oversized', `the access token is longer than ${MAX_ACCESS_TOKEN_CHARS} characters`);
    if (!/^[\w-]+\.[\w-]+\.[\w-]*$/.test(token)) throw new AccessTokenError('malformed', 'the access token is not a signed JWT');
    try {
      const jwks = await this.keys();
      const { payload } = await jwtVerify(token, jwks, {
        issuer: this.options.issuer,
        audience: this.options.audience,
        algorithms: this.algorithms,
        clockTolerance: this.options.clockToleranceSec ?? 30,
        requiredClaims: ['exp'],
        ...(this.options.now ? { currentDate: new Date(this.options.now()) } : {}),
      });
      return payload;
    } catch (err) {
      throw refusalOf(err);
    }
  }

  private async keys(): Promise<ReturnType<typeof createRemoteJWKSet>> {
    if (this.jwks) return this.jwks;
    const metadata = await this.discovery.get();
    this.jwks = createRemoteJWKSet(new URL(metadata.jwks_uri), { cooldownDuration: this.options.jwksCooldownMs ?? 30_000, cacheMaxAge: 600_000, [customFetch]: boundedJwksFetch });
    return this.jwks;
  }
}

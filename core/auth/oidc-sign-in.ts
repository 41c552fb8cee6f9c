/**
 * Sign-in of people through an OpenID Connect provider, for every role with
 * a console (the relying party's side; `openid-client` does the protocol):
 * discovery through the bounded `IssuerDiscovery`, the authorization code
 * flow with PKCE (S256), `state` and `nonce`, the ID token checked by
 * openid-client (signature against the provider's JWKS, which it fetches
 * again for a key it has not seen, so a key rotation needs no restart;
 * issuer, audience, expiry, nonce, and `auth_time` against `max_age` when
 * one was asked), and the provider's end-session URL for logout.
 *
 * What a sign-in grants is the role's business: this answers who the
 * provider says signed in, and when. Every request to the provider is
 * bounded in time and size. The client secret goes to the provider's token
 * endpoint only.
 */
import * as client from 'openid-client';
import { IssuerDiscovery, MAX_METADATA_BYTES, type IssuerMetadata } from './issuer-metadata.js';
import { insecureIssuerAllowed, type OidcClientSettings } from './oidc-settings.js';

/** Why a sign-in did not end with an identity. */
export type SignInFailure = 'unreachable' | 'provider-refused' | 'invalid-response';

/** A sign-in that did not end with an identity: the reason, and a message that quotes no token. */
export class SignInError extends Error {
  constructor(readonly reason: SignInFailure, message: string, readonly providerError?: string) {
    super(message);
    this.name = 'SignInError';
  }
}

/** What a sign-in is for: opening a session, or proving again who is at the keyboard (a signature). */
export type SignInPurpose = 'sign-in' | 'reauthenticate';

/** A sign-in under way, kept by the browser until the provider sends it back (core/auth/oidc-routes.ts). */
export interface PendingSignIn {
  state: string;
  nonce: string;
  codeVerifier: string;
  redirectUri: string;
  /** The console path to go back to. */
  returnTo: string;
  purpose: SignInPurpose;
  /** The `max_age` asked for, seconds. */
  maxAgeSec?: number;
  /** Unix ms. */
  startedAt: number;
  /** A re-authentication's console session (its id), kept by the routes (core/auth/oidc-routes.ts). */
  session?: string;
}

/** Who the provider says signed in. */
export interface ProviderIdentity {
  issuer: string;
  subject: string;
  /** The provider's session (`sid`), which a back-channel logout names. */
  sessionId: string | undefined;
  /** When the person last authenticated at the provider (`auth_time`), unix ms; null when the provider did not say. */
  authTime: number | null;
  /** The ID token's claims, completed by the userinfo endpoint when a mapped claim is missing from it. */
  claims: Record<string, unknown>;
}

/** Whether the provider can be used now; the reason (no secret, no token) when not. */
export type ProviderStatus = { reachable: true } | { reachable: false; reason: string };

const REQUEST_TIMEOUT_MS = 5_000;
/** How long a probe's answer (reachable or not) stands before the provider is asked again. */
const STATUS_TTL_MS = 10_000;
/** How long metadata stands without a probe. */
const METADATA_TTL_MS = 10 * 60_000;

/** Every request openid-client makes, bounded like discovery: 5 s, 256 KiB, no redirect. */
const boundedFetch: client.CustomFetch = async (url, options) => {
  const signal = AbortSignal.any([AbortSignal.timeout(REQUEST_TIMEOUT_MS), ...(options.signal ? [options.signal] : [])]);
  const response = await fetch(url, { ...options, redirect: 'error', signal } as RequestInit);
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of response.body ?? []) {
    size += (chunk as Uint8Array).byteLength;
    if (size > MAX_METADATA_BYTES) throw new Error(`${new URL(url).origin} answered more than ${MAX_METADATA_BYTES} bytes`);
    chunks.push(chunk as Uint8Array);
  }
  const body = response.status === 204 || response.status === 304 ? null : Buffer.concat(chunks);
  return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
};

const short = (text: string) => (text.length > 300 ? `${text.slice(0, 300)}…` : text);

/** The relying party of one console: one provider, one client. */
export class OidcSignIn {
  private configuration: { value: client.Configuration; metadata: IssuerMetadata; at: number } | undefined;
  private probe: { at: number; status: Promise<ProviderStatus> } | undefined;

  constructor(readonly settings: OidcClientSettings, private readonly now: () => number = Date.now) {}

  get displayName(): string {
    return this.settings.displayName;
  }

  /** Whether the provider answers its discovery now (asked again at most every 10 s). */
  status(): Promise<ProviderStatus> {
    const at = this.now();
    if (this.probe && at - this.probe.at < STATUS_TTL_MS) return this.probe.status;
    const status = this.discover().then(
      (): ProviderStatus => ({ reachable: true }),
      (err: unknown): ProviderStatus => ({ reachable: false, reason: short((err as Error).message) }),
    );
    this.probe = { at, status };
    return status;
  }

  /** Starts a sign-in: the provider's authorization URL, and what the browser keeps until it comes back. */
  async begin(input: { redirectUri: string; returnTo: string; purpose: SignInPurpose; maxAgeSec?: number }): Promise<{ url: URL; pending: PendingSignIn }> {
    const config = await this.config();
    const codeVerifier = client.randomPKCECodeVerifier();
    const pending: PendingSignIn = {
      state: client.randomState(), nonce: client.randomNonce(), codeVerifier, redirectUri: input.redirectUri, returnTo: input.returnTo,
      purpose: input.purpose, ...(input.maxAgeSec !== undefined ? { maxAgeSec: input.maxAgeSec } : {}), startedAt: this.now(),
    };
    const url = client.buildAuthorizationUrl(config, {
      redirect_uri: input.redirectUri, scope: this.settings.scopes, state: pending.state, nonce: pending.nonce,
      code_challenge: await client.calculatePKCECodeChallenge(codeVerifier), code_challenge_method: 'S256',
      ...(input.maxAgeSec !== undefined ? { max_age: String(input.maxAgeSec) } : {}),
    });
    return { url, pending };
  }

  /**
   * Ends a sign-in: `callbackUrl` is the redirect URI with the provider's
   * answer (code, state, iss). The code is exchanged, the ID token checked,
   * and the userinfo endpoint asked only when a claim in `wanted` is not in
   * the ID token.
   */
  async complete(callbackUrl: URL, pending: PendingSignIn, wanted: readonly string[] = []): Promise<ProviderIdentity> {
    const config = await this.config();
    let tokens: Awaited<ReturnType<typeof client.authorizationCodeGrant>>;
    try {
      tokens = await client.authorizationCodeGrant(config, callbackUrl, {
        pkceCodeVerifier: pending.codeVerifier, expectedState: pending.state, expectedNonce: pending.nonce, idTokenExpected: true,
        ...(pending.maxAgeSec !== undefined ? { maxAge: pending.maxAgeSec } : {}),
      });
    } catch (err) {
      throw this.failure(err);
    }
    const idToken = tokens.claims();
    if (!idToken) throw new SignInError('invalid-response', 'the provider answered without an ID token');
    let claims: Record<string, unknown> = { ...idToken };
    const missing = wanted.some((path) => !Object.hasOwn(claims, path.split('.')[0] ?? path));
    if (missing && config.serverMetadata().userinfo_endpoint && tokens.access_token) {
      try {
        claims = { ...(await client.fetchUserInfo(config, tokens.access_token, idToken.sub)), ...claims };
      } catch (err) {
        throw this.failure(err);
      }
    }
    return {
      issuer: this.settings.issuer,
      subject: idToken.sub,
      sessionId: typeof idToken.sid === 'string' ? idToken.sid : undefined,
      authTime: typeof idToken.auth_time === 'number' ? idToken.auth_time * 1000 : null,
      claims,
    };
  }

  /** The provider's end-session URL that brings the browser back to `postLogoutRedirectUri`; null when the provider has none (or cannot be reached). */
  async endSessionUrl(postLogoutRedirectUri: string): Promise<URL | null> {
    const config = await this.config().catch(() => undefined);
    if (!config?.serverMetadata().end_session_endpoint) return null;
    return client.buildEndSessionUrl(config, { post_logout_redirect_uri: postLogoutRedirectUri });
  }

  /** The provider's metadata as last discovered (discovering it when there is none). */
  async metadata(): Promise<IssuerMetadata> {
    await this.config();
    return (this.configuration as { metadata: IssuerMetadata }).metadata;
  }

  private async config(): Promise<client.Configuration> {
    if (this.configuration && this.now() - this.configuration.at < METADATA_TTL_MS) return this.configuration.value;
    try {
      await this.discover();
    } catch (err) {
      throw new SignInError('unreachable', short((err as Error).message));
    }
    return (this.configuration as { value: client.Configuration }).value;
  }

  /** Discovers the provider afresh; on success the configuration used from now on. */
  private async discover(): Promise<void> {
    // A fresh discovery each time: IssuerDiscovery keeps its first answer for its life, and this one is asked to tell when the provider went away.
    const metadata = await new IssuerDiscovery(this.settings.issuer, 0).get();
    const { clientId, clientSecret } = this.settings;
    const value = new client.Configuration(metadata as client.ServerMetadata, clientId, clientSecret ? { client_secret: clientSecret } : {}, clientSecret ? client.ClientSecretBasic(clientSecret) : client.None());
    value[client.customFetch] = boundedFetch;
    value.timeout = REQUEST_TIMEOUT_MS / 1000;
    if (insecureIssuerAllowed(this.settings.issuer)) client.allowInsecureRequests(value);
    this.configuration = { value, metadata, at: this.now() };
  }

  private failure(err: unknown): SignInError {
    if (err instanceof SignInError) return err;
    if (err instanceof client.AuthorizationResponseError) {
      return new SignInError('provider-refused', `the provider refused the sign-in: ${short(err.error)}${err.error_description ? ` (${short(err.error_description)})` : ''}`, err.error.slice(0, 64));
    }
    if (err instanceof client.ResponseBodyError) return new SignInError('provider-refused', `the provider's token endpoint refused the code: ${short(err.error)}`, err.error.slice(0, 64));
    const cause = (err as { cause?: unknown }).cause;
    if (err instanceof TypeError || (err as Error).name === 'TimeoutError' || (err as Error).name === 'AbortError') {
      return new SignInError('unreachable', `the provider cannot be reached: ${short((err as Error).message)}${cause instanceof Error ? ` (${short(cause.message)})` : ''}`);
    }
    return new SignInError('invalid-response', `the provider's answer was not accepted: ${short((err as Error).message)}`);
  }
}

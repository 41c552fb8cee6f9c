/**
 * An OAuth 2.1 / OpenID Connect issuer's metadata, fetched by discovery
 * (RFC 8414's `/.well-known/oauth-authorization-server`, else OpenID
 * Connect's `/.well-known/openid-configuration`), bounded in time and size,
 * and checked: a JSON object whose `issuer` is the one configured (the
 * mix-up defence of RFC 8414 §3.3) and whose `jwks_uri` is on the issuer's
 * scheme. A failed discovery is remembered for a short while, so a provider
 * that is down is not asked again on every request.
 */

/** What an issuer's metadata says that a resource server and a relying party use. */
export interface IssuerMetadata {
  issuer: string;
  jwks_uri: string;
  authorization_endpoint?: string;
  token_endpoint?: string;
  end_session_endpoint?: string;
  scopes_supported?: string[];
}

/** Why an issuer could not be used. */
export class IssuerUnavailableError extends Error {
  constructor(readonly issuer: string, readonly reason: string) {
    super(`the identity provider ${issuer} cannot be used: ${reason}`);
    this.name = 'IssuerUnavailableError';
  }
}

/** At most this many bytes of a metadata or JWKS document are read. */
export const MAX_METADATA_BYTES = 256 * 1024;
const TIMEOUT_MS = 5_000;

/** GETs `url` as JSON, at most `MAX_METADATA_BYTES` and `TIMEOUT_MS`; answers the parsed value or throws with a short reason. */
export async function fetchBoundedJson(url: string, signal?: AbortSignal): Promise<unknown> {
  const response = await fetch(url, { headers: { accept: 'application/json' }, redirect: 'error', signal: signal ?? AbortSignal.timeout(TIMEOUT_MS) });
  if (!response.ok) {
    await response.body?.cancel();
    throw new Error(`${url} answered HTTP ${response.status}`);
  }
  const declared = Number(response.headers.get('content-length') ?? 0);
  if (declared > MAX_METADATA_BYTES) {
    await response.body?.cancel();
    throw new Error(`${url} is larger than ${MAX_METADATA_BYTES} bytes`);
  }
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of response.body ?? []) {
    size += (chunk as Uint8Array).byteLength;
    if (size > MAX_METADATA_BYTES) throw new Error(`${url} is larger than ${MAX_METADATA_BYTES} bytes`);
    chunks.push(chunk as Uint8Array);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new Error(`${url} is not JSON`);
  }
}

function checkMetadata(issuer: string, value: unknown, url: string): IssuerMetadata {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new Error(`${url} is not a JSON object`);
  const m = value as Record<string, unknown>;
  if (m.issuer !== issuer) throw new Error(`${url} names the issuer ${JSON.stringify(String(m.issuer).slice(0, 200))}, not ${issuer}`);
  if (typeof m.jwks_uri !== 'string') throw new Error(`${url} has no jwks_uri`);
  const jwks = new URL(m.jwks_uri);
  if (jwks.protocol !== new URL(issuer).protocol) throw new Error(`${url}: jwks_uri ${jwks.href} is not on the issuer's scheme`);
  return m as unknown as IssuerMetadata;
}

/** Candidate discovery URLs of `issuer`, in the order they are tried. */
function discoveryUrls(issuer: string): string[] {
  const base = new URL(issuer);
  const path = base.pathname === '/' ? '' : base.pathname.replace(/\/$/, '');
  return [
    `${base.origin}/.well-known/oauth-authorization-server${path}`,
    `${base.origin}${path}/.well-known/openid-configuration`,
  ];
}

/** Discovery of one issuer, its answer kept (and a failure for `retryAfterMs`). */
export class IssuerDiscovery {
  private metadata: Promise<IssuerMetadata> | undefined;
  private failedAt = 0;
  private lastFailure: IssuerUnavailableError | undefined;

  constructor(readonly issuer: string, private readonly retryAfterMs = 10_000) {
    const url = new URL(issuer);
    if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new Error(`issuer ${issuer}: only https (or http for a test set-up) is accepted`);
  }

  /** The issuer's metadata, fetched once; throws `IssuerUnavailableError` while it cannot be had. */
  async get(): Promise<IssuerMetadata> {
    if (this.lastFailure && performance.now() - this.failedAt < this.retryAfterMs) throw this.lastFailure;
    this.metadata ??= this.discover().catch((err: unknown) => {
      this.metadata = undefined;
      this.failedAt = performance.now();
      this.lastFailure = new IssuerUnavailableError(this.issuer, (err as Error).message);
      throw this.lastFailure;
    });
    return this.metadata;
  }

  private async discover(): Promise<IssuerMetadata> {
    const reasons: string[] = [];
    for (const url of discoveryUrls(this.issuer)) {
      try {
        return checkMetadata(this.issuer, await fetchBoundedJson(url), url);
      } catch (err) {
        reasons.push((err as Error).message);
      }
    }
    throw new Error(reasons.join('; '));
  }
}

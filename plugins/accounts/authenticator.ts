/**
 * Who is calling: a service token (`Authorization: Bearer pvs_<id>_<secret>`)
 * or a session cookie, plus the operator a caller declares with
 * `X-On-Behalf-Of`. Unsafe methods authenticated by cookie must pass the
 * CSRF check (Origin, when sent, is this host, and never `null`;
 * X-CSRF-Token matches the session). Failures are 401 with one detail that does not say which part
 * was wrong.
 */
import { parseBearerToken, secretMatches } from '../../core/auth/bearer-tokens.js';
import type { RefusalAudit } from './refusal-audit.js';
import { OPERATOR_HEADER, type RestAuthenticator, type RestPrincipal, type RestRequestInfo } from '../../core/rest/operation.js';
import { ProblemError } from '../../core/rest/problem.js';
import { ROLE_PERMISSIONS, type RoleName } from './roles.js';
import {
  cookieName, CSRF_HEADER, csrfTokenFor, parseCookieValue, readCookie, secretHashMatches, SESSION_ABSOLUTE_MS, SESSION_IDLE_MS, SESSION_TOUCH_MS, tokensEqual,
} from '../../core/auth/sessions.js';
import type { AccountStore, SsoSessionFacts, UserRecord } from './store.js';
import type { ProviderAccessTokens } from './sso/access-tokens.js';
import { looksLikeJwt } from '../../core/auth/jwt.js';

export const TOKEN_PREFIX = 'pvs';
const OPERATOR_PATTERN = /^[\p{L}\p{N}][\p{L}\p{N} ._@'-]{0,127}$/u;
const UNSAFE = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

const unauthenticated = (): ProblemError => new ProblemError('unauthenticated', 'the session or token is not valid (unknown, expired, revoked or signed out); sign in again or use a valid service token');

function header(request: RestRequestInfo, name: string): string | undefined {
  const value = request.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/** The declared operator, or null; 400 naming the header when it is malformed. */
export function operatorOf(request: RestRequestInfo): string | null {
  const value = header(request, OPERATOR_HEADER);
  if (value === undefined) return null;
  const trimmed = value.trim();
  if (!OPERATOR_PATTERN.test(trimmed)) {
    throw new ProblemError('invalid-request', 'header X-On-Behalf-Of: not an operator name', {
      errors: [{ field: 'header.x-on-behalf-of', message: 'not an operator name', accepted: '1..128 letters, digits, spaces and . _ @ \' -, starting with a letter or digit' }],
    });
  }
  return trimmed;
}

export function userPrincipal(user: UserRecord, onBehalfOf: string | null, sessionId?: string, sso?: SsoSessionFacts): RestPrincipal {
  return {
    kind: 'user', id: user.id, name: user.username, role: user.role, permissions: ROLE_PERMISSIONS[user.role], scopes: user.scopes,
    authMethod: 'session', onBehalfOf, requiresOperator: false, ...(sessionId ? { sessionId } : {}), ...(sso ? { identityProvider: { authTime: sso.authTime } } : {}),
  };
}

export class AccountsAuthenticator implements RestAuthenticator {
  constructor(
    private readonly store: AccountStore,
    private readonly refusals: RefusalAudit,
    private readonly now: () => number,
    private readonly secure: boolean,
    /** The identity provider's access tokens, when `programs.oidc.publicUrl` names the audience they must carry. */
    private readonly accessTokens?: ProviderAccessTokens,
  ) {}

  async authenticate(request: RestRequestInfo): Promise<RestPrincipal | null> {
    const onBehalfOf = operatorOf(request);
    const authorization = header(request, 'authorization');
    if (authorization !== undefined) return this.byToken(request, authorization, onBehalfOf);
    const cookie = readCookie(request.headers.cookie, cookieName(this.secure || request.secure));
    if (cookie === undefined) return null;
    return this.bySession(request, cookie, onBehalfOf);
  }

  private async byToken(request: RestRequestInfo, authorization: string, onBehalfOf: string | null): Promise<RestPrincipal> {
    // Up to 16 KiB and one more character, so an access token too long for the verifier is refused as such.
    const match = /^Bearer +(\S{1,16385})$/i.exec(authorization);
    const value = match?.[1];
    if (value && this.accessTokens && !value.startsWith(`${TOKEN_PREFIX}_`) && looksLikeJwt(value)) return this.accessTokens.principal(request, value, onBehalfOf);
    const parsed = value && value.length <= 256 ? parseBearerToken(TOKEN_PREFIX, value) : null;
    const found = parsed ? await this.store.tokenWithOwner(`tok_${parsed.id}`) : undefined;
    const token = found?.token;
    const now = this.now();
    // Read afresh at every request (nothing caches a token check), so a revocation or the owner's disabling applies at the next one.
    if (!parsed || !found || !token || !secretMatches(parsed.secret, token.secretHash) || token.revokedAt !== null || found.ownerDisabled
      || (token.expiresAt !== null && token.expiresAt <= now)) {
      await this.refusals.record(`token:${request.sourceIp}`, {
        principalName: '(unknown)', authMethod: 'serviceToken', category: 'auth', action: 'token.invalid', entityType: token ? 'serviceToken' : null, entityId: token?.id ?? null,
        details: { sourceIp: request.sourceIp.slice(0, 64), path: request.path.slice(0, 200) },
      });
      throw unauthenticated();
    }
    if (token.lastUsedAt === null || now - token.lastUsedAt >= SESSION_TOUCH_MS) await this.store.tokenUsed(token.id, now);
    return {
      kind: 'serviceToken', id: token.id, name: token.name, role: token.role, permissions: ROLE_PERMISSIONS[token.role as RoleName], scopes: token.scopes,
      authMethod: 'serviceToken', onBehalfOf, requiresOperator: token.requiresOperator,
    };
  }

  private async bySession(request: RestRequestInfo, cookie: string, onBehalfOf: string | null): Promise<RestPrincipal> {
    const parsed = parseCookieValue(cookie);
    const session = parsed ? await this.store.session(parsed.id) : undefined;
    const now = this.now();
    const user = session ? await this.store.userById(session.userId) : undefined;
    const valid = parsed && session && user && !user.disabled && secretHashMatches(parsed.secret, session.secretHash)
      && now - session.lastSeenAt < SESSION_IDLE_MS && now - session.createdAt < SESSION_ABSOLUTE_MS;
    if (!valid) {
      await this.refusals.record(`session:${request.sourceIp}`, {
        principalName: user?.username ?? '(unknown)', authMethod: 'session', category: 'auth', action: 'session.invalid', entityType: user ? 'user' : null, entityId: user?.id ?? null,
        details: { sourceIp: request.sourceIp.slice(0, 64), path: request.path.slice(0, 200) },
      });
      throw unauthenticated();
    }
    if (UNSAFE.has(request.method)) this.checkCsrf(request, parsed.secret);
    if (now - session.lastSeenAt >= SESSION_TOUCH_MS) await this.store.touchSession(session.id, now);
    return userPrincipal(user, onBehalfOf, session.id, session.sso);
  }

  private checkCsrf(request: RestRequestInfo, secret: string): void {
    const origin = header(request, 'origin') ?? refererOrigin(header(request, 'referer'));
    const host = header(request, 'host');
    // `Origin: null` (a sandboxed frame, a data: or file: page, a redirect across origins) is an opaque origin: never this service's.
    if (origin === 'null') throw new ProblemError('csrf-check-failed', 'the request comes from an opaque origin (Origin: null), not from this service', { errors: [{ field: 'header.origin', message: 'null: an opaque origin, not this service\'s', accepted: 'this service\'s origin, or no Origin header' }] });
    if (origin !== undefined) {
      let originHost: string | undefined;
      try {
        originHost = new URL(origin).host;
      } catch {
        originHost = undefined;
      }
      if (!host || originHost !== host) throw new ProblemError('csrf-check-failed', 'the request comes from another origin than this service', { errors: [{ field: 'header.origin', message: 'not this service\'s origin' }] });
    }
    const sent = header(request, CSRF_HEADER);
    if (!sent || !tokensEqual(sent, csrfTokenFor(secret))) {
      throw new ProblemError('csrf-check-failed', 'requests authenticated by the session cookie must send X-CSRF-Token (from the login answer or GET /api/v1/auth/me)', {
        errors: [{ field: 'header.x-csrf-token', message: sent ? 'does not match the session' : 'missing', accepted: 'the csrfToken of this session' }],
      });
    }
  }
}

function refererOrigin(referer: string | undefined): string | undefined {
  if (!referer) return undefined;
  try {
    return new URL(referer).origin;
  } catch {
    return 'invalid:';
  }
}

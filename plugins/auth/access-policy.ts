/**
 * The gateway's access policy (see docs/security.md):
 *  1. A valid JWT authenticates the caller and exempts the request from the
 *     IP white list.
 *  2. Otherwise, with the white list on, the source IP must be in it, except
 *     for the exempt paths (/api/auth/login, /api/misc/product-details).
 *  3. With security control off, no credentials are needed and every
 *     interface may be called.
 *  4. With it on, every interface but the public ones needs a JWT or a
 *     secret key. Administrators may call every interface; other users only
 *     the paths in their authorised API list, and never the administration
 *     interfaces.
 *  5. An identity provider's access token (only /mcp takes one, with the
 *     scope fleet:read) reaches what the read-only tools call, never the
 *     administration interfaces; its machine groups narrow what it sees.
 */
import type { AccessPolicy, InterfaceDefinition, Principal, RequestInfo } from '../../core/interfaces/registry.js';
import { ANONYMOUS } from '../../core/interfaces/registry.js';
import { GatewayError } from '../../core/interfaces/errors.js';
import { IpWhiteList } from './ip-white-list.js';
import { looksLikeJwt, parseSecretKey, secretMatches, verifyJwt } from './tokens.js';
import type { UserStore } from './user-store.js';

/** The sessions of sign-ins through the provider, as the policy asks after them (./sso/sessions.ts). */
export interface LiveSessions {
  isLive(id: string, accountId: string, now: number): boolean;
}

/** Paths the IP white list never applies to (GW-82). */
export const WHITE_LIST_EXEMPT_PATHS: ReadonlySet<string> = new Set(['/api/auth/login', '/api/misc/product-details']);

/** Interfaces only administrators may call, whatever a user's list says. */
export const ADMIN_ONLY_PREFIXES = ['/api/security/'] as const;

/** Interfaces every authenticated user may call on their own account. */
export const SELF_SERVICE_PATHS: ReadonlySet<string> = new Set(['/api/auth/change-password']);

type Credential = { kind: 'none' } | { kind: 'malformed' } | { kind: 'jwt'; token: string } | { kind: 'key'; token: string } | { kind: 'unknown' };

function readCredential(headers: RequestInfo['headers']): Credential {
  const header = headers.authorization;
  if (header === undefined) return { kind: 'none' };
  const value = Array.isArray(header) ? header[0] : header;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(value ?? '');
  if (!match) return { kind: 'malformed' };
  const token = match[1] as string;
  if (looksLikeJwt(token)) return { kind: 'jwt', token };
  if (token.startsWith('gwk_')) return { kind: 'key', token };
  return { kind: 'unknown' };
}

/** Whether a principal's authorised API list covers a permission key; `prefix/*` patterns match below the prefix. */
export function listCovers(list: readonly string[], permission: string): boolean {
  return list.some((entry) => entry === permission || (entry.endsWith('/*') && permission.startsWith(entry.slice(0, -1))));
}

export function isAdminOnly(path: string): boolean {
  return ADMIN_ONLY_PREFIXES.some((p) => path.startsWith(p));
}

export class GatewayAccessPolicy implements AccessPolicy {
  private whiteList: IpWhiteList;

  constructor(
    private readonly users: UserStore,
    private readonly signingKey: Uint8Array,
    private readonly now: () => number,
    /** Without it, a JWT naming a session (`sid`) is refused: only a gateway with sign-in through a provider issues them. */
    private readonly sessions?: LiveSessions,
  ) {
    this.whiteList = new IpWhiteList(users.settings.ipWhiteList);
  }

  /** Call after the security settings changed. */
  reload(): void {
    this.whiteList = new IpWhiteList(this.users.settings.ipWhiteList);
  }

  /** The user behind a valid, current JWT, or null. */
  async jwtPrincipal(token: string): Promise<Principal | null> {
    const claims = await verifyJwt(this.signingKey, token, this.now());
    if (!claims) return null;
    const user = this.users.findUser(claims.username);
    if (!user || user.accountId !== claims.accountId || user.tokenVersion !== claims.tokenVersion) return null;
    // A token of a sign-in through the provider lives as long as its session: a logout or a back-channel logout ends it at once.
    if (claims.sessionId !== undefined && !this.sessions?.isLive(claims.sessionId, user.accountId, this.now())) return null;
    return { username: user.username, isAdmin: user.isAdmin, method: 'jwt' };
  }

  private keyPrincipal(token: string): Principal | null {
    const parsed = parseSecretKey(token);
    if (!parsed) return null;
    const record = this.users.findKey(parsed.id);
    if (!record || record.revokedAt !== null || !secretMatches(parsed.secret, record.keyHash)) return null;
    const user = this.users.findUser(record.username);
    if (!user || user.accountId !== record.accountId) return null;
    this.users.touchKey(record, this.now());
    return { username: user.username, isAdmin: user.isAdmin, method: 'secretKey' };
  }

  async authenticate(request: RequestInfo, def: InterfaceDefinition | undefined): Promise<Principal> {
    const settings = this.users.settings;
    const credential = readCredential(request.headers);
    const path = def?.path ?? request.path;

    if (credential.kind === 'jwt') {
      const principal = await this.jwtPrincipal(credential.token);
      if (principal) return principal;
    }
    if (settings.enableIpWhiteList && !WHITE_LIST_EXEMPT_PATHS.has(path) && !this.whiteList.allows(request.sourceIp)) {
      throw new GatewayError('IP_NOT_IN_WHITE_LIST');
    }
    if (!settings.securityControl) return ANONYMOUS;
    if (def?.permission === null) {
      const principal = credential.kind === 'key' ? this.keyPrincipal(credential.token) : null;
      return principal ?? ANONYMOUS;
    }
    switch (credential.kind) {
      case 'none':
        throw new GatewayError('UNAUTHORIZED', 'no Authorization header; send Authorization: Bearer <JWT or secret key>');
      case 'malformed':
        throw new GatewayError('UNAUTHORIZED', 'malformed Authorization header; expected Bearer <JWT or secret key>');
      case 'jwt':
        throw new GatewayError('TOKEN_INVALID', 'the JWT is expired, not signed by this gateway, its session was signed out, or its user no longer exists');
      case 'key': {
        const principal = this.keyPrincipal(credential.token);
        if (principal) return principal;
        throw new GatewayError('TOKEN_INVALID', 'unknown or revoked secret key');
      }
      default:
        throw new GatewayError('TOKEN_INVALID', 'the bearer token is neither a JWT nor a secret key of this gateway');
    }
  }

  principalFor(username: string): Principal | undefined {
    const user = this.users.findUser(username);
    return user ? { username: user.username, isAdmin: user.isAdmin, method: 'internal' } : undefined;
  }

  authorize(principal: Principal, def: InterfaceDefinition): void {
    if (def.permission === null) return;
    // Self-service interfaces act on the user named in a JWT, whatever security control says.
    if (SELF_SERVICE_PATHS.has(def.path)) {
      if (principal.method !== 'jwt') {
        throw new GatewayError('UNAUTHORIZED', `${def.path} takes the user from a JWT: send Authorization: Bearer <JWT from /api/auth/login>`);
      }
      return;
    }
    if (!this.users.settings.securityControl) return;
    const permission = def.permission ?? def.path;
    if (principal.method === 'none' || principal.username === null) {
      throw new GatewayError('UNAUTHORIZED', 'this interface needs credentials');
    }
    if (principal.isAdmin) return;
    if (isAdminOnly(def.path)) throw new GatewayError('FORBIDDEN', `${def.path} is for administrators only`);
    // An identity provider's token on /mcp reads through the read-only tools only, within its machine groups (docs/identity.md).
    if (principal.method === 'oauth') return;
    const user = this.users.findUser(principal.username);
    if (!user || !listCovers(user.authorizedApis, permission)) {
      throw new GatewayError('FORBIDDEN', `${permission} is not in the authorised API list of '${principal.username}'`);
    }
  }
}

/**
 * Sign-in to the fleet console through the plant's OpenID Connect provider
 * (`security.oidc`; docs/identity.md, "The gateway"). The routes are the
 * runtime's (core/auth/oidc-routes.ts); this file is what the gateway does
 * with a sign-in: map the claims to a role, make or update the user, open a
 * session behind a JWT (which the console receives through a one-time code,
 * ./handoff.ts), and end sessions at logout and at the provider's
 * back-channel logout. Each sign-in, refusal, new user and change of role
 * is a line of the log of security events (component `security`).
 */
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { z } from 'zod';
import { seenValues, textClaim, usernameFrom } from '../../../core/auth/oidc-claims.js';
import { refusalPage, unmappedPage } from '../../../core/auth/oidc-pages.js';
import { OIDC_PREFIX, serveOidcRoutes, type SignedIn } from '../../../core/auth/oidc-routes.js';
import { resolveOidcClient } from '../../../core/auth/oidc-settings.js';
import { OidcSignIn, type ProviderIdentity } from '../../../core/auth/oidc-sign-in.js';
import { LogoutTokenVerifier } from '../../../core/auth/logout-tokens.js';
import type { SqlDatabase } from '../../../core/store/database.js';
import { JWT_VALIDITY_SEC, signJwt, verifyJwt } from '../tokens.js';
import type { UserStore } from '../user-store.js';
import { gatewayGrant, roleText, SsoAccounts } from './accounts.js';
import type { GatewayOidcSettings } from './config.js';
import { JwtHandoff } from './handoff.js';
import { SsoSessions } from './sessions.js';

export { SSO_MIGRATIONS } from './schema.js';

/** What the gateway's sign-in through the provider works with. */
export interface GatewaySsoDeps {
  http: FastifyInstance;
  db: SqlDatabase;
  users: UserStore;
  signingKey: Uint8Array;
  env: NodeJS.ProcessEnv;
  now: () => number;
  logger: Logger;
}

/** The sign-in's sessions (for the access policy) and the banner's line. */
export interface GatewaySso {
  sessions: SsoSessions;
  announcement: string;
}

const tokenRequest = z.strictObject({ code: z.string().min(1).max(128) });

/** Serves sign-in through the provider of `settings`; throws naming `security.oidc.…` for a setting it cannot use. */
export async function openGatewaySso(deps: GatewaySsoDeps, settings: GatewayOidcSettings): Promise<GatewaySso> {
  const client = resolveOidcClient(settings, deps.env, 'security.oidc');
  const signIn = new OidcSignIn(client, deps.now);
  const sessions = await SsoSessions.open(deps.db, deps.now());
  const accounts = new SsoAccounts(deps.db, deps.users);
  const handoff = new JwtHandoff(deps.now);
  const log = deps.logger.child({ component: 'security' });

  const signedIn = async (identity: ProviderIdentity): Promise<SignedIn> => {
    const now = deps.now();
    const username = usernameFrom(identity.claims, settings.usernameClaim);
    const who = { username, issuer: identity.issuer, subject: identity.subject.slice(0, 128) };
    const grant = gatewayGrant(identity.claims, settings);
    if (!grant) {
      const seen = seenValues(identity.claims, [settings.rolesClaim]);
      log.warn({ event: 'sso.sign-in.refused', reason: 'no role mapped', ...who, seen }, 'sign-in through the provider refused: no claim value is mapped to a role');
      return { page: unmappedPage({ displayName: signIn.displayName, username, seen, settingPath: 'security.oidc.roles', back: '/' }) };
    }
    const profile = { issuer: identity.issuer, subject: identity.subject, username, email: textClaim(identity.claims, 'email'), name: textClaim(identity.claims, 'name') };
    const result = await accounts.signIn(profile, grant, now);
    if ('taken' in result) {
      log.warn({ event: 'sso.sign-in.refused', reason: 'user name taken', ...who }, 'sign-in through the provider refused: the user name is another account');
      return { page: refusalPage(409, 'User name taken', `The user name ${result.taken} belongs to another account of this gateway (a local user). An administrator renames or deletes that user, or sets security.oidc.usernameClaim to a claim that tells the two apart.`, '/') };
    }
    const { user } = result;
    if (result.created) log.info({ event: 'sso.user.created', ...who, role: roleText(grant) }, 'user made by a sign-in through the provider');
    else if (result.previous && roleText(result.previous) !== roleText(user)) log.info({ event: 'sso.role.changed', ...who, from: roleText(result.previous), to: roleText(user) }, 'role changed by the provider\'s claims');
    if (result.kept) log.warn({ event: 'sso.role.kept', ...who, reason: result.kept }, 'the claims would take the administrator role of the last administrator; kept');
    const session = await sessions.open({
      accountId: user.accountId, issuer: identity.issuer, subject: identity.subject, providerSid: identity.sessionId ?? null, authTime: identity.authTime,
      createdAt: now, expiresAt: now + JWT_VALIDITY_SEC * 1000,
    });
    const token = await signJwt(deps.signingKey, { username: user.username, accountId: user.accountId, tokenVersion: user.tokenVersion, sessionId: session.id }, now);
    log.info({ event: 'sso.sign-in', ...who, role: roleText(user), session: session.id }, 'signed in through the provider');
    return { next: `/#sso=${handoff.offer(token)}` };
  };

  serveOidcRoutes(deps.http, {
    signIn,
    logoutTokens: new LogoutTokenVerifier(client.issuer, client.clientId, deps.now),
    consolePaths: ['/'],
    mappedClaims: [settings.rolesClaim, settings.usernameClaim, 'email', 'name'],
    signedIn,
    backchannelLogout: (logout) => sessions.endByProvider(client.issuer, logout),
    logger: log,
  }, deps.now);

  deps.http.post(`${OIDC_PREFIX}/token`, async (request, reply) => {
    reply.header('cache-control', 'no-store');
    const body = tokenRequest.safeParse(request.body);
    const token = body.success ? handoff.take(body.data.code) : undefined;
    if (!token) return reply.code(400).send({ error: 'invalid_code', message: 'the sign-in code is unknown, used or expired; sign in again' });
    return reply.send({ token });
  });

  // Ends the session behind a JWT of a sign-in through the provider; a JWT of the local login has none (it ends when dropped or expired).
  deps.http.post('/auth/logout', async (request, reply) => {
    const match = /^Bearer\s+(\S{1,4096})$/i.exec(String(request.headers.authorization ?? ''));
    const claims = match ? await verifyJwt(deps.signingKey, match[1] as string, deps.now()) : null;
    if (!claims) return reply.code(401).send({ error: 'unauthenticated', message: 'send Authorization: Bearer <JWT> of the session to end' });
    if (claims.sessionId && (await sessions.end(claims.sessionId))) log.info({ event: 'sso.logout', username: claims.username, session: claims.sessionId }, 'signed out');
    return reply.code(204).send();
  });

  return { sessions, announcement: `sign-in:        through ${client.displayName} (${client.issuer}) at ${OIDC_PREFIX}/login, beside the local login` };
}

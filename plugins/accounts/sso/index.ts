/**
 * Sign-in to the program service's console and terminal through the plant's
 * OpenID Connect provider (`programs.oidc`; docs/identity.md, "The program
 * service"). The routes are the runtime's (core/auth/oidc-routes.ts); this
 * file is what the service does with a sign-in: map the claims to a role and
 * scopes (./grant.ts), make or update the user and open a session behind the
 * session cookie (./users.ts, audited in the hash-chained audit), take a
 * signing-in again for an approval (./signature.ts), and end sessions at the
 * provider's back-channel logout. With `publicUrl`, `/api/v1` also accepts
 * the provider's access tokens whose audience is that URL (./access-tokens.ts).
 */
import { LogoutTokenVerifier } from '../../../core/auth/logout-tokens.js';
import { seenValues, textClaim, usernameFrom } from '../../../core/auth/oidc-claims.js';
import { refusalPage, unmappedPage } from '../../../core/auth/oidc-pages.js';
import { serveOidcRoutes, type SignedIn, type SignedInContext } from '../../../core/auth/oidc-routes.js';
import { resolveOidcClient } from '../../../core/auth/oidc-settings.js';
import { OidcSignIn, type ProviderIdentity } from '../../../core/auth/oidc-sign-in.js';
import { cookieName, parseCookieValue, readCookie, setCookieHeader } from '../../../core/auth/sessions.js';
import type { ProgramsContext } from '../../../core/roles/programs/context.js';
import type { RefusalAudit } from '../refusal-audit.js';
import type { AccountStore } from '../store.js';
import { ACCESS_TOKEN_SCHEME, ProviderAccessTokens } from './access-tokens.js';
import type { ProgramsOidcSettings } from './config.js';
import { mappedClaimPaths, programsGrant } from './grant.js';
import { signatureCheck } from './signature.js';
import { SsoUsers, type SsoProfile } from './users.js';

/** The console's pages a sign-in may go back to: the console (its hash routes) and the terminal. */
const CONSOLE_PATHS = ['/', '/terminal'] as const;

/** What the accounts plugin keeps of the sign-in: the access tokens for its authenticator, and the banner's line. */
export interface ProgramsSso {
  accessTokens: ProviderAccessTokens | undefined;
  announcement: string;
}

/** Serves sign-in through the provider of `settings`; throws naming `programs.oidc.…` for a setting it cannot use. */
export function openProgramsSso(ctx: Omit<ProgramsContext, 'settings'>, store: AccountStore, refusals: RefusalAudit, settings: ProgramsOidcSettings): ProgramsSso {
  const client = resolveOidcClient(settings, ctx.env, 'programs.oidc');
  const signIn = new OidcSignIn(client, ctx.now);
  const users = new SsoUsers(ctx, store);
  const log = ctx.logger.child({ component: 'accounts' });

  const profileOf = (identity: ProviderIdentity): SsoProfile => ({
    issuer: identity.issuer, subject: identity.subject, sid: identity.sessionId ?? null, authTime: identity.authTime,
    username: usernameFrom(identity.claims, settings.usernameClaim), email: textClaim(identity.claims, 'email'), name: textClaim(identity.claims, 'name'),
  });

  const signedIn = async (identity: ProviderIdentity, at: SignedInContext): Promise<SignedIn> => {
    const profile = profileOf(identity);
    const back = at.returnTo;
    const grant = programsGrant(identity.claims, settings);
    if (!grant) {
      const seen = seenValues(identity.claims, mappedClaimPaths(settings));
      await refusals.record(`sso-unmapped:${identity.subject.slice(0, 128)}`, {
        principalName: profile.username, authMethod: 'oidc', onBehalfOf: null, category: 'auth', action: 'login.refused', entityType: null, entityId: null,
        details: { reason: 'no role mapped', issuer: identity.issuer, seen, sourceIp: at.request.ip.slice(0, 64) },
      });
      return { page: unmappedPage({ displayName: signIn.displayName, username: profile.username, seen, settingPath: 'programs.oidc.roles', back }) };
    }
    if (at.purpose === 'reauthenticate') {
      if (at.session && (await users.reauthenticated(at.session, profile))) return { next: back };
      return { page: refusalPage(403, 'Not the same person', 'The sign-in again was not by the person of this console\'s session, or the session has ended. Sign in again from the console.', back) };
    }
    const result = await users.signIn(profile, grant, at.request.ip);
    if ('taken' in result) {
      return { page: refusalPage(409, 'User name taken', `The user name ${result.taken} belongs to another account of this service (a local user). An administrator renames or deletes that user, or sets programs.oidc.usernameClaim to a claim that tells the two apart.`, back) };
    }
    if ('disabled' in result) return { page: refusalPage(403, 'Account disabled', `The account ${result.disabled} is disabled on this service; an administrator enables it again.`, back) };
    return { next: back, setCookie: [setCookieHeader(ctx.secure || at.secure, result.session.cookieValue)] };
  };

  serveOidcRoutes(ctx.http, {
    signIn,
    logoutTokens: new LogoutTokenVerifier(client.issuer, client.clientId, ctx.now),
    consolePaths: CONSOLE_PATHS,
    mappedClaims: [...mappedClaimPaths(settings), settings.usernameClaim, 'email', 'name'],
    reauthenticateMaxAgeSec: settings.maxAuthAgeForApprovalSec,
    currentSession: (request) => parseCookieValue(readCookie(request.headers.cookie, cookieName(ctx.secure || request.protocol === 'https')) ?? '')?.id,
    signedIn,
    backchannelLogout: (logout) => users.endByProvider(client.issuer, logout),
    logger: log,
  }, ctx.now);

  ctx.services.provide('accounts.signature', signatureCheck(settings.maxAuthAgeForApprovalSec, ctx.now));
  const accessTokens = client.publicUrl ? new ProviderAccessTokens(settings, client.issuer, client.publicUrl, refusals, ctx.now) : undefined;
  if (accessTokens) ctx.rest.addSecurityScheme(ACCESS_TOKEN_SCHEME, accessTokens.scheme());
  const tokens = accessTokens ? `; /api/v1 accepts its access tokens for ${client.publicUrl}` : '';
  return { accessTokens, announcement: `sign-in:        through ${client.displayName} (${client.issuer}) at /auth/oidc/login, beside the local login${tokens}` };
}

/**
 * The routes of sign-in through the provider, the same in every console
 * role (docs/identity.md), under `/auth/oidc/` beside the console:
 *
 * - `GET status`: the provider's name for the login page and whether it can
 *   be reached now (the local form works either way);
 * - `GET login?returnTo=…[&purpose=reauthenticate]`: on to the provider,
 *   the sign-in under way kept in a short-lived cookie (HttpOnly,
 *   SameSite=Lax so it comes back with the provider's redirect);
 * - `GET callback`: the provider's answer; the role makes or updates the
 *   user and opens the session (`OidcConsole.signedIn`);
 * - `POST backchannel-logout`: a logout token from the provider ends the
 *   person's sessions at once (OpenID Connect Back-Channel Logout 1.0);
 * - `GET logout?returnTo=…`: on to the provider's end-session endpoint
 *   (after the console ended its own session), or back to the console.
 */
import { createHash } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import { z } from 'zod';
import { LogoutTokenError, type LogoutRequest, type LogoutTokenVerifier } from './logout-tokens.js';
import { continuePage, refusalPage, sendPage, type OidcPage } from './oidc-pages.js';
import { SignInError, type OidcSignIn, type PendingSignIn, type ProviderIdentity, type SignInPurpose } from './oidc-sign-in.js';
import { readCookie } from './sessions.js';

export const OIDC_PREFIX = '/auth/oidc';
/** A sign-in must come back within this long. */
const PENDING_TTL_MS = 10 * 60_000;
const LOGOUT_BODY_LIMIT = 16 * 1024;

/** Where the session is opened: what the role does with a sign-in the provider vouched for. */
export interface SignedInContext {
  purpose: SignInPurpose;
  returnTo: string;
  request: FastifyRequest;
  /** Whether the browser reached this console over HTTPS (cookie names and `Secure`). */
  secure: boolean;
  /** For a re-authentication: the console's session it was started from (`OidcConsole.currentSession` at its start). */
  session?: string;
}

/** What the role answers a sign-in: on to the console (with its cookies), or a page (a refusal). */
export type SignedIn = { next: string; setCookie?: string[] } | { page: OidcPage };

/** One console's use of the provider. */
export interface OidcConsole {
  signIn: OidcSignIn;
  logoutTokens: LogoutTokenVerifier;
  /** The console's pages a sign-in may go back to; the first is where it goes by default. */
  consolePaths: readonly string[];
  /** The claims the role maps (asked of the userinfo endpoint when the ID token lacks one). */
  mappedClaims: readonly string[];
  /** The `max_age` of a re-authentication (a signature); undefined: the console asks for none. */
  reauthenticateMaxAgeSec?: number;
  /**
   * The console's session of a request (its id, not its secret), kept with a
   * re-authentication under way: the provider's redirect back is a cross-site
   * navigation, which a SameSite=Strict session cookie does not come with.
   */
  currentSession?(request: FastifyRequest): string | undefined;
  signedIn(identity: ProviderIdentity, context: SignedInContext): Promise<SignedIn>;
  /** Ends the sessions the token names; answers how many. */
  backchannelLogout(request: LogoutRequest): Promise<number>;
  logger: Logger;
}

const pendingSchema = z.strictObject({
  state: z.string().min(16).max(128), nonce: z.string().min(16).max(128), codeVerifier: z.string().min(43).max(128),
  redirectUri: z.string().max(2048), returnTo: z.string().max(512), purpose: z.enum(['sign-in', 'reauthenticate']),
  maxAgeSec: z.number().int().min(0).max(86_400).optional(), startedAt: z.number().int(), session: z.string().max(128).optional(),
});

const isSecure = (request: FastifyRequest) => request.protocol === 'https';
/**
 * The pending sign-in's cookie, named after the console's origin: a browser
 * keeps one cookie jar per host whatever the port, and the gateway's and the
 * program service's consoles often share a host.
 */
const cookieName = (secure: boolean, origin: string) => `${secure ? '__Host-' : ''}oidc_pending_${createHash('sha256').update(origin).digest('hex').slice(0, 12)}`;

function pendingCookie(secure: boolean, origin: string, value: string | null): string {
  return [`${cookieName(secure, origin)}=${value ?? ''}`, value === null ? 'Max-Age=0' : `Max-Age=${PENDING_TTL_MS / 1000}`, 'Path=/', 'HttpOnly', 'SameSite=Lax', ...(secure ? ['Secure'] : [])].join('; ');
}

function readPending(request: FastifyRequest, origin: string, now: number): PendingSignIn | null {
  const raw = readCookie(request.headers.cookie, cookieName(isSecure(request), origin));
  if (!raw || raw.length > 4096) return null;
  try {
    const parsed = pendingSchema.safeParse(JSON.parse(Buffer.from(raw, 'base64url').toString('utf8')));
    if (!parsed.success || now - parsed.data.startedAt > PENDING_TTL_MS || parsed.data.startedAt > now + 60_000) return null;
    return parsed.data as PendingSignIn;
  } catch {
    return null;
  }
}

/** A console path to go back to: `returnTo` when it is one of this console's pages (a hash route after it allowed), else the first. */
export function localReturnTo(returnTo: unknown, consolePaths: readonly string[]): string {
  if (typeof returnTo !== 'string' || returnTo.length > 512 || [...returnTo].some((ch) => ch < ' ' || ch === '\\')) return consolePaths[0] as string;
  const path = returnTo.split('#')[0] as string;
  return consolePaths.includes(path) ? returnTo : (consolePaths[0] as string);
}

/** This console's origin as the browser reaches it: the configured public URL, else the request's own. */
function originOf(c: OidcConsole, request: FastifyRequest): string {
  return c.signIn.settings.publicUrl ?? `${request.protocol}://${request.host}`;
}

/**
 * Without a provider: the status the consoles ask for at their login form
 * says so (200 `{"configured": false}`), rather than a 404 in every
 * browser's console.
 */
export function serveNoOidc(http: FastifyInstance): void {
  http.get(`${OIDC_PREFIX}/status`, async (_request, reply) => reply.header('cache-control', 'no-store').send({ configured: false }));
}

/** Serves the sign-in routes of `c` on `http`. */
export function serveOidcRoutes(http: FastifyInstance, c: OidcConsole, now: () => number = Date.now): void {
  const back = (request: FastifyRequest) => localReturnTo((request.query as Record<string, unknown>).returnTo, c.consolePaths);

  http.get(`${OIDC_PREFIX}/status`, async (_request, reply) => {
    const status = await c.signIn.status();
    return reply.header('cache-control', 'no-store').send({ displayName: c.signIn.displayName, ...status });
  });

  http.get(`${OIDC_PREFIX}/login`, async (request, reply) => {
    const returnTo = back(request);
    const query = request.query as Record<string, unknown>;
    const purpose: SignInPurpose = query.purpose === 'reauthenticate' && c.reauthenticateMaxAgeSec !== undefined ? 'reauthenticate' : 'sign-in';
    const status = await c.signIn.status();
    if (!status.reachable) return sendPage(reply, refusalPage(503, `${c.signIn.displayName} cannot be reached`, `${c.signIn.displayName} cannot be reached now (${status.reason}). Sign in with a local account, or try again later.`, returnTo));
    try {
      const { url, pending } = await c.signIn.begin({
        redirectUri: `${originOf(c, request)}${OIDC_PREFIX}/callback`, returnTo, purpose,
        ...(purpose === 'reauthenticate' ? { maxAgeSec: c.reauthenticateMaxAgeSec } : {}),
      });
      const session = purpose === 'reauthenticate' ? c.currentSession?.(request) : undefined;
      const value = Buffer.from(JSON.stringify(session ? { ...pending, session } : pending)).toString('base64url');
      return reply.header('set-cookie', pendingCookie(isSecure(request), originOf(c, request), value)).header('cache-control', 'no-store').redirect(url.href, 302);
    } catch (err) {
      return sendPage(reply, refusalPage(503, `${c.signIn.displayName} cannot be reached`, (err as Error).message, returnTo));
    }
  });

  http.get(`${OIDC_PREFIX}/callback`, async (request, reply) => callback(c, request, reply, now));

  http.get(`${OIDC_PREFIX}/logout`, async (request, reply) => {
    const returnTo = back(request);
    const target = await c.signIn.endSessionUrl(`${originOf(c, request)}${returnTo.split('#')[0]}`);
    return reply.header('cache-control', 'no-store').redirect(target?.href ?? returnTo, 302);
  });

  void http.register(async (scope) => {
    // Logout tokens come form-encoded (Back-Channel Logout 1.0 §2.5); this parser serves that route only.
    scope.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: LOGOUT_BODY_LIMIT }, (_request, body, done) => done(null, body));
    scope.post(`${OIDC_PREFIX}/backchannel-logout`, { bodyLimit: LOGOUT_BODY_LIMIT }, async (request, reply) => backchannel(c, request, reply));
  });
}

async function callback(c: OidcConsole, request: FastifyRequest, reply: FastifyReply, now: () => number): Promise<FastifyReply> {
  const secure = isSecure(request);
  const origin = originOf(c, request);
  const pending = readPending(request, origin, now());
  reply.header('set-cookie', pendingCookie(secure, origin, null));
  const first = c.consolePaths[0] as string;
  if (!pending) return sendPage(reply, refusalPage(400, 'Sign-in not recognised', 'This sign-in was not started from this console, or took longer than 10 minutes. Start it again from the login page.', first));
  const callbackUrl = new URL(pending.redirectUri);
  callbackUrl.search = request.url.includes('?') ? request.url.slice(request.url.indexOf('?')) : '';
  let identity: ProviderIdentity;
  try {
    identity = await c.signIn.complete(callbackUrl, pending, c.mappedClaims);
  } catch (err) {
    const e = err instanceof SignInError ? err : new SignInError('invalid-response', 'the sign-in failed');
    c.logger.warn({ event: 'oidc.sign-in.failed', reason: e.reason, providerError: e.providerError, err: e.message }, 'sign-in through the provider failed');
    const status = e.reason === 'unreachable' ? 502 : e.reason === 'provider-refused' ? 403 : 400;
    const title = e.reason === 'unreachable' ? `${c.signIn.displayName} cannot be reached` : 'Sign-in not completed';
    return sendPage(reply, refusalPage(status, title, e.message, pending.returnTo));
  }
  const result = await c.signedIn(identity, { purpose: pending.purpose, returnTo: pending.returnTo, request, secure, ...(pending.session ? { session: pending.session } : {}) });
  if ('page' in result) return sendPage(reply, result.page);
  reply.header('set-cookie', [pendingCookie(secure, origin, null), ...(result.setCookie ?? [])]);
  return sendPage(reply, continuePage(result.next));
}

async function backchannel(c: OidcConsole, request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
  reply.header('cache-control', 'no-store');
  const refuse = (status: number, description: string) => reply.code(status).send({ error: 'invalid_request', error_description: description });
  const token = typeof request.body === 'string' ? new URLSearchParams(request.body).get('logout_token') : null;
  if (!token) return refuse(400, 'send logout_token, form-encoded (application/x-www-form-urlencoded)');
  let logout: LogoutRequest;
  try {
    logout = await c.logoutTokens.verify(token);
  } catch (err) {
    if (!(err instanceof LogoutTokenError)) throw err;
    c.logger.warn({ event: 'oidc.backchannel-logout.refused', err: err.message }, 'a logout token was refused');
    return refuse(err.issuerUnavailable ? 503 : 400, err.message);
  }
  const ended = await c.backchannelLogout(logout);
  c.logger.info({ event: 'oidc.backchannel-logout', sid: logout.sid, sub: logout.sub, sessionsEnded: ended }, 'the provider ended sessions');
  return reply.code(200).send();
}

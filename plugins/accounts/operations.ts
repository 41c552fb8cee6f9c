/**
 * The account operations of /api/v1: login, logout, change-password, me,
 * and (operations/users.ts, operations/service-tokens.ts) the administration of users and service tokens.
 * Every change writes its audit record in the same transaction.
 */
import { z } from 'zod';
import { hashPassword, isPasswordHash, needsRehash, verifyPassword } from '../../core/auth/passwords.js';
import { defineOperation, type AnyRestOperation } from '../../core/rest/operation.js';
import { ProblemError } from '../../core/rest/problem.js';
import { newSession, parseCookieValue, readCookie, cookieName, SESSION_ABSOLUTE_MS, setCookieHeader, csrfTokenFor } from '../../core/auth/sessions.js';
import type { AccountOperation, AccountsDeps } from './operations/callers.js';
import { SERVICE_TOKEN_OPERATIONS } from './operations/service-tokens.js';
import { USER_OPERATIONS } from './operations/users.js';
import { auditActor, principalOf } from '../../core/rest/principal.js';
import { MAX_PASSWORD_LENGTH, meView, passwordSchema, scopesSchema, userOut, userView } from './views.js';

/** Signing in and out, the password, and who the caller is. */
const SESSION_OPERATIONS: readonly AccountOperation[] = [
  (deps) => {
    const { ctx, store, throttle } = deps;
    return defineOperation({
      operationId: 'login', method: 'POST', path: '/auth/login', summary: 'Sign in: sets the session cookie', tags: ['auth'], permission: null, problems: [401, 429],
      body: z.object({ username: z.string().min(1).max(128), password: z.string().min(1).max(MAX_PASSWORD_LENGTH) }).strict(),
      responses: {
        200: {
          description: 'Signed in. The session cookie is set (HttpOnly, SameSite=Strict; Secure with the __Host- prefix over TLS).',
          schema: z.object({ user: userView, csrfToken: z.string(), expiresAt: z.string() }),
          headers: { 'Set-Cookie': 'pvs_session=<id>.<secret>; Path=/; HttpOnly; SameSite=Strict; Max-Age=604800' },
        },
      },
      handler: async ({ body }, { request }) => {
        const now = ctx.now();
        const key = body.username.toLowerCase();
        const wait = await throttle.retryAfterSec(request.sourceIp, key, now);
        if (wait > 0) throw new ProblemError('too-many-requests', `too many failed sign-ins; try again in ${wait} s`, { retryAfterSec: wait });
        const user = await store.userByName(body.username);
        // A user made by a sign-in through the provider has no password: verified against the dummy, so the answer's time tells nothing.
        const hashed = user !== undefined && isPasswordHash(user.passwordHash);
        const ok = (await verifyPassword(body.password, hashed ? user.passwordHash : deps.dummyHash)) && hashed;
        if (!user || !ok || user.disabled) {
          await throttle.fail(request.sourceIp, key, now);
          await ctx.db.write(
            (tx) => ctx.audit.append(tx, {
              principalName: body.username.slice(0, 128), authMethod: 'password', category: 'auth', action: 'login.failed',
              entityType: user ? 'user' : null, entityId: user?.id ?? null, details: { sourceIp: request.sourceIp.slice(0, 64) },
            }),
            { transaction: true },
          );
          throw new ProblemError('unauthenticated', 'unknown user name or wrong password');
        }
        await throttle.succeed(request.sourceIp, key);
        const session = newSession();
        const rehash = needsRehash(user.passwordHash, deps.passwordCost) ? await hashPassword(body.password, deps.passwordCost) : null;
        await ctx.db.write(async (tx) => {
          if (rehash) await store.setPasswordHash(tx, user.id, rehash, now);
          await store.insertSession(tx, { id: session.id, secretHash: session.secretHash, userId: user.id, createdAt: now, lastSeenAt: now });
          await ctx.audit.append(tx, {
            principalName: user.username, authMethod: 'password', category: 'auth', action: 'login', entityType: 'user', entityId: user.id,
            details: { sourceIp: request.sourceIp.slice(0, 64), session: session.id, ...(rehash ? { passwordRehashed: true } : {}) },
          });
        }, { transaction: true });
        return {
          status: 200,
          body: { user: userOut(user), csrfToken: session.csrfToken, expiresAt: new Date(now + SESSION_ABSOLUTE_MS).toISOString() },
          headers: { 'set-cookie': setCookieHeader(ctx.secure || request.secure, session.cookieValue) },
        };
      },
    });
  },
  ({ ctx, store }) => defineOperation({
    operationId: 'logout', method: 'POST', path: '/auth/logout', summary: 'Sign out: ends this session', tags: ['auth'], permission: 'account.self',
    responses: { 204: { description: 'Signed out; the cookie is cleared.' } },
    handler: async (_input, { principal, request }) => {
      const p = principalOf(principal);
      await ctx.db.write(async (tx) => {
        if (p.sessionId) await store.deleteSession(tx, p.sessionId);
        await ctx.audit.append(tx, { ...auditActor(p), category: 'auth', action: 'logout', entityType: p.kind === 'user' ? 'user' : 'serviceToken', entityId: p.id });
      }, { transaction: true });
      return { status: 204, headers: { 'set-cookie': setCookieHeader(ctx.secure || request.secure, null) } };
    },
  }),
  ({ ctx, store, passwordCost, throttle }) => defineOperation({
    operationId: 'changePassword', method: 'POST', path: '/auth/change-password', summary: 'Change your password; your other sessions end', tags: ['auth'], permission: 'account.self', problems: [429],
    body: z.object({ currentPassword: z.string().min(1).max(MAX_PASSWORD_LENGTH), newPassword: passwordSchema }).strict(),
    responses: { 204: { description: 'Changed; every other session of this user has ended.' } },
    handler: async ({ body }, { principal, request }) => {
      const p = principalOf(principal);
      if (p.kind !== 'user') throw new ProblemError('unacceptable', 'a service token has no password; sign in as a user');
      const user = await store.userById(p.id);
      if (!user) throw new ProblemError('unauthenticated', 'this session\'s user no longer exists');
      // A wrong current password counts as a failed sign-in of that user: a taken-over
      // session must not become a way round the sign-in throttle to guess the password.
      const now = ctx.now();
      const key = user.username.toLowerCase();
      const wait = await throttle.retryAfterSec(request.sourceIp, key, now);
      if (wait > 0) throw new ProblemError('too-many-requests', `too many wrong passwords; try again in ${wait} s`, { retryAfterSec: wait });
      if (!(await verifyPassword(body.currentPassword, user.passwordHash))) {
        await throttle.fail(request.sourceIp, key, now);
        await ctx.db.write(
          (tx) => ctx.audit.append(tx, {
            ...auditActor(p), category: 'auth', action: 'password.change.failed', entityType: 'user', entityId: user.id,
            details: { sourceIp: request.sourceIp.slice(0, 64) },
          }),
          { transaction: true },
        );
        throw new ProblemError('unacceptable', 'the current password is wrong', { errors: [{ field: 'body.currentPassword', message: 'does not match' }] });
      }
      await throttle.succeed(request.sourceIp, key);
      if (body.newPassword === body.currentPassword) {
        throw new ProblemError('unacceptable', 'the new password must differ from the current one', { errors: [{ field: 'body.newPassword', message: 'same as the current password' }] });
      }
      const hash = await hashPassword(body.newPassword, passwordCost);
      await ctx.db.write(async (tx) => {
        await store.setPasswordHash(tx, user.id, hash, now);
        const ended = await store.deleteSessionsOf(tx, user.id, p.sessionId ?? null);
        await ctx.audit.append(tx, { ...auditActor(p), category: 'auth', action: 'password.change', entityType: 'user', entityId: user.id, details: { otherSessionsEnded: ended } });
      }, { transaction: true });
      return { status: 204 };
    },
  }),
  ({ ctx }) => defineOperation({
    operationId: 'me', method: 'GET', path: '/auth/me', summary: 'Who you are: user or token, role, scopes, permissions, how you authenticated', tags: ['auth'], permission: 'account.self',
    responses: { 200: { description: 'The caller.', schema: meView } },
    handler: (_input, { principal, request }) => {
      const p = principalOf(principal);
      const parsed = p.sessionId ? parseCookieValue(readCookie(request.headers.cookie, cookieName(ctx.secure || request.secure)) ?? '') : null;
      return {
        status: 200,
        body: {
          kind: p.kind, id: p.id, name: p.name, role: p.role, scopes: p.scopes as z.infer<typeof scopesSchema>, permissions: [...p.permissions].sort(),
          authMethod: p.authMethod, onBehalfOf: p.onBehalfOf, ...(parsed ? { csrfToken: csrfTokenFor(parsed.secret) } : {}),
          ...(p.identityProvider ? { identityProvider: { authTime: p.identityProvider.authTime === null ? null : new Date(p.identityProvider.authTime).toISOString() } } : {}),
        },
      };
    },
  }),
];

export function accountOperations(deps: AccountsDeps): AnyRestOperation[] {
  return [...SESSION_OPERATIONS, ...USER_OPERATIONS, ...SERVICE_TOKEN_OPERATIONS].map((make) => make(deps));
}

/**
 * The account operations of /api/v1: login, logout, change-password, me,
 * and the administration of users and service tokens. Every change writes
 * its audit record in the same transaction.
 */
import { z } from 'zod';
import { createBearerToken } from '../../core/auth/bearer-tokens.js';
import { hashPassword, MIN_PASSWORD_LENGTH, needsRehash, verifyPassword, type ScryptCost } from '../../core/auth/passwords.js';
import type { LoginThrottle } from '../../core/auth/login-throttle.js';
import { defineOperation, type RestOperation, type RestPrincipal } from '../../core/rest/operation.js';
import { decodeCursor, pageAfter, pageOf, pageQueryShape } from '../../core/rest/paging.js';
import { ProblemError } from '../../core/rest/problem.js';
import type { ProgramsContext } from '../../core/roles/programs-context.js';
import { TOKEN_PREFIX } from './authenticator.js';
import { ROLE_NAMES, ROLE_PERMISSIONS, type RoleName } from './roles.js';
import { newSession, parseCookieValue, readCookie, cookieName, SESSION_ABSOLUTE_MS, setCookieHeader, csrfTokenFor } from '../../core/auth/sessions.js';
import { newId, type AccountStore, type TokenRecord, type UserRecord } from './store.js';

const MAX_PASSWORD_LENGTH = 1024;
const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());

const idSchema = (prefix: string) => z.string().regex(new RegExp(`^${prefix}_[0-9a-f]{12,16}$`), `an id such as ${prefix}_0123456789abcdef`);
const nameSchema = z.string().min(1).max(128).regex(/^[^\p{Cc}]+$/u, 'no control characters');
const usernameSchema = z.string().min(1).max(64).regex(/^[A-Za-z0-9][A-Za-z0-9._@-]*$/, 'letters, digits and . _ @ -, starting with a letter or digit');
const passwordSchema = z.string().min(MIN_PASSWORD_LENGTH).max(MAX_PASSWORD_LENGTH);
const roleSchema = z.enum(ROLE_NAMES);
const scopesSchema = z
  .object({
    libraries: z.union([z.literal('*'), z.array(z.string().regex(/^lib_[0-9a-f]{16}$/, 'a library id')).max(1000)]),
    machineGroups: z.union([z.literal('*'), z.array(z.string().regex(/^grp_[0-9a-f]{16}$/, 'a machine group id')).max(1000)]).default('*'),
  })
  .strict()
  .describe('What the account may act on: libraries and machine groups, each "*" for all or a list of ids.');
const ALL_SCOPES = { libraries: '*', machineGroups: '*' } as const;

const userView = z.object({
  id: z.string(), username: z.string(), role: roleSchema, scopes: scopesSchema, disabled: z.boolean(), createdAt: z.string(), updatedAt: z.string(),
});
const tokenView = z.object({
  id: z.string(), name: z.string(), role: roleSchema, scopes: scopesSchema, requiresOperator: z.boolean(), expiresAt: z.string().nullable(),
  lastUsedAt: z.string().nullable(), revokedAt: z.string().nullable(), createdBy: z.string(), createdAt: z.string(),
});
const meView = z.object({
  kind: z.enum(['user', 'serviceToken']), id: z.string(), name: z.string(), role: z.string(), scopes: scopesSchema,
  permissions: z.array(z.string()), authMethod: z.enum(['session', 'serviceToken']), onBehalfOf: z.string().nullable(),
  csrfToken: z.string().optional().describe('For a session: send it as X-CSRF-Token with POST, PATCH and DELETE.'),
});

const userOut = (u: UserRecord): z.infer<typeof userView> => ({
  id: u.id, username: u.username, role: u.role, scopes: u.scopes as z.infer<typeof scopesSchema>, disabled: u.disabled, createdAt: iso(u.createdAt) as string, updatedAt: iso(u.updatedAt) as string,
});
const tokenOut = (t: TokenRecord): z.infer<typeof tokenView> => ({
  id: t.id, name: t.name, role: t.role, scopes: t.scopes as z.infer<typeof scopesSchema>, requiresOperator: t.requiresOperator, expiresAt: iso(t.expiresAt),
  lastUsedAt: iso(t.lastUsedAt), revokedAt: iso(t.revokedAt), createdBy: t.createdBy, createdAt: iso(t.createdAt) as string,
});

export interface AccountsDeps {
  ctx: ProgramsContext;
  store: AccountStore;
  throttle: LoginThrottle;
  passwordCost: ScryptCost;
  /** A hash at the production cost, verified for unknown users so that their login takes as long. */
  dummyHash: string;
}

const principalOf = (p: RestPrincipal | null): RestPrincipal => {
  if (!p) throw new ProblemError('unauthenticated', 'sign in first');
  return p;
};

const auditBy = (p: RestPrincipal) => ({ principalName: p.name, onBehalfOf: p.onBehalfOf, authMethod: p.authMethod });

export function accountOperations(deps: AccountsDeps): RestOperation[] {
  const { ctx, store, throttle } = deps;
  const ops = [
    defineOperation({
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
        const wait = throttle.retryAfterSec(request.sourceIp, key, now);
        if (wait > 0) throw new ProblemError('too-many-requests', `too many failed sign-ins; try again in ${wait} s`, { retryAfterSec: wait });
        const user = await store.userByName(body.username);
        const ok = await verifyPassword(body.password, user?.passwordHash ?? deps.dummyHash);
        if (!user || !ok || user.disabled) {
          throttle.fail(request.sourceIp, key, now);
          await ctx.db.write(
            (tx) => ctx.audit.append(tx, {
              principalName: body.username.slice(0, 128), authMethod: 'password', category: 'auth', action: 'login.failed',
              entityType: user ? 'user' : null, entityId: user?.id ?? null, details: { sourceIp: request.sourceIp.slice(0, 64) },
            }),
            { transaction: true },
          );
          throw new ProblemError('unauthenticated', 'unknown user name or wrong password');
        }
        throttle.succeed(request.sourceIp, key);
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
    }),
    defineOperation({
      operationId: 'logout', method: 'POST', path: '/auth/logout', summary: 'Sign out: ends this session', tags: ['auth'], permission: 'account.self',
      responses: { 204: { description: 'Signed out; the cookie is cleared.' } },
      handler: async (_input, { principal, request }) => {
        const p = principalOf(principal);
        await ctx.db.write(async (tx) => {
          if (p.sessionId) await store.deleteSession(tx, p.sessionId);
          await ctx.audit.append(tx, { ...auditBy(p), category: 'auth', action: 'logout', entityType: p.kind === 'user' ? 'user' : 'serviceToken', entityId: p.id });
        }, { transaction: true });
        return { status: 204, headers: { 'set-cookie': setCookieHeader(ctx.secure || request.secure, null) } };
      },
    }),
    defineOperation({
      operationId: 'changePassword', method: 'POST', path: '/auth/change-password', summary: 'Change your password; your other sessions end', tags: ['auth'], permission: 'account.self',
      body: z.object({ currentPassword: z.string().min(1).max(MAX_PASSWORD_LENGTH), newPassword: passwordSchema }).strict(),
      responses: { 204: { description: 'Changed; every other session of this user has ended.' } },
      handler: async ({ body }, { principal }) => {
        const p = principalOf(principal);
        if (p.kind !== 'user') throw new ProblemError('unacceptable', 'a service token has no password; sign in as a user');
        const user = await store.userById(p.id);
        if (!user || !(await verifyPassword(body.currentPassword, user.passwordHash))) {
          throw new ProblemError('unacceptable', 'the current password is wrong', { errors: [{ field: 'body.currentPassword', message: 'does not match' }] });
        }
        if (body.newPassword === body.currentPassword) {
          throw new ProblemError('unacceptable', 'the new password must differ from the current one', { errors: [{ field: 'body.newPassword', message: 'same as the current password' }] });
        }
        const hash = await hashPassword(body.newPassword, deps.passwordCost);
        const now = ctx.now();
        await ctx.db.write(async (tx) => {
          await store.setPasswordHash(tx, user.id, hash, now);
          const ended = await store.deleteSessionsOf(tx, user.id, p.sessionId ?? null);
          await ctx.audit.append(tx, { ...auditBy(p), category: 'auth', action: 'password.change', entityType: 'user', entityId: user.id, details: { otherSessionsEnded: ended } });
        }, { transaction: true });
        return { status: 204 };
      },
    }),
    defineOperation({
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
          },
        };
      },
    }),
    defineOperation({
      operationId: 'createUser', method: 'POST', path: '/admin/users', summary: 'Create a user', tags: ['admin'], permission: 'users.manage',
      body: z.object({ username: usernameSchema, password: passwordSchema, role: roleSchema, scopes: scopesSchema.default(ALL_SCOPES) }).strict(),
      responses: { 201: { description: 'Created.', schema: userView } },
      handler: async ({ body }, { principal }) => {
        const p = principalOf(principal);
        if (await store.userByName(body.username)) {
          throw new ProblemError('conflict', `a user named ${body.username} exists`, { errors: [{ field: 'body.username', message: 'already taken' }] });
        }
        const now = ctx.now();
        const user: UserRecord = {
          id: newId('usr'), username: body.username, passwordHash: await hashPassword(body.password, deps.passwordCost), role: body.role, scopes: body.scopes,
          disabled: false, createdAt: now, updatedAt: now,
        };
        await ctx.db.write(async (tx) => {
          await store.insertUser(tx, user);
          await ctx.audit.append(tx, { ...auditBy(p), category: 'admin', action: 'user.create', entityType: 'user', entityId: user.id, details: { username: user.username, role: user.role, scopes: user.scopes } });
        }, { transaction: true });
        return { status: 201, body: userOut(user), headers: { location: `/api/v1/admin/users/${user.id}` } };
      },
    }),
    defineOperation({
      operationId: 'listUsers', method: 'GET', path: '/admin/users', summary: 'List users', tags: ['admin'], permission: 'users.manage',
      query: z.object({ ...pageQueryShape }),
      responses: { 200: { description: 'A page of users, by id.', schema: pageOf(userView) } },
      handler: async ({ query }) => {
        const after = query.cursor ? String(decodeCursor(query.cursor, { id: 'string' }).id) : null;
        const rows = await store.listUsers(query.limit + 1, after);
        const page = pageAfter(rows, query.limit, (last) => ({ id: last.id }));
        return { status: 200, body: { items: page.items.map(userOut), nextCursor: page.nextCursor } };
      },
    }),
    defineOperation({
      operationId: 'updateUser', method: 'PATCH', path: '/admin/users/{id}', summary: 'Change a user\'s role, scopes or disabled flag (disabling ends their sessions)', tags: ['admin'], permission: 'users.manage',
      params: z.object({ id: idSchema('usr') }),
      body: z.object({ role: roleSchema.optional(), scopes: scopesSchema.optional(), disabled: z.boolean().optional() }).strict(),
      responses: { 200: { description: 'Updated.', schema: userView } },
      handler: async ({ params, body }, { principal }) => {
        const p = principalOf(principal);
        const user = await store.userById(params.id);
        if (!user) throw new ProblemError('not-found', `no user ${params.id}`);
        if (user.id === p.id && (body.disabled === true || (body.role !== undefined && body.role !== 'admin'))) {
          throw new ProblemError('unacceptable', 'you cannot disable yourself or take away your own administrator role');
        }
        const updated: UserRecord = { ...user, ...(body.role ? { role: body.role } : {}), ...(body.scopes ? { scopes: body.scopes } : {}), ...(body.disabled !== undefined ? { disabled: body.disabled } : {}), updatedAt: ctx.now() };
        await ctx.db.write(async (tx) => {
          await store.updateUser(tx, updated);
          const ended = updated.disabled ? await store.deleteSessionsOf(tx, user.id, null) : 0;
          await ctx.audit.append(tx, { ...auditBy(p), category: 'admin', action: 'user.update', entityType: 'user', entityId: user.id, details: { ...body, sessionsEnded: ended } });
        }, { transaction: true });
        return { status: 200, body: userOut(updated) };
      },
    }),
    defineOperation({
      operationId: 'createServiceToken', method: 'POST', path: '/admin/service-tokens', summary: 'Create a service token (shown once)', tags: ['admin'], permission: 'tokens.manage',
      body: z.object({
        name: nameSchema, role: roleSchema, scopes: scopesSchema.default(ALL_SCOPES), requiresOperator: z.boolean().default(false),
        expiresAt: z.iso.datetime({ offset: true }).optional().describe('When the token stops working; none by default.'),
      }).strict(),
      responses: { 201: { description: 'Created. `token` is shown only in this answer.', schema: tokenView.extend({ token: z.string().describe('pvs_<id>_<secret>') }) } },
      handler: async ({ body }, { principal }) => {
        const p = principalOf(principal);
        const now = ctx.now();
        const expiresAt = body.expiresAt ? Date.parse(body.expiresAt) : null;
        if (expiresAt !== null && expiresAt <= now) throw new ProblemError('unacceptable', 'expiresAt is in the past', { errors: [{ field: 'body.expiresAt', message: 'in the past', accepted: 'a future instant' }] });
        const created = createBearerToken(TOKEN_PREFIX);
        const token: TokenRecord = {
          id: `tok_${created.id}`, name: body.name, secretHash: created.hash, role: body.role, scopes: body.scopes, requiresOperator: body.requiresOperator,
          expiresAt, lastUsedAt: null, revokedAt: null, createdBy: p.name, createdAt: now,
        };
        await ctx.db.write(async (tx) => {
          await store.insertToken(tx, token);
          await ctx.audit.append(tx, { ...auditBy(p), category: 'admin', action: 'token.create', entityType: 'serviceToken', entityId: token.id, details: { name: token.name, role: token.role, scopes: token.scopes, requiresOperator: token.requiresOperator, expiresAt: iso(expiresAt) } });
        }, { transaction: true });
        return { status: 201, body: { ...tokenOut(token), token: created.key }, headers: { location: `/api/v1/admin/service-tokens/${token.id}` } };
      },
    }),
    defineOperation({
      operationId: 'listServiceTokens', method: 'GET', path: '/admin/service-tokens', summary: 'List service tokens (never their secrets)', tags: ['admin'], permission: 'tokens.manage',
      query: z.object({ ...pageQueryShape }),
      responses: { 200: { description: 'A page of tokens, by id.', schema: pageOf(tokenView) } },
      handler: async ({ query }) => {
        const after = query.cursor ? String(decodeCursor(query.cursor, { id: 'string' }).id) : null;
        const rows = await store.listTokens(query.limit + 1, after);
        const page = pageAfter(rows, query.limit, (last) => ({ id: last.id }));
        return { status: 200, body: { items: page.items.map(tokenOut), nextCursor: page.nextCursor } };
      },
    }),
    defineOperation({
      operationId: 'revokeServiceToken', method: 'DELETE', path: '/admin/service-tokens/{id}', summary: 'Revoke a service token', tags: ['admin'], permission: 'tokens.manage', highRisk: true,
      params: z.object({ id: idSchema('tok') }),
      responses: { 204: { description: 'Revoked (also when it already was).' } },
      handler: async ({ params }, { principal }) => {
        const p = principalOf(principal);
        const token = await store.token(params.id);
        if (!token) throw new ProblemError('not-found', `no service token ${params.id}`);
        await ctx.db.write(async (tx) => {
          await store.revokeToken(tx, token.id, ctx.now());
          await ctx.audit.append(tx, { ...auditBy(p), category: 'admin', action: 'token.revoke', entityType: 'serviceToken', entityId: token.id, details: { name: token.name, alreadyRevoked: token.revokedAt !== null } });
        }, { transaction: true });
        return { status: 204 };
      },
    }),
  ];
  return ops as unknown as RestOperation[];
}

/** A role name from the table, for code that reads roles as strings. */
export function isRoleName(role: string): role is RoleName {
  return role in ROLE_PERMISSIONS;
}

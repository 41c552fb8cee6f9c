/**
 * The administration of users and service tokens under /api/v1/admin. Every
 * create and change goes through `authorizeAccountChange` (grants.ts): what
 * it makes lies within the caller's own rights, and accounts holding more
 * than the caller are neither listed nor changeable. Disabling a user ends
 * its sessions and revokes the tokens it owns. Every change writes its audit
 * record in the same transaction.
 */
import { z } from 'zod';
import { createBearerToken } from '../../core/auth/bearer-tokens.js';
import { hashPassword } from '../../core/auth/passwords.js';
import { defineOperation, type AnyRestOperation, type RestPrincipal } from '../../core/rest/operation.js';
import { decodeCursor, pageAfter, pageOf, pageQueryShape } from '../../core/rest/paging.js';
import { ProblemError } from '../../core/rest/problem.js';
import type { AccountsDeps } from './operations.js';
import { TOKEN_PREFIX } from './authenticator.js';
import { accountNotFound, authorizeAccountChange, completeScopes, grantorOf, holdsWithin, type Grantor } from './grants.js';
import { newId, type AccountStore, type TokenRecord, type UserRecord } from './store.js';
import { auditBy, idSchema, iso, nameSchema, passwordSchema, principalOf, roleSchema, scopesInputSchema, tokenOut, tokenView, usernameSchema, userOut, userView } from './views.js';

/** Rows read at a time while a list skips accounts the caller may not see. */
const SCAN_BATCH = 200;
/** Revoked token ids written into one audit record; past this, only the count. */
const AUDITED_IDS = 100;

/** The next `limit + 1` rows after `after` that `visible` keeps, reading the table in batches by id. */
async function visibleAfter<T extends { id: string }>(list: (limit: number, after: string | null) => Promise<T[]>, visible: (row: T) => boolean, limit: number, after: string | null): Promise<T[]> {
  const out: T[] = [];
  for (let cursor = after; ;) {
    const rows = await list(SCAN_BATCH, cursor);
    for (const row of rows) if (visible(row) && out.push(row) > limit) return out;
    if (rows.length < SCAN_BATCH) return out;
    cursor = (rows[rows.length - 1] as T).id;
  }
}

/** The caller as a grantor, and the user on whose authority it acts (the owner of the tokens it makes). */
async function callerOf(store: AccountStore, p: RestPrincipal): Promise<{ grantor: Grantor; ownerUserId: string | null }> {
  if (p.kind === 'user') return { grantor: grantorOf(p), ownerUserId: p.id };
  const token = await store.token(p.id);
  return { grantor: grantorOf(p, { expiresAt: token?.expiresAt ?? null }), ownerUserId: token?.ownerUserId ?? null };
}

export function adminOperations(deps: AccountsDeps): AnyRestOperation[] {
  const { ctx, store } = deps;
  const ops = [
    defineOperation({
      operationId: 'createUser', method: 'POST', path: '/admin/users', summary: 'Create a user, with a role and scopes within your own', tags: ['admin'], permission: 'users.manage',
      body: z.object({ username: usernameSchema, password: passwordSchema, role: roleSchema, scopes: scopesInputSchema.optional() }).strict(),
      responses: { 201: { description: 'Created.', schema: userView } },
      handler: async ({ body }, { principal }) => {
        const p = principalOf(principal);
        const { grantor } = await callerOf(store, p);
        const scopes = completeScopes(body.scopes, grantor.scopes);
        authorizeAccountChange(grantor, { result: { role: body.role, scopes } });
        if (await store.userByName(body.username)) {
          throw new ProblemError('conflict', `a user named ${body.username} exists`, { errors: [{ field: 'body.username', message: 'already taken' }] });
        }
        const now = ctx.now();
        const user: UserRecord = {
          id: newId('usr'), username: body.username, passwordHash: await hashPassword(body.password, deps.passwordCost), role: body.role, scopes,
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
      operationId: 'listUsers', method: 'GET', path: '/admin/users', summary: 'List the users whose role and scopes lie within yours', tags: ['admin'], permission: 'users.manage',
      query: z.object({ ...pageQueryShape }),
      responses: { 200: { description: 'A page of users, by id.', schema: pageOf(userView) } },
      handler: async ({ query }, { principal }) => {
        const { grantor } = await callerOf(store, principalOf(principal));
        const after = query.cursor ? String(decodeCursor(query.cursor, { id: 'string' }).id) : null;
        const rows = await visibleAfter((limit, from) => store.listUsers(limit, from), (u) => holdsWithin(grantor, u), query.limit, after);
        const page = pageAfter(rows, query.limit, (last) => ({ id: last.id }));
        return { status: 200, body: { items: page.items.map(userOut), nextCursor: page.nextCursor } };
      },
    }),
    defineOperation({
      operationId: 'updateUser', method: 'PATCH', path: '/admin/users/{id}', summary: 'Change a user\'s role, scopes (within your own) or disabled flag (disabling ends their sessions and revokes their tokens)', tags: ['admin'], permission: 'users.manage',
      params: z.object({ id: idSchema('usr') }),
      body: z.object({ role: roleSchema.optional(), scopes: scopesInputSchema.optional(), disabled: z.boolean().optional() }).strict(),
      responses: { 200: { description: 'Updated.', schema: userView } },
      handler: async ({ params, body }, { principal }) => {
        const p = principalOf(principal);
        const { grantor } = await callerOf(store, p);
        const user = await store.userById(params.id);
        if (!user) throw accountNotFound({ kind: 'user', id: params.id });
        const result = { role: body.role ?? user.role, scopes: completeScopes(body.scopes, user.scopes) };
        authorizeAccountChange(grantor, { target: { kind: 'user', id: user.id, role: user.role, scopes: user.scopes }, result });
        if (user.id === p.id && body.disabled === true) throw new ProblemError('unacceptable', 'you cannot disable yourself');
        const updated: UserRecord = { ...user, ...result, ...(body.disabled !== undefined ? { disabled: body.disabled } : {}), updatedAt: ctx.now() };
        await ctx.db.write(async (tx) => {
          await store.updateUser(tx, updated);
          const ended = updated.disabled ? await store.deleteSessionsOf(tx, user.id, null) : 0;
          const revoked = updated.disabled ? await store.revokeTokensOf(tx, user.id, updated.updatedAt) : [];
          const tokens = revoked.length > 0 ? { tokensRevoked: revoked.length, revokedTokenIds: revoked.slice(0, AUDITED_IDS) } : {};
          await ctx.audit.append(tx, { ...auditBy(p), category: 'admin', action: 'user.update', entityType: 'user', entityId: user.id, details: { ...body, sessionsEnded: ended, ...tokens } });
        }, { transaction: true });
        return { status: 200, body: userOut(updated) };
      },
    }),
    defineOperation({
      operationId: 'createServiceToken', method: 'POST', path: '/admin/service-tokens', summary: 'Create a service token (shown once), with a role, scopes and limits within your own', tags: ['admin'], permission: 'tokens.manage',
      body: z.object({
        name: nameSchema, role: roleSchema, scopes: scopesInputSchema.optional(),
        requiresOperator: z.boolean().optional().describe('High-risk operations need X-On-Behalf-Of. Left out: false, or true when you are a token that requires an operator.'),
        expiresAt: z.iso.datetime({ offset: true }).optional().describe('When the token stops working. Left out: never, or your own expiry when you are a token that expires.'),
      }).strict(),
      responses: { 201: { description: 'Created. `token` is shown only in this answer.', schema: tokenView.extend({ token: z.string().describe('pvs_<id>_<secret>') }) } },
      handler: async ({ body }, { principal }) => {
        const p = principalOf(principal);
        const { grantor, ownerUserId } = await callerOf(store, p);
        const now = ctx.now();
        const expiresAt = body.expiresAt ? Date.parse(body.expiresAt) : grantor.expiresAt;
        if (expiresAt !== null && expiresAt <= now) throw new ProblemError('unacceptable', 'expiresAt is in the past', { errors: [{ field: 'body.expiresAt', message: 'in the past', accepted: 'a future instant' }] });
        const scopes = completeScopes(body.scopes, grantor.scopes);
        const requiresOperator = body.requiresOperator ?? grantor.requiresOperator;
        authorizeAccountChange(grantor, { result: { role: body.role, scopes, requiresOperator, expiresAt } });
        const created = createBearerToken(TOKEN_PREFIX);
        const token: TokenRecord = {
          id: `tok_${created.id}`, name: body.name, secretHash: created.hash, role: body.role, scopes, requiresOperator,
          expiresAt, lastUsedAt: null, revokedAt: null, createdBy: p.name, ownerUserId, createdAt: now,
        };
        await ctx.db.write(async (tx) => {
          // The owner's row is held to the end of the transaction, so its disabling cannot slip between this check and the insert.
          if (ownerUserId !== null && !(await store.lockEnabledUser(tx, ownerUserId))) throw new ProblemError('unauthenticated', 'the account this caller acts for is disabled');
          await store.insertToken(tx, token);
          await ctx.audit.append(tx, { ...auditBy(p), category: 'admin', action: 'token.create', entityType: 'serviceToken', entityId: token.id, details: { name: token.name, role: token.role, scopes: token.scopes, requiresOperator, expiresAt: iso(expiresAt), ownerUserId } });
        }, { transaction: true });
        return { status: 201, body: { ...tokenOut(token), token: created.key }, headers: { location: `/api/v1/admin/service-tokens/${token.id}` } };
      },
    }),
    defineOperation({
      operationId: 'listServiceTokens', method: 'GET', path: '/admin/service-tokens', summary: 'List the service tokens whose role and scopes lie within yours (never their secrets)', tags: ['admin'], permission: 'tokens.manage',
      query: z.object({ ...pageQueryShape }),
      responses: { 200: { description: 'A page of tokens, by id.', schema: pageOf(tokenView) } },
      handler: async ({ query }, { principal }) => {
        const { grantor } = await callerOf(store, principalOf(principal));
        const after = query.cursor ? String(decodeCursor(query.cursor, { id: 'string' }).id) : null;
        const rows = await visibleAfter((limit, from) => store.listTokens(limit, from), (t) => holdsWithin(grantor, t), query.limit, after);
        const page = pageAfter(rows, query.limit, (last) => ({ id: last.id }));
        return { status: 200, body: { items: page.items.map(tokenOut), nextCursor: page.nextCursor } };
      },
    }),
    defineOperation({
      operationId: 'revokeServiceToken', method: 'DELETE', path: '/admin/service-tokens/{id}', summary: 'Revoke a service token whose role and scopes lie within yours', tags: ['admin'], permission: 'tokens.manage', highRisk: true,
      params: z.object({ id: idSchema('tok') }),
      responses: { 204: { description: 'Revoked (also when it already was).' } },
      handler: async ({ params }, { principal }) => {
        const p = principalOf(principal);
        const { grantor } = await callerOf(store, p);
        const token = await store.token(params.id);
        if (!token || !holdsWithin(grantor, token)) throw accountNotFound({ kind: 'serviceToken', id: params.id });
        await ctx.db.write(async (tx) => {
          await store.revokeToken(tx, token.id, ctx.now());
          await ctx.audit.append(tx, { ...auditBy(p), category: 'admin', action: 'token.revoke', entityType: 'serviceToken', entityId: token.id, details: { name: token.name, alreadyRevoked: token.revokedAt !== null } });
        }, { transaction: true });
        return { status: 204 };
      },
    }),
  ];
  return ops as AnyRestOperation[];
}

/**
 * The administration of users under /api/v1/admin/users. Every create and
 * change goes through `authorizeAccountChange` (grants.ts): what it makes lies
 * within the caller's own rights, and users holding more than the caller are
 * neither listed nor changeable. Disabling a user ends its sessions and
 * revokes the tokens it owns. Every change writes its audit record in the
 * same transaction.
 */
import { z } from 'zod';
import { hashPassword } from '../../../core/auth/passwords.js';
import { newId } from '../../../core/rest/ids.js';
import { defineOperation } from '../../../core/rest/operation.js';
import { decodeCursor, pageAfter, pageOf, pageQueryShape } from '../../../core/rest/paging.js';
import { auditActor, principalOf } from '../../../core/rest/principal.js';
import { ProblemError } from '../../../core/rest/problem.js';
import { accountNotFound, authorizeAccountChange, completeScopes, holdsWithin } from '../grants.js';
import type { UserRecord } from '../store.js';
import { accountIdOf, passwordSchema, roleSchema, scopesInputSchema, usernameSchema, userOut, userView } from '../views.js';
import { callerOf, visibleAfter, type AccountOperation } from './callers.js';

/** Revoked token ids written into one audit record; past this, only the count. */
const AUDITED_IDS = 100;

export const USER_OPERATIONS: readonly AccountOperation[] = [
  ({ ctx, store, passwordCost }) => defineOperation({
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
        id: newId('usr'), username: body.username, passwordHash: await hashPassword(body.password, passwordCost), role: body.role, scopes,
        disabled: false, createdAt: now, updatedAt: now,
      };
      await ctx.db.write(async (tx) => {
        await store.insertUser(tx, user);
        await ctx.audit.append(tx, { ...auditActor(p), category: 'admin', action: 'user.create', entityType: 'user', entityId: user.id, details: { username: user.username, role: user.role, scopes: user.scopes } });
      }, { transaction: true });
      return { status: 201, body: userOut(user), headers: { location: `/api/v1/admin/users/${user.id}` } };
    },
  }),
  ({ store }) => defineOperation({
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
  ({ ctx, store }) => defineOperation({
    operationId: 'updateUser', method: 'PATCH', path: '/admin/users/{id}', summary: 'Change a user\'s role, scopes (within your own) or disabled flag (disabling ends their sessions and revokes their tokens)', tags: ['admin'], permission: 'users.manage',
    params: z.object({ id: accountIdOf('usr') }),
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
        await ctx.audit.append(tx, { ...auditActor(p), category: 'admin', action: 'user.update', entityType: 'user', entityId: user.id, details: { ...body, sessionsEnded: ended, ...tokens } });
      }, { transaction: true });
      return { status: 200, body: userOut(updated) };
    },
  }),
];

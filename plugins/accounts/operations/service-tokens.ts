/**
 * The administration of service tokens under /api/v1/admin/service-tokens:
 * a token is made within the caller's own rights and limits (grants.ts) and
 * shown once; tokens holding more than the caller are neither listed nor
 * revocable. Every change writes its audit record in the same transaction.
 */
import { z } from 'zod';
import { createBearerToken } from '../../../core/auth/bearer-tokens.js';
import { isoOrNull, nameSchema } from '../../../core/rest/fields.js';
import { defineOperation } from '../../../core/rest/operation.js';
import { decodeCursor, pageAfter, pageOf, pageQueryShape } from '../../../core/rest/paging.js';
import { auditActor, principalOf } from '../../../core/rest/principal.js';
import { ProblemError } from '../../../core/rest/problem.js';
import { TOKEN_PREFIX } from '../authenticator.js';
import { accountNotFound, authorizeAccountChange, completeScopes, holdsWithin } from '../grants.js';
import type { TokenRecord } from '../store.js';
import { accountIdOf, roleSchema, scopesInputSchema, tokenOut, tokenView } from '../views.js';
import { callerOf, visibleAfter, type AccountOperation } from './callers.js';

export const SERVICE_TOKEN_OPERATIONS: readonly AccountOperation[] = [
  ({ ctx, store }) => defineOperation({
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
        await ctx.audit.append(tx, { ...auditActor(p), category: 'admin', action: 'token.create', entityType: 'serviceToken', entityId: token.id, details: { name: token.name, role: token.role, scopes: token.scopes, requiresOperator, expiresAt: isoOrNull(expiresAt), ownerUserId } });
      }, { transaction: true });
      return { status: 201, body: { ...tokenOut(token), token: created.key }, headers: { location: `/api/v1/admin/service-tokens/${token.id}` } };
    },
  }),
  ({ store }) => defineOperation({
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
  ({ ctx, store }) => defineOperation({
    operationId: 'revokeServiceToken', method: 'DELETE', path: '/admin/service-tokens/{id}', summary: 'Revoke a service token whose role and scopes lie within yours', tags: ['admin'], permission: 'tokens.manage', highRisk: true,
    params: z.object({ id: accountIdOf('tok') }),
    responses: { 204: { description: 'Revoked (also when it already was).' } },
    handler: async ({ params }, { principal }) => {
      const p = principalOf(principal);
      const { grantor } = await callerOf(store, p);
      const token = await store.token(params.id);
      if (!token || !holdsWithin(grantor, token)) throw accountNotFound({ kind: 'serviceToken', id: params.id });
      await ctx.db.write(async (tx) => {
        await store.revokeToken(tx, token.id, ctx.now());
        await ctx.audit.append(tx, { ...auditActor(p), category: 'admin', action: 'token.revoke', entityType: 'serviceToken', entityId: token.id, details: { name: token.name, alreadyRevoked: token.revokedAt !== null } });
      }, { transaction: true });
      return { status: 204 };
    },
  }),
];

/** The vault's libraries: create one with its approval policy, list and read them. */
import { z } from 'zod';
import { defineOperation } from '../../../core/rest/operation.js';
import { decodeCursor, pageAfter, pageOf, pageQueryShape } from '../../../core/rest/paging.js';
import { ProblemError } from '../../../core/rest/problem.js';
import { nameSchema } from '../../../core/rest/fields.js';
import { idParams, newId } from '../../../core/rest/ids.js';
import { principalOf } from '../../../core/rest/principal.js';
import type { Library } from '../store.js';
import { scopeOf, type VaultOperation } from './deps.js';
import { libraryOut, libraryView, policySchema, textSchema } from './views.js';

export const LIBRARY_OPERATIONS: readonly VaultOperation[] = [
  ({ ctx, store, audit, change }) => defineOperation({
    operationId: 'createLibrary', method: 'POST', path: '/libraries', summary: 'Create a library with its approval policy', tags: ['vault'], permission: 'libraries.manage',
    body: z.object({
      name: nameSchema, description: textSchema.default(''), approvalPolicy: policySchema.default({ mode: 'approvals', required: 1 }),
      approvers: z.array(z.string().min(1).max(64)).max(100).default([]).describe('User or token names allowed to approve; empty: anyone with approvals.decide in scope.'),
    }).strict(),
    responses: { 201: { description: 'Created.', schema: libraryView } },
    handler: async ({ body }, { principal }) => {
      const p = principalOf(principal);
      if (await store.libraryByName(body.name)) throw new ProblemError('conflict', `a library named ${body.name} exists`, { errors: [{ field: 'body.name', message: 'already taken' }] });
      const policy = body.approvalPolicy;
      if (policy.mode === 'approvals' && body.approvers.length > 0 && new Set(body.approvers.map((a) => a.toLowerCase())).size < policy.required) {
        throw new ProblemError('unacceptable', `the policy needs ${policy.required} different approvers but only ${body.approvers.length} are named`, { errors: [{ field: 'body.approvers', message: 'fewer approvers than required' }] });
      }
      const library: Library = { id: newId('lib'), name: body.name, description: body.description, policy, approvers: [...new Set(body.approvers)], createdBy: p.name, createdAt: ctx.now() };
      await change(async (tx) => {
        await store.insertLibrary(tx, library);
        await audit(tx, p, { category: 'vault', action: 'library.create', entityType: 'library', entityId: library.id, details: { name: library.name, approvalPolicy: policy, approvers: library.approvers } });
      });
      return { status: 201, body: libraryOut(library), headers: { location: `/api/v1/libraries/${library.id}` } };
    },
  }),
  ({ store }) => defineOperation({
    operationId: 'listLibraries', method: 'GET', path: '/libraries', summary: 'List the libraries in your scope', tags: ['vault'], permission: 'libraries.read',
    query: z.object({ ...pageQueryShape }),
    responses: { 200: { description: 'A page of libraries, by id.', schema: pageOf(libraryView) } },
    handler: async ({ query }, { principal }) => {
      const after = query.cursor ? String(decodeCursor(query.cursor, { id: 'string' }).id) : null;
      const rows = await store.listLibraries(scopeOf(principalOf(principal)), query.limit + 1, after);
      const result = pageAfter(rows, query.limit, (l) => ({ id: l.id }));
      return { status: 200, body: { items: result.items.map(libraryOut), nextCursor: result.nextCursor } };
    },
  }),
  ({ visibleLibrary }) => defineOperation({
    operationId: 'getLibrary', method: 'GET', path: '/libraries/{id}', summary: 'One library', tags: ['vault'], permission: 'libraries.read',
    params: idParams('lib'), responses: { 200: { description: 'The library.', schema: libraryView } },
    handler: async ({ params }, { principal }) => ({ status: 200, body: libraryOut(await visibleLibrary(principalOf(principal), params.id)) }),
  }),
];

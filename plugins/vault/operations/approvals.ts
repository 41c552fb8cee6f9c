/** The vault's approvals: list and read them, and decide (approve or reject) under separation of duties. */
import { z } from 'zod';
import { defineOperation } from '../../../core/rest/operation.js';
import { decodeCursor, pageAfter, pageOf, pageQueryShape } from '../../../core/rest/paging.js';
import { ProblemError } from '../../../core/rest/problem.js';
import { idOf, idParams } from '../../../core/rest/ids.js';
import { principalOf } from '../../../core/rest/principal.js';
import { checkDecider } from '../duties.js';
import type { Approval, Version } from '../store.js';
import { scopeOf, stateConflict, type VaultOperation } from './deps.js';
import { approvalStateSchema, approvalView, textSchema, versionOut, versionView } from './views.js';

export const APPROVAL_OPERATIONS: readonly VaultOperation[] = [
  ({ store, approvalOut }) => defineOperation({
    operationId: 'listApprovals', method: 'GET', path: '/approvals', summary: 'Approvals in your scope, newest first', tags: ['approvals'], permission: 'approvals.read',
    query: z.object({ ...pageQueryShape, state: approvalStateSchema.optional(), libraryId: idOf('lib').optional() }),
    responses: { 200: { description: 'A page of approvals.', schema: pageOf(approvalView) } },
    handler: async ({ query }, { principal }) => {
      const cursor = query.cursor ? decodeCursor(query.cursor, { createdAt: 'number', id: 'string' }) : null;
      const rows = await store.listApprovals(scopeOf(principalOf(principal)), query.state, query.libraryId, query.limit + 1, cursor ? { createdAt: Number(cursor.createdAt), id: String(cursor.id) } : null);
      const result = pageAfter(rows, query.limit, (a) => ({ createdAt: a.createdAt, id: a.id }));
      return { status: 200, body: { items: await Promise.all(result.items.map(approvalOut)), nextCursor: result.nextCursor } };
    },
  }),
  ({ store, visibleVersion, approvalOut }) => defineOperation({
    operationId: 'getApproval', method: 'GET', path: '/approvals/{id}', summary: 'One approval', tags: ['approvals'], permission: 'approvals.read',
    params: idParams('apr'), responses: { 200: { description: 'The approval.', schema: approvalView } },
    handler: async ({ params }, { principal }) => {
      const approval = await store.approval(params.id);
      if (!approval) throw new ProblemError('not-found', `no approval ${params.id}`);
      await visibleVersion(principalOf(principal), approval.versionId).catch(() => {
        throw new ProblemError('not-found', `no approval ${params.id}`);
      });
      return { status: 200, body: await approvalOut(approval) };
    },
  }),
  ({ ctx, store, audit, change, published, visibleVersion, approvalOut }) => defineOperation({
    operationId: 'decideApproval', method: 'POST', path: '/approvals/{id}/decide', summary: 'Approve or reject; the uploader and the submitter may not approve', tags: ['approvals'], permission: 'approvals.decide',
    params: idParams('apr'), body: z.object({ decision: z.enum(['approve', 'reject']), comment: textSchema.default('') }).strict(),
    responses: { 200: { description: 'The approval after the decision, and its version.', schema: z.object({ approval: approvalView, version: versionView }) } },
    handler: async ({ params, body }, { principal }) => {
      const p = principalOf(principal);
      const approval = await store.approval(params.id);
      const visible = approval ? await visibleVersion(p, approval.versionId).catch(() => undefined) : undefined;
      if (!approval || !visible) throw new ProblemError('not-found', `no approval ${params.id}`);
      const { version, library } = visible;
      if (approval.state !== 'pending') throw stateConflict(`approval ${approval.id}`, approval.state, 'a pending approval');
      checkDecider(p, version, library, approval);
      // An approval is an electronic signature: a person signed in through the provider must have signed in there recently (docs/identity.md, "Approvals").
      if (body.decision === 'approve') ctx.services.find('accounts.signature')?.requireRecentSignIn(p);
      const now = ctx.now();
      await change(async (tx) => {
        if (!(await store.insertDecision(tx, approval.id, { approver: p.name, onBehalfOf: p.onBehalfOf, decision: body.decision, comment: body.comment, decidedAt: now }))) {
          throw new ProblemError('conflict', `${p.onBehalfOf ? `${p.name} or ${p.onBehalfOf}` : p.name} has already decided on this approval`);
        }
        await audit(tx, p, { category: 'approval', action: 'approval.decide', entityType: 'approval', entityId: approval.id, details: { versionId: version.id, decision: body.decision, comment: body.comment.slice(0, 500) } });
        if (body.decision === 'reject') {
          await store.closeApproval(tx, approval.id, 'rejected', now);
          if (!(await store.transition(tx, version.id, ['submitted'], 'draft', { submittedAt: null, submittedBy: null, submittedOperator: null }))) throw stateConflict(`version ${version.number}`, 'no longer submitted', 'a submitted version');
          await audit(tx, p, { category: 'vault', action: 'version.reject', entityType: 'version', entityId: version.id, details: { number: version.number, approvalId: approval.id } });
        } else if ((await store.countApprovals(tx, approval.id)) >= approval.required) {
          await store.closeApproval(tx, approval.id, 'approved', now);
          if (!(await store.transition(tx, version.id, ['submitted'], 'published', { publishedAt: now }))) throw stateConflict(`version ${version.number}`, 'no longer submitted', 'a submitted version');
          await audit(tx, p, { category: 'vault', action: 'version.publish', entityType: 'version', entityId: version.id, details: { number: version.number, approvalId: approval.id } });
          await published(tx, version, visible.program);
        }
      });
      ctx.services.find('webhooks.outbox')?.kick();
      return { status: 200, body: { approval: await approvalOut((await store.approval(approval.id)) as Approval), version: versionOut((await store.version(version.id)) as Version, library.id) } };
    },
  }),
];

/**
 * Drift items: list and read them with the NC-aware diff, and triage them
 * (accept: a new draft version, never a silent overwrite of the vault;
 * reject: the expected file deployed back).
 */
import { z } from 'zod';
import { idOf } from '../../../core/rest/ids.js';
import { defineOperation } from '../../../core/rest/operation.js';
import { decodeCursor, encodeCursor, pageOf, pageQueryShape } from '../../../core/rest/paging.js';
import { principalOf } from '../../../core/rest/principal.js';
import { ProblemError } from '../../../core/rest/problem.js';
import { DRIFT_STATUSES, type DriftItem, type MirrorRepository } from '../store.js';
import type { MirrorOperation } from './deps.js';
import { driftDetailView, driftView, noteSchema } from './views.js';

/** 409 unless the drift item is open. */
function checkOpen(d: DriftItem): void {
  if (d.status !== 'open') throw new ProblemError('state-conflict', `drift item ${d.id} is ${d.status}; only an open one is accepted or rejected`, { extensions: { state: d.status } });
}

/** The machine's content of a drift item (its snapshot), or 409 when the file is missing. */
async function foundContent(repo: MirrorRepository, d: DriftItem): Promise<Buffer> {
  const content = d.foundSha256 ? await repo.content(d.foundSha256) : undefined;
  if (!content) throw new ProblemError('state-conflict', `drift item ${d.id}: the file is missing on the machine, so there is no content to accept; reject it to deploy the expected file back`, { extensions: { state: d.status } });
  return content;
}

export const DRIFT_OPERATIONS: readonly MirrorOperation[] = [
  ({ repo, fleet, driftOut }) => defineOperation({
    operationId: 'listDrift', method: 'GET', path: '/drift', summary: 'Drift items, newest first; filter by status and machine', tags: ['mirror'], permission: 'fleet.read',
    query: z.object({ ...pageQueryShape, status: z.enum(DRIFT_STATUSES).optional(), machineId: idOf('mch').optional() }),
    responses: { 200: { description: 'A page of drift items.', schema: pageOf(driftView) } },
    handler: async ({ query }, { principal }) => {
      const p = principalOf(principal);
      const cursor = query.cursor ? decodeCursor(query.cursor, { openedAt: 'number', id: 'string' }) : null;
      const rows = await repo.listDrift({ ...(query.status ? { status: query.status } : {}), ...(query.machineId ? { machineId: query.machineId } : {}) }, query.limit + 1, cursor ? { openedAt: Number(cursor.openedAt), id: String(cursor.id) } : null);
      const pageRows = rows.slice(0, query.limit);
      const items: z.infer<typeof driftView>[] = [];
      for (const d of pageRows) if (await fleet().machine(d.machineId, p)) items.push(await driftOut(d));
      const last = pageRows[pageRows.length - 1];
      return { status: 200, body: { items, nextCursor: rows.length > query.limit && last ? encodeCursor({ openedAt: last.openedAt, id: last.id }) : null } };
    },
  }),
  ({ repo, deployments, vault, driftOf, driftOut }) => defineOperation({
    operationId: 'getDrift', method: 'GET', path: '/drift/{id}', summary: 'One drift item with the NC-aware diff of the expected file against the machine\'s', tags: ['mirror'], permission: 'fleet.read',
    params: z.object({ id: idOf('dft') }), responses: { 200: { description: 'The drift item.', schema: driftDetailView } },
    handler: async ({ params }, { principal }) => {
      const d = await driftOf(params.id, principalOf(principal));
      const [expected, found] = await Promise.all([deployments().content(d.expectedSha256), d.foundSha256 ? repo.content(d.foundSha256) : Promise.resolve(undefined)]);
      const diff = expected && found ? vault().diff(expected, found) : null;
      return { status: 200, body: { ...(await driftOut(d)), diff: diff ? { identical: diff.identical, summary: diff.summary as unknown as Record<string, unknown>, unified: diff.unified } : null } };
    },
  }),
  ({ ctx, repo, vault, audit, driftOf, driftOut }) => defineOperation({
    operationId: 'acceptDrift', method: 'POST', path: '/drift/{id}/accept', summary: 'Accept the machine\'s content: it becomes a new draft version of the program, which still needs submitting and approval', tags: ['mirror'], permission: 'drift.manage',
    params: z.object({ id: idOf('dft') }), body: z.object({ note: noteSchema }).strict().default({ note: '' }),
    responses: { 200: { description: 'Accepted; resultVersionId is the new draft.', schema: driftView } },
    handler: async ({ params, body }, { principal }) => {
      const p = principalOf(principal);
      const d = await driftOf(params.id, p);
      checkOpen(d);
      const assignment = await ctx.services.get('assignments').assignment(d.assignmentId, p);
      if (!assignment) throw new ProblemError('not-found', `assignment ${d.assignmentId} of drift item ${d.id} is not visible to you`);
      const content = await foundContent(repo, d);
      const f = await repo.file(d.fileId);
      await ctx.db.write(async (tx) => {
        const version = await vault().addDraft(tx, { programId: assignment.programId, content, notes: `from machine file ${f?.dir ?? ''}${f?.name ?? ''} (drift ${d.id})${body.note ? `: ${body.note}` : ''}`.slice(0, 4000), author: p.name, authorOperator: p.onBehalfOf, now: ctx.now() });
        if (!(await repo.decide(tx, d.id, ['open'], 'accepted', { by: p.name, at: ctx.now(), note: body.note, versionId: version.id }))) {
          throw new ProblemError('state-conflict', `drift item ${d.id} was decided meanwhile`);
        }
        await audit(tx, p, 'drift.accept', 'drift', d.id, d.machineId, { versionId: version.id, number: version.number, sha256: version.sha256, programId: assignment.programId, note: body.note });
      }, { transaction: true });
      return { status: 200, body: await driftOut((await repo.drift(d.id)) as DriftItem) };
    },
  }),
  ({ ctx, repo, deployments, audit, driftOf, driftOut }) => defineOperation({
    operationId: 'rejectDrift', method: 'POST', path: '/drift/{id}/reject', summary: 'Reject the machine\'s content: the expected file is deployed back and verified', tags: ['mirror'], permission: 'drift.manage', highRisk: true,
    params: z.object({ id: idOf('dft') }), body: z.object({ note: noteSchema }).strict().default({ note: '' }),
    responses: { 200: { description: 'Rejected; resultDeploymentId puts the expected file back.', schema: driftView } },
    handler: async ({ params, body }, { principal }) => {
      const p = principalOf(principal);
      const d = await driftOf(params.id, p);
      checkOpen(d);
      const content = await deployments().content(d.expectedSha256);
      const f = await repo.file(d.fileId);
      if (!content || !f) throw new ProblemError('state-conflict', `drift item ${d.id}: the expected content is not kept; deploy the version again`);
      const { deploymentId } = await deployments().deployFile({
        machineId: d.machineId, dir: f.dir, fileName: f.name, content, versionId: d.expectedVersionId, assignmentId: d.assignmentId, purpose: 'drift-reject', principal: p,
        details: { driftId: d.id, note: body.note },
      });
      await ctx.db.write(async (tx) => {
        await repo.decide(tx, d.id, ['open'], 'rejected', { by: p.name, at: ctx.now(), note: body.note, deploymentId });
        await audit(tx, p, 'drift.reject', 'drift', d.id, d.machineId, { deploymentId, note: body.note });
      }, { transaction: true });
      return { status: 200, body: await driftOut((await repo.drift(d.id)) as DriftItem) };
    },
  }),
];

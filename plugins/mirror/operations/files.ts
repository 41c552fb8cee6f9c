/**
 * The files the mirror has seen on a machine: list and read them and their
 * snapshots, put a snapshot back, and adopt files not under management as
 * programs with a draft version.
 */
import { z } from 'zod';
import { nameSchema } from '../../../core/rest/fields.js';
import { idOf } from '../../../core/rest/ids.js';
import { defineOperation, type RestPrincipal } from '../../../core/rest/operation.js';
import { decodeCursor, encodeCursor, pageOf, pageQueryShape } from '../../../core/rest/paging.js';
import { principalOf } from '../../../core/rest/principal.js';
import { ProblemError } from '../../../core/rest/problem.js';
import { CONTROLLERS } from '../../../core/roles/programs/controllers.js';
import type { MirrorFile } from '../store.js';
import type { MirrorDeps, MirrorOperation } from './deps.js';
import { fileOut, fileView, noteSchema, snapshotOut, snapshotView } from './views.js';

/** Files adopted by one adopt-all at most. */
const MAX_ADOPT = 500;

/** Whether a file is under management: a release or trial names it, or it was adopted. */
async function managed(d: MirrorDeps, f: MirrorFile): Promise<boolean> {
  if (f.adoptedProgramId) return true;
  const { expected } = await d.deployments().expectedOn(f.machineId);
  return expected.some((e) => e.fileName === f.name && e.dir.replace(/[\\/]+$/, '') === f.dir.replace(/[\\/]+$/, ''));
}

/** Adopts one file: a program named `name` with a draft of its content; or why not. */
async function adoptOne(d: MirrorDeps, p: RestPrincipal, f: MirrorFile, library: { id: string; name: string }, name: string, controller: string): Promise<{ programId: string; versionId: string } | string> {
  const { ctx, repo, vault } = d;
  if (!f.sha256) return 'its content was not read yet (request a check-in)';
  const content = await repo.content(f.sha256);
  if (!content) return 'its content was not kept (larger than the mirror keeps)';
  return ctx.db.write(async (tx) => {
    const program = await vault().addProgram(tx, { libraryId: library.id, name, controller, description: `Adopted from ${f.dir}${f.name} on machine ${f.machineId}`, createdBy: p.name, now: ctx.now() });
    if (program === 'name-taken') return `library ${library.name} has a program named ${name}`;
    const version = await vault().addDraft(tx, { programId: program.id, content, notes: `adopted from machine file ${f.id}`, author: p.name, authorOperator: p.onBehalfOf, now: ctx.now() });
    await repo.adopted(tx, f.id, program.id);
    await d.audit(tx, p, 'file.adopt', 'machine-file', f.id, f.machineId, { programId: program.id, versionId: version.id, name, libraryId: library.id, sha256: version.sha256 });
    return { programId: program.id, versionId: version.id };
  }, { transaction: true });
}

const adoptedItem = z.object({ fileId: z.string(), name: z.string(), programId: z.string(), versionId: z.string() });
const skippedItem = z.object({ fileId: z.string(), name: z.string(), reason: z.string() });

export const FILE_OPERATIONS: readonly MirrorOperation[] = [
  ({ repo, machineOf }) => defineOperation({
    operationId: 'listMirroredFiles', method: 'GET', path: '/machine-files', summary: 'The files the mirror has seen on a machine', tags: ['mirror'], permission: 'fleet.read',
    query: z.object({ ...pageQueryShape, machineId: idOf('mch') }), responses: { 200: { description: 'A page of files.', schema: pageOf(fileView) } },
    handler: async ({ query }, { principal }) => {
      await machineOf(query.machineId, principalOf(principal));
      const after = query.cursor ? String(decodeCursor(query.cursor, { id: 'string' }).id) : null;
      const rows = await repo.listFiles(query.machineId, query.limit + 1, after);
      const items = rows.slice(0, query.limit);
      const last = items[items.length - 1];
      return { status: 200, body: { items: items.map(fileOut), nextCursor: rows.length > query.limit && last ? encodeCursor({ id: last.id }) : null } };
    },
  }),
  ({ fileOf }) => defineOperation({
    operationId: 'getMachineFile', method: 'GET', path: '/machine-files/{id}', summary: 'One machine file as the mirror last saw it', tags: ['mirror'], permission: 'fleet.read',
    params: z.object({ id: idOf('mfl') }), responses: { 200: { description: 'The file.', schema: fileView } },
    handler: async ({ params }, { principal }) => ({ status: 200, body: fileOut(await fileOf(params.id, principalOf(principal))) }),
  }),
  ({ repo, fileOf }) => defineOperation({
    operationId: 'listSnapshots', method: 'GET', path: '/machine-files/{id}/snapshots', summary: 'Every content the mirror has seen in this file, newest first', tags: ['mirror'], permission: 'fleet.read',
    params: z.object({ id: idOf('mfl') }), query: z.object(pageQueryShape), responses: { 200: { description: 'A page of snapshots.', schema: pageOf(snapshotView) } },
    handler: async ({ params, query }, { principal }) => {
      const f = await fileOf(params.id, principalOf(principal));
      const cursor = query.cursor ? decodeCursor(query.cursor, { takenAt: 'number', id: 'string' }) : null;
      const rows = await repo.snapshots(f.id, query.limit + 1, cursor ? { takenAt: Number(cursor.takenAt), id: String(cursor.id) } : null);
      const items = rows.slice(0, query.limit);
      const last = items[items.length - 1];
      return { status: 200, body: { items: items.map(snapshotOut), nextCursor: rows.length > query.limit && last ? encodeCursor({ takenAt: last.takenAt, id: last.id }) : null } };
    },
  }),
  ({ repo, deployments, fileOf }) => defineOperation({
    operationId: 'restoreSnapshot', method: 'POST', path: '/machine-files/{id}/restore', summary: 'Put a snapshot back on the machine, verified by reading it back', tags: ['mirror'], permission: 'drift.manage', highRisk: true,
    params: z.object({ id: idOf('mfl') }), body: z.object({ snapshotId: idOf('snp'), note: noteSchema }).strict(),
    responses: { 202: { description: 'The deployment that restores it; poll GET /deployments/{id}.', schema: z.object({ fileId: z.string(), snapshotId: z.string(), deploymentId: z.string() }) } },
    handler: async ({ params, body }, { principal }) => {
      const p = principalOf(principal);
      const f = await fileOf(params.id, p);
      const snap = await repo.snapshot(body.snapshotId);
      if (!snap || snap.fileId !== f.id) throw new ProblemError('not-found', `no snapshot ${body.snapshotId} of file ${f.id}`, { errors: [{ field: 'body.snapshotId', message: 'not a snapshot of this file' }] });
      const content = await repo.content(snap.sha256);
      if (!content) throw new ProblemError('state-conflict', `snapshot ${snap.id}: its content is not kept`);
      const { deploymentId } = await deployments().deployFile({
        machineId: f.machineId, dir: f.dir, fileName: f.name, content, versionId: null, assignmentId: null, purpose: 'restore', principal: p,
        details: { fileId: f.id, snapshotId: snap.id, note: body.note },
      });
      return { status: 202, body: { fileId: f.id, snapshotId: snap.id, deploymentId }, headers: { location: `/api/v1/deployments/${deploymentId}` } };
    },
  }),
  (d) => defineOperation({
    operationId: 'adoptFile', method: 'POST', path: '/machine-files/{id}/adopt', summary: 'Make a file not under management a program with a draft version of its content', tags: ['mirror'], permission: 'drift.manage',
    params: z.object({ id: idOf('mfl') }),
    body: z.object({ libraryId: idOf('lib'), name: nameSchema.optional().describe('The program\'s name; default the file name.'), controller: z.enum(CONTROLLERS).default('other') }).strict(),
    responses: { 201: { description: 'The new program and its draft version.', schema: z.object({ fileId: z.string(), programId: z.string(), versionId: z.string() }) } },
    handler: async ({ params, body }, { principal }) => {
      const p = principalOf(principal);
      const f = await d.fileOf(params.id, p);
      const library = await d.libraryOf(body.libraryId, p);
      if (await managed(d, f)) throw new ProblemError('state-conflict', `file ${f.name} is already under management (released by an assignment, or adopted)`, { extensions: { state: 'managed' } });
      const result = await adoptOne(d, p, f, library, body.name ?? f.name, body.controller);
      if (typeof result === 'string') throw new ProblemError('conflict', `file ${f.name}: ${result}`, { errors: [{ field: body.name ? 'body.name' : 'path.id', message: result }] });
      return { status: 201, body: { fileId: f.id, ...result }, headers: { location: `/api/v1/versions/${result.versionId}` } };
    },
  }),
  (d) => defineOperation({
    operationId: 'adoptAllFiles', method: 'POST', path: '/machines/{id}/adopt-all', summary: 'Make every file on the machine not under management a program with a draft version', tags: ['mirror'], permission: 'drift.manage', highRisk: true,
    params: z.object({ id: idOf('mch') }), body: z.object({ libraryId: idOf('lib'), controller: z.enum(CONTROLLERS).default('other') }).strict(),
    responses: {
      200: { description: 'What was adopted, and what was not and why.', schema: z.object({ machineId: z.string(), adopted: z.array(adoptedItem), skipped: z.array(skippedItem) }) },
    },
    handler: async ({ params, body }, { principal }) => {
      const p = principalOf(principal);
      const m = await d.machineOf(params.id, p);
      const library = await d.libraryOf(body.libraryId, p);
      const adopted: z.infer<typeof adoptedItem>[] = [];
      const skipped: z.infer<typeof skippedItem>[] = [];
      for (const f of await d.repo.filesOf(m.id)) {
        if (!f.present || (await managed(d, f))) continue;
        if (adopted.length >= MAX_ADOPT) {
          skipped.push({ fileId: f.id, name: f.name, reason: `at most ${MAX_ADOPT} files are adopted at once; call again` });
          continue;
        }
        const result = await adoptOne(d, p, f, library, f.name, body.controller);
        if (typeof result === 'string') skipped.push({ fileId: f.id, name: f.name, reason: result });
        else adopted.push({ fileId: f.id, name: f.name, ...result });
      }
      return { status: 200, body: { machineId: m.id, adopted, skipped } };
    },
  }),
];

/** The vault's programs: create one in a library, list, read, rename and delete them. */
import { z } from 'zod';
import { defineOperation } from '../../../core/rest/operation.js';
import { decodeCursor, pageAfter, pageOf, pageQueryShape } from '../../../core/rest/paging.js';
import { ProblemError } from '../../../core/rest/problem.js';
import { nameSchema } from '../../../core/rest/fields.js';
import { idOf, idParams, newId } from '../../../core/rest/ids.js';
import { principalOf } from '../../../core/rest/principal.js';
import { CONTROLLERS } from '../../../core/roles/programs/controllers.js';
import { defaultFileName, fileNameTemplateSchema } from '../../../core/roles/programs/file-name-template.js';
import type { Program } from '../store.js';
import { scopeOf, stateConflict, type VaultOperation } from './deps.js';
import { programOut, programView, textSchema } from './views.js';

const fileNameTemplate = fileNameTemplateSchema.describe('The file name on its machines, a template its assignments take unless they name their own (docs/programs-assignments.md); by default its program number when its name starts with one (O1234), else {program}.');

export const PROGRAM_OPERATIONS: readonly VaultOperation[] = [
  ({ ctx, store, audit, change, visibleLibrary }) => defineOperation({
    operationId: 'createProgram', method: 'POST', path: '/programs', summary: 'Create a program in a library', tags: ['vault'], permission: 'programs.write',
    body: z.object({ libraryId: idOf('lib'), name: nameSchema, controller: z.enum(CONTROLLERS), description: textSchema.default(''), fileName: fileNameTemplate.optional() }).strict(),
    responses: { 201: { description: 'Created.', schema: programView } },
    handler: async ({ body }, { principal }) => {
      const p = principalOf(principal);
      const library = await visibleLibrary(p, body.libraryId, 'body.libraryId');
      if (await store.programByName(library.id, body.name)) {
        throw new ProblemError('conflict', `library ${library.name} has a program named ${body.name}`, { errors: [{ field: 'body.name', message: 'already taken in this library' }] });
      }
      const now = ctx.now();
      const program: Program = { id: newId('prg'), libraryId: library.id, name: body.name, controller: body.controller, description: body.description, fileName: body.fileName ?? defaultFileName(body.name), createdBy: p.name, createdAt: now, updatedAt: now };
      await change(async (tx) => {
        await store.insertProgram(tx, program);
        await audit(tx, p, { category: 'vault', action: 'program.create', entityType: 'program', entityId: program.id, details: { libraryId: library.id, name: program.name, controller: program.controller, fileName: program.fileName } });
      });
      return { status: 201, body: programOut(program), headers: { location: `/api/v1/programs/${program.id}` } };
    },
  }),
  ({ store }) => defineOperation({
    operationId: 'listPrograms', method: 'GET', path: '/programs', summary: 'List programs in your scope', tags: ['vault'], permission: 'programs.read',
    query: z.object({ ...pageQueryShape, libraryId: idOf('lib').optional() }),
    responses: { 200: { description: 'A page of programs, by id.', schema: pageOf(programView) } },
    handler: async ({ query }, { principal }) => {
      const after = query.cursor ? String(decodeCursor(query.cursor, { id: 'string' }).id) : null;
      const rows = await store.listPrograms(scopeOf(principalOf(principal)), query.libraryId, query.limit + 1, after);
      const result = pageAfter(rows, query.limit, (x) => ({ id: x.id }));
      return { status: 200, body: { items: result.items.map(programOut), nextCursor: result.nextCursor } };
    },
  }),
  ({ visibleProgram }) => defineOperation({
    operationId: 'getProgram', method: 'GET', path: '/programs/{id}', summary: 'One program', tags: ['vault'], permission: 'programs.read',
    params: idParams('prg'), responses: { 200: { description: 'The program.', schema: programView } },
    handler: async ({ params }, { principal }) => ({ status: 200, body: programOut((await visibleProgram(principalOf(principal), params.id)).program) }),
  }),
  ({ ctx, store, audit, change, visibleProgram }) => defineOperation({
    operationId: 'updateProgram', method: 'PATCH', path: '/programs/{id}', summary: 'Rename a program or change its description, controller or file name', tags: ['vault'], permission: 'programs.write',
    params: idParams('prg'), body: z.object({ name: nameSchema.optional(), controller: z.enum(CONTROLLERS).optional(), description: textSchema.optional(), fileName: fileNameTemplate.optional() }).strict(),
    responses: { 200: { description: 'Updated.', schema: programView } },
    handler: async ({ params, body }, { principal }) => {
      const p = principalOf(principal);
      const { program } = await visibleProgram(p, params.id);
      if (body.name && body.name.toLowerCase() !== program.name.toLowerCase() && (await store.programByName(program.libraryId, body.name))) {
        throw new ProblemError('conflict', `the library has a program named ${body.name}`, { errors: [{ field: 'body.name', message: 'already taken in this library' }] });
      }
      const updated: Program = { ...program, ...(body.name ? { name: body.name } : {}), ...(body.controller ? { controller: body.controller } : {}), ...(body.description !== undefined ? { description: body.description } : {}), ...(body.fileName ? { fileName: body.fileName } : {}), updatedAt: ctx.now() };
      await change(async (tx) => {
        await store.updateProgram(tx, updated);
        await audit(tx, p, { category: 'vault', action: 'program.update', entityType: 'program', entityId: program.id, details: { ...body } });
      });
      return { status: 200, body: programOut(updated) };
    },
  }),
  ({ store, audit, change, visibleProgram }) => defineOperation({
    operationId: 'deleteProgram', method: 'DELETE', path: '/programs/{id}', summary: 'Delete a program that has no published version', tags: ['vault'], permission: 'programs.write', highRisk: true,
    params: idParams('prg'), responses: { 204: { description: 'Deleted with its versions.' } },
    handler: async ({ params }, { principal }) => {
      const p = principalOf(principal);
      const { program } = await visibleProgram(p, params.id);
      if ((await store.countPublished(program.id)) > 0) throw stateConflict(`program ${program.name}`, 'published', 'no published version (make them obsolete first)');
      await change(async (tx) => {
        await store.deleteProgram(tx, program.id);
        await audit(tx, p, { category: 'vault', action: 'program.delete', entityType: 'program', entityId: program.id, details: { name: program.name, libraryId: program.libraryId } });
      });
      return { status: 204 };
    },
  }),
];

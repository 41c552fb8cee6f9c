/** The vault's NC-aware diff of two versions of a program. docs/nc-diff.md. */
import { z } from 'zod';
import { GatewayError } from '../../../core/interfaces/errors.js';
import { defineOperation } from '../../../core/rest/operation.js';
import { ProblemError } from '../../../core/rest/problem.js';
import { idOf, idParams } from '../../../core/rest/ids.js';
import { principalOf } from '../../../core/rest/principal.js';
import { diffPrograms } from '../nc/index.js';
import { EVERY_LINE } from '../service.js';
import { DIALECTS } from '../nc/options.js';
import type { VaultOperation } from './deps.js';
import { diffView } from './views.js';

export const DIFF_OPERATIONS: readonly VaultOperation[] = [
  ({ store, visibleProgram }) => defineOperation({
    operationId: 'diffVersions', method: 'GET', path: '/programs/{id}/diff', summary: 'NC-aware diff of two versions: hunks, what changes on the machine, and the unified text', tags: ['vault'], permission: 'versions.read',
    description: 'Blocks are compared after canonicalisation (block numbers, comments, whitespace, case, G01=G1, X3.100=X3.1); see docs/nc-diff.md for the rules.',
    params: idParams('prg'),
    query: z.object({
      from: idOf('ver'), to: idOf('ver'), format: z.enum(['json', 'unified']).default('json'), dialect: z.enum(DIALECTS).default('auto'),
      context: z.coerce.number().int().min(0).max(20).default(3),
      compare: z.enum(['blocks', 'lines']).default('blocks').describe('blocks: canonical blocks, as docs/nc-diff.md says (comment-only and blank lines are not compared); lines: every line as written, comment-only and blank lines included, as diff -u compares (what changes on the machine is read the same way).'),
    }),
    responses: {
      200: { description: 'format=json: the diff; format=unified: the plain unified text diff (text/plain).', schema: diffView, also: [{ contentType: 'text/plain', schema: z.string() }] },
    },
    handler: async ({ params, query }, { principal }) => {
      const p = principalOf(principal);
      const { program } = await visibleProgram(p, params.id);
      const side = async (field: 'from' | 'to', id: string) => {
        const version = await store.version(id);
        if (!version || version.programId !== program.id) {
          throw new ProblemError('not-found', `no version ${id} of program ${program.id}`, { errors: [{ field: `query.${field}`, message: 'not a version of this program' }] });
        }
        return { version, content: (await store.content(id)) as Buffer };
      };
      const from = await side('from', query.from);
      const to = await side('to', query.to);
      let diff;
      try {
        // Every line as written: no rule of the canonical form, so a reader sees every line that differs.
        diff = diffPrograms(from.content, to.content, { dialect: query.dialect, context: query.context, unified: true, ...(query.compare === 'lines' ? { ignore: EVERY_LINE } : {}) });
      } catch (err) {
        if (err instanceof GatewayError) throw new ProblemError('unacceptable', err.message);
        throw err;
      }
      if (query.format === 'unified') return { status: 200, body: Buffer.from(diff.unified ?? ''), headers: { 'content-type': 'text/plain; charset=utf-8' } };
      const sideOut = (s: typeof from, info: typeof diff.from) => ({ versionId: s.version.id, number: s.version.number, ...info });
      return { status: 200, body: { ...diff, from: sideOut(from, diff.from), to: sideOut(to, diff.to) } };
    },
  }),
];

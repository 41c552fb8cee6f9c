/** The program files on a machine, read through its gateway now. */
import { z } from 'zod';
import { iso } from '../../../core/rest/fields.js';
import { idParams } from '../../../core/rest/ids.js';
import { defineOperation } from '../../../core/rest/operation.js';
import { principalOf } from '../../../core/rest/principal.js';
import type { GatewayRecord } from '../store.js';
import type { FleetOperation } from './deps.js';
import { fileView } from './views.js';

export const FILE_OPERATIONS: readonly FleetOperation[] = [
  ({ ctx, repo, through, visibleMachine }) => defineOperation({
    operationId: 'listMachineFiles', method: 'GET', path: '/machines/{id}/files', summary: 'The program files on the machine, read through its gateway now', tags: ['fleet'], permission: 'fleet.read',
    params: idParams('mch'), query: z.object({ dir: z.string().min(1).max(1024).optional().describe('Directory; the machine\'s program directory by default.') }),
    responses: { 200: { description: 'The files.', schema: z.object({ machineId: z.string(), dir: z.string().nullable(), files: z.array(fileView), readAt: z.string() }) } },
    handler: async ({ params, query }, { principal }) => {
      const m = await visibleMachine(principalOf(principal), params.id);
      const g = (await repo.gateway(m.gatewayId)) as GatewayRecord;
      const dir = query.dir ?? (m.programDir || undefined);
      const files = await through(g, (link) => link.listPrograms(m.machineId, dir));
      return {
        status: 200,
        body: {
          machineId: m.id, dir: dir ?? null, readAt: iso(ctx.now()),
          files: files.map((f) => ({ dir: f.dir, name: f.name, size: f.size, ...(f.modified !== undefined ? { modified: iso(f.modified) } : {}), ...(f.comment !== undefined ? { comment: f.comment } : {}) })),
        },
      };
    },
  }),
];

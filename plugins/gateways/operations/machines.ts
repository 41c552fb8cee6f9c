/** The fleet's machines: list and read them, and the service's settings for one (program directory, transform profile, mirror). */
import { z } from 'zod';
import { idOf, idParams } from '../../../core/rest/ids.js';
import { defineOperation } from '../../../core/rest/operation.js';
import { decodeCursor, pageAfter, pageOf, pageQueryShape } from '../../../core/rest/paging.js';
import { principalOf } from '../../../core/rest/principal.js';
import type { MachineRecord } from '../store.js';
import type { FleetOperation } from './deps.js';
import { machineRecordView } from './views.js';

/** A machine's program directory as the service keeps it: also what a sync takes from a gateway. */
export const programDirSchema = z.string().max(1024).regex(/^[^\p{Cc}]*$/u, 'no control characters').refine((d) => !d.split(/[\\/]/).includes('..'), "no '..' segments");

export const MACHINE_OPERATIONS: readonly FleetOperation[] = [
  ({ repo, machineVisible, machineOut }) => defineOperation({
    operationId: 'listMachines', method: 'GET', path: '/machines', summary: 'Machines in your scope', tags: ['fleet'], permission: 'fleet.read',
    query: z.object({ ...pageQueryShape, gatewayId: idOf('gw').optional() }),
    responses: { 200: { description: 'A page of machines, by id.', schema: pageOf(machineRecordView) } },
    handler: async ({ query }, { principal }) => {
      const p = principalOf(principal);
      const after = query.cursor ? String(decodeCursor(query.cursor, { id: 'string' }).id) : null;
      const rows = await repo.listMachines(query.gatewayId, query.limit + 1, after);
      const result = pageAfter(rows, query.limit, (m) => ({ id: m.id }));
      const visible: MachineRecord[] = [];
      for (const m of result.items) if (await machineVisible(p, m)) visible.push(m);
      return { status: 200, body: { items: await Promise.all(visible.map(machineOut)), nextCursor: result.nextCursor } };
    },
  }),
  ({ visibleMachine, machineOut }) => defineOperation({
    operationId: 'getMachine', method: 'GET', path: '/machines/{id}', summary: 'One machine with the service\'s settings for it', tags: ['fleet'], permission: 'fleet.read',
    params: idParams('mch'), responses: { 200: { description: 'The machine.', schema: machineRecordView } },
    handler: async ({ params }, { principal }) => ({ status: 200, body: await machineOut(await visibleMachine(principalOf(principal), params.id)) }),
  }),
  ({ ctx, repo, audit, visibleMachine, machineOut }) => defineOperation({
    operationId: 'updateMachine', method: 'PATCH', path: '/machines/{id}', summary: 'The service\'s settings for a machine: program directory, transform profile, mirror', tags: ['fleet'], permission: 'fleet.manage',
    params: idParams('mch'),
    body: z.object({
      programDir: programDirSchema.optional()
        .describe('Directory on the controller programs go to, e.g. //CNC_MEM/USER/PATH1/; empty: the machine\'s default.'),
      transformProfile: z.string().min(1).max(64).nullable().optional(),
      mirror: z.object({ enabled: z.boolean().optional(), intervalSec: z.number().int().min(30).max(86_400).optional() }).strict().optional(),
    }).strict(),
    responses: { 200: { description: 'Updated.', schema: machineRecordView } },
    handler: async ({ params, body }, { principal }) => {
      const p = principalOf(principal);
      const m = await visibleMachine(p, params.id);
      const updated: MachineRecord = {
        ...m, ...(body.programDir !== undefined ? { programDir: body.programDir } : {}), ...(body.transformProfile !== undefined ? { transformProfile: body.transformProfile } : {}),
        mirrorEnabled: body.mirror?.enabled ?? m.mirrorEnabled, mirrorIntervalSec: body.mirror?.intervalSec ?? m.mirrorIntervalSec, updatedAt: ctx.now(),
      };
      await ctx.db.write(async (tx) => {
        await repo.upsertMachine(tx, updated, false);
        await audit(tx, p, { action: 'machine.update', entityType: 'machine', entityId: m.id, machine: m.machineId, details: { ...body } });
      }, { transaction: true });
      return { status: 200, body: await machineOut(updated) };
    },
  }),
];

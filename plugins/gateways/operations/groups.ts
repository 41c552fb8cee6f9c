/** The fleet's machine groups: create one of this service (scopes can name it), list them, rename or change members. */
import { z } from 'zod';
import { nameSchema } from '../../../core/rest/fields.js';
import { idOf, idParams, newId } from '../../../core/rest/ids.js';
import { defineOperation } from '../../../core/rest/operation.js';
import { decodeCursor, pageAfter, pageOf, pageQueryShape } from '../../../core/rest/paging.js';
import { principalOf } from '../../../core/rest/principal.js';
import { ProblemError } from '../../../core/rest/problem.js';
import type { FleetRepository, GroupRecord } from '../store.js';
import type { FleetOperation } from './deps.js';
import { groupOut, groupView } from './views.js';

/** 422 naming the first listed machine that does not exist. */
async function checkMachines(repo: FleetRepository, ids: readonly string[]): Promise<void> {
  for (const [i, id] of ids.entries()) {
    if (!(await repo.machine(id))) throw new ProblemError('unacceptable', `no machine ${id}`, { errors: [{ field: `body.machineIds[${i}]`, message: 'no such machine' }] });
  }
}

export const GROUP_OPERATIONS: readonly FleetOperation[] = [
  ({ ctx, repo, audit }) => defineOperation({
    operationId: 'createMachineGroup', method: 'POST', path: '/machine-groups', summary: 'Create a machine group of this service (scopes can name it)', tags: ['fleet'], permission: 'fleet.manage',
    body: z.object({ name: nameSchema, description: z.string().max(4000).default(''), machineIds: z.array(idOf('mch')).max(10_000).default([]) }).strict(),
    responses: { 201: { description: 'Created.', schema: groupView } },
    handler: async ({ body }, { principal }) => {
      const p = principalOf(principal);
      await checkMachines(repo, body.machineIds);
      const now = ctx.now();
      const group: GroupRecord = { id: newId('grp'), name: body.name, gatewayId: null, gatewayGroupId: null, description: body.description, machineIds: [...new Set(body.machineIds)].sort(), createdAt: now, updatedAt: now };
      await ctx.db.write(async (tx) => {
        await repo.saveGroup(tx, group, true);
        await audit(tx, p, { action: 'group.create', entityType: 'machineGroup', entityId: group.id, details: { name: group.name, machines: group.machineIds.length } });
      }, { transaction: true });
      return { status: 201, body: groupOut(group), headers: { location: `/api/v1/machine-groups/${group.id}` } };
    },
  }),
  ({ repo, groupVisible }) => defineOperation({
    operationId: 'listMachineGroups', method: 'GET', path: '/machine-groups', summary: 'Machine groups in your scope', tags: ['fleet'], permission: 'fleet.read',
    query: z.object({ ...pageQueryShape }),
    responses: { 200: { description: 'A page of groups, by id.', schema: pageOf(groupView) } },
    handler: async ({ query }, { principal }) => {
      const p = principalOf(principal);
      const after = query.cursor ? String(decodeCursor(query.cursor, { id: 'string' }).id) : null;
      const result = pageAfter(await repo.listGroups(query.limit + 1, after), query.limit, (g) => ({ id: g.id }));
      return { status: 200, body: { items: result.items.filter((g) => groupVisible(p, g.id)).map(groupOut), nextCursor: result.nextCursor } };
    },
  }),
  ({ ctx, repo, audit, groupVisible }) => defineOperation({
    operationId: 'updateMachineGroup', method: 'PATCH', path: '/machine-groups/{id}', summary: 'Rename a group or change its members (a gateway\'s group takes its members from the gateway)', tags: ['fleet'], permission: 'fleet.manage',
    params: idParams('grp'), body: z.object({ name: nameSchema.optional(), description: z.string().max(4000).optional(), machineIds: z.array(idOf('mch')).max(10_000).optional() }).strict(),
    responses: { 200: { description: 'Updated.', schema: groupView } },
    handler: async ({ params, body }, { principal }) => {
      const p = principalOf(principal);
      const g = groupVisible(p, params.id) ? await repo.group(params.id) : undefined;
      if (!g) throw new ProblemError('not-found', `no machine group ${params.id}`);
      if (body.machineIds && g.gatewayId) {
        throw new ProblemError('conflict', `group ${g.name} mirrors group ${g.gatewayGroupId} of its gateway; change its members there and sync`, { errors: [{ field: 'body.machineIds', message: 'members follow the gateway' }] });
      }
      await checkMachines(repo, body.machineIds ?? []);
      const updated: GroupRecord = {
        ...g, ...(body.name ? { name: body.name } : {}), ...(body.description !== undefined ? { description: body.description } : {}),
        ...(body.machineIds ? { machineIds: [...new Set(body.machineIds)].sort() } : {}), updatedAt: ctx.now(),
      };
      await ctx.db.write(async (tx) => {
        await repo.saveGroup(tx, updated, false);
        await audit(tx, p, { action: 'group.update', entityType: 'machineGroup', entityId: g.id, details: { ...body, machineIds: body.machineIds?.length } });
      }, { transaction: true });
      return { status: 200, body: groupOut(updated) };
    },
  }),
];

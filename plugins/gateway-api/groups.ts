/** Configuration interfaces for groups: list, get, add, update, delete. */
import { z } from 'zod';
import { groupConfigSchema, type GroupConfig, groupIdSchema } from '../../core/roles/gateway/machine-config.js';
import type { GatewayContext } from '../../core/roles/gateway/context.js';
import { parseOrThrow } from '../../core/schema-errors.js';
import { groupListOutput } from '../../core/roles/gateway/api-outputs.js';

function parseGroup(raw: unknown): GroupConfig {
  return parseOrThrow(groupConfigSchema, raw);
}

const groupIDInput = z.object({ groupID: groupIdSchema }).strict();

export function defineGroupInterfaces(ctx: GatewayContext): void {
  const { interfaces, store, bus } = ctx;

  interfaces.define({
    path: '/api/config/groups',
    method: 'GET',
    summary: 'Every group with its member machineIDs.',
    tags: ['configuration'],
    input: z.object({}).strict(),
    output: groupListOutput,
    handler: () => store.listGroups(),
  });

  interfaces.define({
    path: '/api/config/group',
    method: 'GET',
    summary: 'One group with its member machineIDs.',
    tags: ['configuration'],
    input: groupIDInput,
    output: groupConfigSchema,
    handler: ({ groupID }) => store.getGroup(groupID),
  });

  interfaces.define({
    path: '/api/config/group/add',
    method: 'POST',
    summary: 'Adds a group.',
    tags: ['configuration'],
    input: z.record(z.string(), z.unknown()),
    handler: async (body) => {
      const config = await store.createGroup(parseGroup(body));
      bus.emit('group.saved', { config, created: true });
      return config;
    },
  });

  interfaces.define({
    path: '/api/config/group/update',
    method: 'POST',
    summary: 'Changes fields of a group; `machineIDs` replaces the member list.',
    tags: ['configuration'],
    input: z.looseObject({ groupID: groupIdSchema }),
    handler: async (patch) => {
      const existing = store.getGroup(patch.groupID);
      const config = await store.updateGroup(parseGroup({ ...existing, ...patch }));
      bus.emit('group.saved', { config, created: false });
      return config;
    },
  });

  interfaces.define({
    path: '/api/config/group/delete',
    method: 'POST',
    summary: 'Deletes a group; its machines stay.',
    tags: ['configuration'],
    input: groupIDInput,
    handler: async ({ groupID }) => {
      await store.deleteGroup(groupID);
      bus.emit('group.deleted', { groupID });
      return { groupID, deleted: true };
    },
  });
}

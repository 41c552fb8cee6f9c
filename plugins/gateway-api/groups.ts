/** Configuration interfaces for groups: list, get, add, update, delete. */
import { groupConfigSchema, type GroupConfig } from '../../core/roles/gateway/machine-config.js';
import type { GatewayContext } from '../../core/roles/gateway/context.js';
import { parseOrThrow } from '../../core/interfaces/schema-errors.js';
import { CONFIGURATION } from '../../core/roles/gateway/contract/configuration.js';

function parseGroup(raw: unknown): GroupConfig {
  return parseOrThrow(groupConfigSchema, raw);
}

export function defineGroupInterfaces(ctx: GatewayContext): void {
  const { interfaces, store, bus } = ctx;

  interfaces.implement(CONFIGURATION.groups, {
    handler: () => store.listGroups(),
  });

  interfaces.implement(CONFIGURATION.group, {
    handler: ({ groupID }) => store.getGroup(groupID),
  });

  interfaces.implement(CONFIGURATION.addGroup, {
    handler: async (body) => {
      const config = await store.createGroup(parseGroup(body));
      bus.emit('group.saved', { config, created: true });
      return config;
    },
  });

  interfaces.implement(CONFIGURATION.updateGroup, {
    handler: async (patch) => {
      const existing = store.getGroup(patch.groupID);
      const config = await store.updateGroup(parseGroup({ ...existing, ...patch }));
      bus.emit('group.saved', { config, created: false });
      return config;
    },
  });

  interfaces.implement(CONFIGURATION.deleteGroup, {
    handler: async ({ groupID }) => {
      await store.deleteGroup(groupID);
      bus.emit('group.deleted', { groupID });
      return { groupID, deleted: true as const };
    },
  });
}

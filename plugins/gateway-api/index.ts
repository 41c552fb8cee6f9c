/** The gateway's HTTP interfaces: health, machine and group configuration, and the fleet snapshot. */
import { z } from 'zod';
import { definePlugin } from '../../core/plugin-host.js';
import type { GatewayContext } from '../../core/context.js';
import { defineMachineInterfaces } from './machines.js';
import { defineGroupInterfaces } from './groups.js';
import { defineFleetSnapshotInterfaces } from './fleet-snapshot.js';

export const gatewayApiPlugin = definePlugin<GatewayContext>({
  name: 'gateway-api',
  dependsOn: ['fleet'],
  register(ctx) {
    ctx.interfaces.define({
      path: '/api/health',
      method: 'GET',
      summary: 'Liveness: the gateway is up, with its version, uptime and history writer figures.',
      tags: ['system'],
      permission: null,
      input: z.object({}).strict(),
      handler: () => ({
        status: 'ok',
        version: ctx.version,
        uptimeSec: Math.round((ctx.now() - ctx.startedAt) / 1000),
        machines: ctx.store.listMachines().length,
        history: { ...ctx.history.stats },
      }),
    });
    defineMachineInterfaces(ctx);
    defineGroupInterfaces(ctx);
    defineFleetSnapshotInterfaces(ctx);
  },
});

/** The gateway's HTTP interfaces: health, configuration, the fleet snapshot, task data, live reads and program files. */
import { z } from 'zod';
import { definePlugin } from '../../core/plugin-host.js';
import type { GatewayContext } from '../../core/roles/gateway/context.js';
import { defineMachineInterfaces } from './machines.js';
import { defineGroupInterfaces } from './groups.js';
import { defineFleetSnapshotInterfaces } from './fleet-snapshot.js';
import { defineLiveReadInterfaces } from './live-reads.js';
import { defineTaskDataInterfaces } from './task-data.js';
import { defineProgramFileInterfaces } from './program-files.js';

export const gatewayApiPlugin = definePlugin<GatewayContext>({
  name: 'gateway-api',
  dependsOn: ['machine-actors'],
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
    defineLiveReadInterfaces(ctx);
    defineTaskDataInterfaces(ctx);
    defineProgramFileInterfaces(ctx);
  },
});

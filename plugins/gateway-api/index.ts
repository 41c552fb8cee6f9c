/** The gateway's HTTP interfaces: health, configuration, the fleet snapshot, task data, live reads and program files. */
import { SYSTEM } from '../../core/roles/gateway/contract/system.js';
import { definePlugin } from '../../core/runtime/plugin-host.js';
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
    ctx.interfaces.implement(SYSTEM.health, {
      handler: () => ({
        status: 'ok' as const,
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

/** /api/system/info: what runs here — product, versions, platform, plugins, drivers and fleet size. */
import { SYSTEM } from '../../core/roles/gateway/contract/system.js';
import { arch, platform, release } from 'node:os';
import type { GatewayContext } from '../../core/roles/gateway/context.js';
import { PRODUCT_NAME } from './product.js';

export function defineCoreInfoInterface(ctx: GatewayContext): void {
  ctx.interfaces.implement(SYSTEM.info, {
    handler: () => {
      const machines = ctx.store.listMachines();
      return {
        productName: PRODUCT_NAME,
        version: ctx.version,
        nodeVersion: process.version,
        platform: platform(),
        arch: arch(),
        osRelease: release(),
        uptimeMs: Math.max(0, ctx.now() - ctx.startedAt),
        startedPlugins: [...ctx.startedPlugins()],
        driverSchemes: ctx.drivers.schemes(),
        machineCount: machines.length,
        activeMachineCount: machines.filter((m) => m.isActive).length,
        groupCount: ctx.store.listGroups().length,
      };
    },
  });
}

/** /api/system/network-adapters: the host's network interfaces and their addresses. */
import { SYSTEM } from '../../core/roles/gateway/contract/system.js';
import { networkInterfaces } from 'node:os';
import type { GatewayContext } from '../../core/roles/gateway/context.js';

const NO_MAC = '00:00:00:00:00:00';

/** Every adapter with its addresses; `mac` is null where the adapter has none (loopback, tunnels). */
export function listNetworkAdapters() {
  return Object.entries(networkInterfaces()).map(([name, infos = []]) => {
    const mac = infos.find((i) => i.mac && i.mac !== NO_MAC)?.mac ?? null;
    return {
      name,
      mac,
      addresses: infos.map((i) => ({ family: i.family, address: i.address, cidr: i.cidr, internal: i.internal })),
    };
  });
}

export function defineNetworkAdaptersInterface(ctx: GatewayContext): void {
  ctx.interfaces.implement(SYSTEM.networkAdapters, {
    handler: () => listNetworkAdapters(),
  });
}

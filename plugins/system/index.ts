/**
 * The system interfaces: gateway identity, core information, license, service
 * status, time zone, hardware resources, network adapters and the public
 * product details.
 */
import { definePlugin } from '../../core/runtime/plugin-host.js';
import type { GatewayContext } from '../../core/roles/gateway/context.js';
import { defineCoreInfoInterface } from './core-info.js';
import { EventLoopMonitor } from './event-loop-monitor.js';
import { defineGatewayInfoInterface, GATEWAY_ID_FILE, loadGatewayId } from './gateway-identity.js';
import { defineHardwareResourcesInterface } from './hardware-resources.js';
import { defineNetworkAdaptersInterface } from './network-adapters.js';
import { defineProductInterfaces } from './product.js';
import { defineServiceStatusInterface } from './service-status.js';
import { defineTimeZoneInterface } from './time-zone.js';

declare module '../../core/roles/gateway/context.js' {
  interface GatewayServices {
    /** The gateway's stable gatewayID (`<dataDir>/gateway-id`), for plugins that name the gateway to others. */
    'gateway-identity': { gatewayID: string };
  }
}

export const systemPlugin = definePlugin<GatewayContext>({
  name: 'system',
  dependsOn: ['machine-actors'],
  keeps: { files: [GATEWAY_ID_FILE] },
  async register(ctx) {
    const gatewayID = await loadGatewayId(ctx.dataDir);
    defineGatewayInfoInterface(ctx, gatewayID);
    ctx.services.provide('gateway-identity', { gatewayID });
    defineCoreInfoInterface(ctx);
    defineProductInterfaces(ctx);
    defineServiceStatusInterface(ctx);
    defineTimeZoneInterface(ctx);
    defineNetworkAdaptersInterface(ctx);
    const eventLoop = new EventLoopMonitor();
    defineHardwareResourcesInterface(ctx, eventLoop);
    eventLoop.start();
    return {
      stop() {
        eventLoop.stop();
      },
    };
  },
});

/**
 * The relay between the cloud's MCP clients and the gateways, as the
 * service `cloud.relay` (relay.ts): inside the embedded broker, or as a
 * client of the external one that `cloud.broker` names. A token revoked in
 * this process (`token.revoked`) makes its gateway unavailable at once.
 */
import { definePlugin } from '../../core/runtime/plugin-host.js';
import type { CloudContext } from '../../core/roles/cloud/context.js';
import { countedRelay } from './metrics.js';
import { CloudRelay } from './relay.js';

export const cloudRelayPlugin = definePlugin<CloudContext>({
  name: 'cloud-relay',
  dependsOn: ['cloud-broker'],
  async register(ctx) {
    const broker = ctx.services.get('cloud.broker');
    const logger = ctx.logger.child({ component: 'relay' });
    let relay: CloudRelay;
    if (broker.embedded) relay = await CloudRelay.attach(broker.embedded, ctx.topicPrefix, logger);
    else if (broker.connection) relay = await CloudRelay.connect(broker.connection, logger);
    else throw new Error('cloud.broker names neither an embedded broker nor a connection to an external one');
    ctx.services.provide('cloud.relay', countedRelay(relay, ctx.metrics, ctx));
    ctx.readiness.add('broker', () => (broker.embedded ? broker.embedded.listening : relay.brokerLink()?.state === 'connected'));
    // A revoked token's gateway is unavailable at once: on an external broker its removed client leaves no will to say so.
    const unlisten = ctx.bus.on('token.revoked', ({ tokenId }) => relay.forget(tokenId));
    return {
      stop: async () => {
        unlisten();
        await relay.close();
      },
    };
  },
});

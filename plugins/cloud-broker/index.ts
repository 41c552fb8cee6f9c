/**
 * The broker the gateways dial out to, as the service `cloud.broker`: by
 * default an embedded one (aedes on `cloud.mqttHost`:`cloud.mqttPort`,
 * mqtts with `cloud.mqttTls`), authenticating gateways by their tokens,
 * with the topic ACL of embedded.ts and a sweep that disconnects gateways
 * whose token the CLI revoked; or, with `cloud.brokerUrl`, the settings the
 * relay connects to an external broker with (the password from
 * CLOUD_BROKER_PASSWORD). On `token.revoked` it disconnects that gateway at
 * once.
 */
import { definePlugin } from '../../core/plugin-host.js';
import { readConfigFile } from '../../core/config.js';
import type { BrokerConnection, CloudContext } from '../../core/roles/cloud/context.js';
import { CLOUD_BROKER_FIELDS } from './config.js';
import { embeddedBroker, sweepRevoked } from './embedded.js';

export const cloudBrokerPlugin = definePlugin<CloudContext, typeof CLOUD_BROKER_FIELDS>({
  name: 'cloud-broker',
  config: { section: 'cloud', fields: CLOUD_BROKER_FIELDS, env: { CLOUD_MQTT_PORT: { field: 'mqttPort', type: 'port' } } },
  async register(ctx) {
    const s = ctx.settings;
    if (s.brokerUrl) {
      const password = ctx.env.CLOUD_BROKER_PASSWORD;
      const connection: BrokerConnection = {
        url: s.brokerUrl, protocolVersion: ctx.extras.brokerProtocolVersion ?? 5, topicPrefix: ctx.topicPrefix, reconnectMaxMs: s.brokerReconnectMaxSeconds * 1000,
        ...(s.brokerUsername ? { username: s.brokerUsername } : {}), ...(password ? { password } : {}),
      };
      ctx.services.provide('cloud.broker', { url: s.brokerUrl, connection, disconnect: () => 0 });
      return;
    }
    const tls = ctx.extras.mqttTls ?? (s.mqttTls ? { cert: readConfigFile(s.mqttTls.certFile, 'cloud.mqttTls.certFile'), key: readConfigFile(s.mqttTls.keyFile, 'cloud.mqttTls.keyFile') } : undefined);
    const broker = embeddedBroker(ctx.tokens, { host: s.mqttHost, port: s.mqttPort, topicPrefix: ctx.topicPrefix, ...(tls ? { tls } : {}) });
    await broker.start();
    const stopSweep = sweepRevoked(broker, ctx.tokens, s.revocationSweepMs, ctx.logger);
    const unlisten = ctx.bus.on('token.revoked', ({ tokenId }) => void broker.disconnectUser(tokenId));
    ctx.services.provide('cloud.broker', { url: broker.url, embedded: broker, disconnect: (tokenId) => broker.disconnectUser(tokenId) });
    return {
      async stop() {
        unlisten();
        stopSweep();
        await broker.stop();
      },
    };
  },
});

/**
 * The broker the gateways dial out to, as the service `cloud.broker`: by
 * default an embedded one (aedes on `cloud.mqttHost`:`cloud.mqttPort`,
 * mqtts with `cloud.mqttTls`), authenticating gateways by their tokens,
 * with the topic ACL of embedded.ts and a sweep that disconnects gateways
 * whose token the CLI revoked; or, with `cloud.brokerUrl`, the settings the
 * relay connects to an external broker with (the password from
 * CLOUD_BROKER_PASSWORD). On `token.revoked` (in this process, or read
 * from the database when another instance or the CLI revoked it) it
 * disconnects that gateway at once. With `cloud.dynamicSecurity` beside `cloud.brokerUrl` it connects
 * the cloud's admin client of Mosquitto's dynamic security plugin, brings
 * the gateways' broker clients in line with the tokens, and offers them as
 * `users` to whoever makes, rotates or revokes a token
 * (core/roles/cloud/gateway-users.ts).
 */
import type { PartSettings } from '../../core/config/config-parts.js';
import { definePlugin } from '../../core/runtime/plugin-host.js';
import { readConfigFile } from '../../core/config/config.js';
import type { BrokerConnection, CloudContext } from '../../core/roles/cloud/context.js';
import { brokerTlsOf, connectGatewayUsers, gatewayUsersOptions, reconcileGatewayUsers } from '../../core/roles/cloud/gateway-users.js';
import { CLOUD_BROKER_FIELDS } from './config.js';
import { embeddedBroker, sweepRevoked } from './embedded.js';

type BrokerSettings = PartSettings<typeof CLOUD_BROKER_FIELDS>;

/** The external broker's connection, and with `dynamicSecurity` its gateways' users, connected and brought in line with the tokens. */
async function externalBroker(ctx: CloudContext, s: BrokerSettings & { brokerUrl: string }): Promise<{ stop(): Promise<void> } | undefined> {
  const password = ctx.env.CLOUD_BROKER_PASSWORD;
  // The relay and the dynamic security admin client reach the broker with the same TLS options.
  const tls = brokerTlsOf(s);
  const connection: BrokerConnection = {
    url: s.brokerUrl, protocolVersion: ctx.extras.brokerProtocolVersion ?? 5, topicPrefix: ctx.topicPrefix, reconnectMaxMs: s.brokerReconnectMaxSeconds * 1000,
    ...(s.brokerUsername ? { username: s.brokerUsername } : {}), ...(password ? { password } : {}), ...(Object.keys(tls).length > 0 ? { tls } : {}),
  };
  const options = gatewayUsersOptions(s, ctx.env, ctx.topicPrefix, tls);
  if (!options) {
    ctx.services.provide('cloud.broker', { url: s.brokerUrl, connection, disconnect: () => 0 });
    return undefined;
  }
  const users = await connectGatewayUsers(options);
  try {
    await reconcileGatewayUsers(users, ctx.tokens, ctx.logger);
  } catch (err) {
    await users.close();
    throw err;
  }
  ctx.services.provide('cloud.broker', { url: s.brokerUrl, connection, disconnect: () => 0, users });
  // A token revoked on another instance or by the CLI: that side removed its client already; removing it again
  // here (a client that is gone is fine) covers a removal that failed there, the broker being away for a moment.
  const unlisten = ctx.bus.on('token.revoked', ({ tokenId, elsewhere }) => {
    if (!elsewhere) return;
    users.removeGateway(tokenId).catch((err: Error) => ctx.logger.warn({ tokenId, err: err.message }, 'cloud: the broker client of a gateway token revoked elsewhere could not be removed here'));
  });
  return {
    async stop() {
      unlisten();
      await users.close();
    },
  };
}

export const cloudBrokerPlugin = definePlugin<CloudContext, typeof CLOUD_BROKER_FIELDS>({
  name: 'cloud-broker',
  config: { section: 'cloud', fields: CLOUD_BROKER_FIELDS, env: { CLOUD_MQTT_PORT: { field: 'mqttPort', type: 'port' } } },
  async register(ctx) {
    const s = ctx.settings;
    if (s.brokerUrl) return externalBroker(ctx, { ...s, brokerUrl: s.brokerUrl });
    // A dynamicSecurity section without brokerUrl is a mistake, named at start.
    gatewayUsersOptions(s, ctx.env, ctx.topicPrefix);
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

/**
 * The gateway's outbound link to a cloud relay: one MQTT connection to the
 * broker, authenticated with the gateway's token (user name = the token's
 * id, password = the token). It keeps a retained presence (`online`, and a
 * last will saying `offline`), takes tool calls from its request topic and
 * answers each on the request's response topic, in parts, with its
 * correlation id. Calls run through the same dispatch as the gateway's own
 * /mcp (core/mcp-dispatch.ts), as the user `cloudLink.user`. A call past its
 * deadline is dropped. docs/cloud-relay.md.
 */
import { connect, type IClientOptions, type MqttClient } from 'mqtt';
import { definePlugin } from '../../core/plugin-host.js';
import type { GatewayContext } from '../../core/context.js';
import { answerParts, readRequest, topics, type Presence } from '../../core/cloud/protocol.js';
import { GATEWAY_TOKEN_PREFIX } from '../../core/cloud/tokens.js';
import { parseBearerToken } from '../../core/auth/bearer-tokens.js';
import { createToolDispatcher } from '../../core/mcp-dispatch.js';

export const cloudLinkPlugin = definePlugin<GatewayContext>({
  name: 'cloud-link',
  dependsOn: ['mcp'],
  async register(ctx) {
    const config = ctx.config.cloudLink;
    if (!config) return;
    const logger = ctx.logger.child({ component: 'cloud-link' });
    const token = config.accessToken ?? ctx.env.GATEWAY_CLOUD_TOKEN;
    const parsed = token ? parseBearerToken(GATEWAY_TOKEN_PREFIX, token) : null;
    if (!token || !parsed) {
      throw new Error('cloudLink.accessToken: a gateway token of the cloud (cgw_<id>_<secret>) is needed, in the config or in GATEWAY_CLOUD_TOKEN; the cloud\'s `npm run cloud-token -- create <name>` makes one');
    }
    const t = topics(config.topicPrefix);
    const dispatcher = createToolDispatcher(ctx);
    const presence = (p: Presence) => JSON.stringify(p);
    let protocolVersion: 4 | 5 = config.protocolVersion;
    let client: MqttClient | undefined;
    let stopped = false;
    const since = ctx.now();

    const handle = async (c: MqttClient, payload: Buffer, properties: { responseTopic?: string; correlationData?: Buffer } | undefined) => {
      const request = readRequest(payload);
      if (!request) return logger.warn({ bytes: payload.length }, 'cloud link: a message on the request topic that is not a request was dropped');
      const correlationId = request.id;
      if (Date.now() > request.deadline) return logger.warn({ correlationId, tool: request.params.name }, 'cloud link: a call past its deadline was dropped');
      const principal = ctx.interfaces.accessPolicy.principalFor(config.user);
      const started = Date.now();
      const result = principal
        ? await dispatcher.call(request.params, principal, 'cloud')
        : { content: [{ type: 'text' as const, text: `cloud calls run as user '${config.user}' (cloudLink.user), who does not exist on this gateway` }], isError: true };
      if (Date.now() > request.deadline) return logger.warn({ correlationId, tool: request.params.name, ms: Date.now() - started }, 'cloud link: the answer came after the deadline and was dropped');
      const replyTo = properties?.responseTopic ?? request.replyTo;
      if (!replyTo.startsWith(`${config.topicPrefix}/clouds/`)) return logger.warn({ correlationId }, 'cloud link: a response topic outside the cloud topics was refused');
      for (const part of answerParts(correlationId, result)) {
        await c.publishAsync(replyTo, JSON.stringify(part), {
          qos: 1,
          ...(protocolVersion === 5 ? { properties: { correlationData: properties?.correlationData ?? Buffer.from(correlationId) } } : {}),
        });
      }
      const log = { correlationId, tool: request.params.name, ms: Date.now() - started, isError: result.isError === true };
      if (result.isError) logger.warn(log, 'cloud tool call answered with a tool error');
      else logger.info(log, 'cloud tool call answered');
    };

    const open = () => {
      const options: IClientOptions = {
        protocolVersion,
        clientId: `gateway-${parsed.id}`,
        username: parsed.id,
        password: token,
        reconnectPeriod: 2000,
        connectTimeout: 10_000,
        will: { topic: t.presence(parsed.id), payload: Buffer.from(presence({ state: 'offline' })), qos: 1, retain: true },
      };
      const c = connect(config.brokerUrl, options);
      client = c;
      c.on('connect', () => {
        logger.info({ broker: config.brokerUrl, protocolVersion }, 'cloud link connected');
        void c.publishAsync(t.presence(parsed.id), presence({ state: 'online', gateway: ctx.config.gateway.name, version: ctx.version, since }), { qos: 1, retain: true })
          .then(() => c.subscribeAsync(t.requests(parsed.id), { qos: 1 }))
          .catch((err: Error) => logger.error({ err: err.message }, 'cloud link: presence or subscription failed'));
      });
      c.on('message', (_topic, payload, packet) => {
        void handle(c, payload, packet.properties as { responseTopic?: string; correlationData?: Buffer } | undefined).catch((err: Error) => logger.error({ err: err.message }, 'cloud link: a call could not be answered'));
      });
      c.on('error', (err: Error & { code?: number }) => {
        // A broker without MQTT 5 (the embedded aedes) refuses it: speak 3.1.1 to it instead.
        if (protocolVersion === 5 && (err.code === 1 || /protocol version/i.test(err.message))) {
          protocolVersion = 4;
          logger.info('cloud link: the broker does not take MQTT 5; using MQTT 3.1.1');
          void c.endAsync(true).then(() => (stopped ? undefined : open()));
          return;
        }
        logger.warn({ err: err.message }, 'cloud link: broker connection error');
      });
    };
    open();
    return {
      stop: async () => {
        stopped = true;
        const c = client;
        if (!c) return;
        if (c.connected) await c.publishAsync(t.presence(parsed.id), presence({ state: 'offline' }), { qos: 1, retain: true }).catch(() => undefined);
        await c.endAsync(true).catch(() => undefined);
      },
    };
  },
});

/**
 * The gateway's outbound link to a cloud relay: one MQTT connection to the
 * broker, authenticated with the gateway's token (user name = the token's
 * id, password = the token, client id gateway-<token id>). It keeps a
 * retained presence (`online`, and a last will saying `offline`), takes
 * tool calls from its request topic and
 * answers each on its own answer topic of the cloud, in parts, with its
 * correlation id. Calls run through the same dispatch as the gateway's own
 * /mcp (core/mcp/dispatch.ts), as the user `cloudLink.user`, and carry the
 * cloud's correlation id into the log and the error log. A call past its
 * deadline is dropped. Refused by the broker, unable to reach it or cut
 * off, it keeps trying with backoff (core/mqtt/reconnect.ts).
 *
 * The settings come from the config's `cloudLink` section (the token also
 * from GATEWAY_CLOUD_TOKEN), and an administrator may set or replace the
 * broker, token and user through `POST /api/security/cloud-link/set` without
 * a restart; those are kept in `<dataDir>/cloud-link.json` (mode 0600) and
 * win over the config until `POST /api/security/cloud-link/remove`. The link's
 * state is in gateway-info's `cloud` (never the token). docs/cloud-relay.md.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { connect, type IClientOptions, type MqttClient } from 'mqtt';
import { z } from 'zod';
import { definePlugin } from '../../core/plugin-host.js';
import type { GatewayContext } from '../../core/roles/gateway/context.js';
import { answerPayloads, gatewayClientId, readRequest, textLiteral, topics, type Presence } from '../../core/cloud-wire/protocol.js';
import { FrozenAnswers, type Splices } from '../../core/mcp/frozen-answers.js';
import { GATEWAY_TOKEN_PREFIX } from '../../core/roles/cloud/tokens.js';
import { parseBearerToken } from '../../core/auth/bearer-tokens.js';
import { createToolDispatcher } from '../../core/mcp/dispatch.js';
import { keepNoDelay } from '../../core/mqtt/no-delay.js';
import { GatewayError } from '../../core/errors.js';
import { readConfigFile } from '../../core/config.js';
import type { CloudLinkStatus } from '../../core/roles/gateway/cloud-link-status.js';
import { Backoff, DEFAULT_RETRY_CAP_MS } from '../../core/mqtt/backoff.js';
import { Reconnector } from '../../core/mqtt/reconnect.js';
import { BROKER_URL, CLOUD_LINK_FILE, linkSettings, readStoredSettings, shownUrl, TOKEN_HINT, writeStoredSettings, type LinkSettings, type StoredSettings } from './settings.js';

export { CLOUD_LINK_FILE };

export const cloudLinkPlugin = definePlugin<GatewayContext>({
  name: 'cloud-link',
  dependsOn: ['mcp', 'auth'],
  async register(ctx) {
    const logger = ctx.logger.child({ component: 'cloud-link' });
    const file = join(ctx.dataDir, CLOUD_LINK_FILE);
    const dispatcher = createToolDispatcher(ctx);
    const frozenAnswers = new FrozenAnswers();
    const since = ctx.now();
    // A private CA for an mqtts broker; a file that cannot be read is a config mistake, reported at start.
    const ca = ctx.config.cloudLink?.caFile !== undefined ? readConfigFile(ctx.config.cloudLink.caFile, 'cloudLink.caFile') : undefined;

    const readStored = () => readStoredSettings(file);
    const settingsFrom = (stored: StoredSettings) => linkSettings(ctx.config.cloudLink, ctx.env, stored);

    const counters = { callsAnswered: 0, callsFailed: 0, callsDropped: 0 };
    let link: {
      settings: LinkSettings; tokenId: string; client: MqttClient | undefined; retry: Reconnector | undefined; protocolVersion: 4 | 5;
      connectedAt?: number; lastError?: string; lastErrorAt?: number; closed: boolean;
    } | undefined;

    const noteError = (message: string) => {
      if (!link) return;
      link.lastError = message.slice(0, 300);
      link.lastErrorAt = ctx.now();
    };

    const start = (settings: LinkSettings) => {
      const parsed = parseBearerToken(GATEWAY_TOKEN_PREFIX, settings.accessToken);
      if (!parsed) throw new Error(`cloudLink.accessToken: ${TOKEN_HINT}`);
      const t = topics(settings.topicPrefix);
      const presence = (p: Presence) => JSON.stringify(p);
      const current: NonNullable<typeof link> = { settings, tokenId: parsed.id, client: undefined, retry: undefined, protocolVersion: settings.protocolVersion, closed: false };
      link = current;
      // One backoff for the link: a refused attempt waits longer each time, whatever protocol version it spoke.
      const backoff = new Backoff({ capMs: (ctx.config.cloudLink?.reconnectMaxSeconds ?? DEFAULT_RETRY_CAP_MS / 1000) * 1000 });

      const handle = async (c: MqttClient, payload: Buffer, properties: { responseTopic?: string; correlationData?: Buffer } | undefined) => {
        const request = readRequest(payload);
        if (!request) {
          counters.callsDropped++;
          return logger.warn({ bytes: payload.length }, 'cloud link: a message on the request topic that is not a request was dropped');
        }
        const correlationId = request.id;
        if (Date.now() > request.deadline) {
          counters.callsDropped++;
          return logger.warn({ correlationId, tool: request.params.name }, 'cloud link: a call past its deadline was dropped');
        }
        const principal = ctx.interfaces.accessPolicy.principalFor(settings.user);
        const started = Date.now();
        // Large answers keep their serialised text between calls (the same path as the gateway's own /mcp).
        const splices: Splices = new Map();
        const result = principal
          ? await dispatcher.call(request.params, principal, 'cloud', { correlationId, render: (r) => frozenAnswers.textOrPlaceholder(r, splices) })
          : { content: [{ type: 'text' as const, text: `cloud calls run as user '${settings.user}' (cloudLink.user), who does not exist on this gateway` }], isError: true };
        if (Date.now() > request.deadline) {
          counters.callsDropped++;
          return logger.warn({ correlationId, tool: request.params.name, ms: Date.now() - started }, 'cloud link: the answer came after the deadline and was dropped');
        }
        const replyTo = properties?.responseTopic ?? request.replyTo;
        // Its own answer topic of a cloud (or a cloud's bare response topic, which clouds before per-gateway answer topics ask for).
        if (!t.isAnswerTopicOf(parsed.id, replyTo, true)) {
          counters.callsDropped++;
          return logger.warn({ correlationId }, 'cloud link: a response topic other than this gateway\'s answer topic of a cloud was refused');
        }
        const first = result.content[0];
        const text = first?.type === 'text' ? first.text : JSON.stringify(result.content);
        const options = {
          qos: 1 as const,
          ...(current.protocolVersion === 5 ? { properties: { correlationData: properties?.correlationData ?? Buffer.from(correlationId) } } : {}),
        };
        // All parts go out at once (TCP keeps their order); waiting for each PUBACK would add a round trip per part.
        await Promise.all(answerPayloads(correlationId, splices.get(text) ?? textLiteral(text), result.isError === true).map((payload) => c.publishAsync(replyTo, payload, options)));
        const log = { correlationId, tool: request.params.name, ms: Date.now() - started, isError: result.isError === true };
        if (result.isError) {
          counters.callsFailed++;
          logger.warn(log, 'cloud tool call answered with a tool error');
        } else {
          counters.callsAnswered++;
          logger.info(log, 'cloud tool call answered');
        }
      };

      const open = () => {
        const options: IClientOptions = {
          protocolVersion: current.protocolVersion,
          clientId: gatewayClientId(parsed.id),
          username: parsed.id,
          password: settings.accessToken,
          // Reconnecting is the Reconnector's: with backoff, and after a refusal too.
          reconnectPeriod: 0,
          connectTimeout: 10_000,
          // A link cut without a TCP close (power, network) is seen by the broker after 1.5 keepalives.
          keepalive: ctx.config.cloudLink?.keepaliveSeconds ?? 15,
          will: { topic: t.presence(parsed.id), payload: Buffer.from(presence({ state: 'offline' })), qos: 1, retain: true },
          ...(ca ? { ca } : {}),
        };
        const c = keepNoDelay(connect(settings.brokerUrl, options));
        current.client = c;
        current.retry = new Reconnector(c, { name: 'cloud link', logger, backoff, now: ctx.now, onFailure: noteError });
        c.on('connect', () => {
          current.connectedAt = ctx.now();
          logger.info({ broker: shownUrl(settings.brokerUrl), protocolVersion: current.protocolVersion }, 'cloud link connected');
          // Subscribed before saying online: a request the cloud sends on seeing the presence must find the subscription.
          void c.subscribeAsync(t.requests(parsed.id), { qos: 1 })
            .then(() => c.publishAsync(t.presence(parsed.id), presence({ state: 'online', gateway: ctx.identity.name, version: ctx.version, since }), { qos: 1, retain: true }))
            .catch((err: Error) => {
              noteError(`presence or subscription failed: ${err.message}`);
              logger.error({ err: err.message }, 'cloud link: presence or subscription failed');
            });
        });
        c.on('message', (_topic, payload, packet) => {
          void handle(c, payload, packet.properties as { responseTopic?: string; correlationData?: Buffer } | undefined).catch((err: Error) => {
            counters.callsDropped++;
            logger.error({ err: err.message }, 'cloud link: a call could not be answered');
          });
        });
        c.on('error', (err: Error & { code?: number }) => {
          // A broker without MQTT 5 (the embedded aedes) refuses it: speak 3.1.1 to it instead.
          if (current.protocolVersion === 5 && (err.code === 1 || /protocol version/i.test(err.message))) {
            current.protocolVersion = 4;
            current.retry?.stop();
            logger.info('cloud link: the broker does not take MQTT 5; using MQTT 3.1.1');
            void c.endAsync(true).then(() => (current.closed ? undefined : open()));
            return;
          }
          // The Reconnector logs the cause of a failed attempt or lost connection, once per change.
          logger.debug({ err: err.message }, 'cloud link: broker connection error');
        });
      };
      open();
    };

    const stop = async () => {
      const current = link;
      link = undefined;
      if (!current) return;
      current.closed = true;
      current.retry?.stop();
      const c = current.client;
      if (!c) return;
      if (c.connected) {
        await c.publishAsync(topics(current.settings.topicPrefix).presence(current.tokenId), JSON.stringify({ state: 'offline' } satisfies Presence), { qos: 1, retain: true }).catch(() => undefined);
      }
      await c.endAsync(true).catch(() => undefined);
    };

    const retryStatus = (retry: Reconnector | undefined): Pick<CloudLinkStatus, 'state' | 'failedAttempts' | 'nextAttemptAt'> => {
      const r = retry?.status();
      return !r || r.state === 'closed' ? { state: 'connecting', failedAttempts: r?.failedAttempts ?? 0 } : { ...r, state: r.state };
    };
    const status = (): CloudLinkStatus => {
      if (!link) return { configured: false, connected: false };
      return {
        configured: true,
        source: link.settings.source,
        brokerUrl: shownUrl(link.settings.brokerUrl),
        tokenId: link.tokenId,
        user: link.settings.user,
        connected: link.client?.connected === true,
        // A retry stopped while the link opens again (in another protocol version) is connecting.
        ...retryStatus(link.retry),
        protocolVersion: link.protocolVersion,
        ...(link.connectedAt !== undefined ? { connectedAt: link.connectedAt } : {}),
        ...(link.lastError !== undefined ? { lastError: link.lastError, lastErrorAt: link.lastErrorAt } : {}),
        ...counters,
      };
    };
    ctx.services.provide('cloud-link', { status });

    // A config section without a token is a config mistake, reported at start.
    const initial = settingsFrom(readStored());
    if (ctx.config.cloudLink && !initial) throw new Error(`cloudLink.accessToken: ${TOKEN_HINT}; set it in the config or in GATEWAY_CLOUD_TOKEN`);
    if (initial) start(initial);

    // One change at a time: a set racing a remove must not leave two links.
    let changing: Promise<unknown> = Promise.resolve();
    const serially = <T>(work: () => Promise<T>): Promise<T> => {
      const next = changing.then(work, work);
      changing = next.catch(() => undefined);
      return next;
    };

    ctx.interfaces.define({
      path: '/api/security/cloud-link/set',
      method: 'POST',
      summary: 'Sets the link to a cloud relay without a restart: the broker URL, the gateway token the cloud made (cgw_…), and the user whose authorised API list cloud calls run with. Given fields replace the current ones; they are kept in the data directory and win over the config until removed. Answers the link status, never the token.',
      tags: ['security'],
      input: z
        .object({
          brokerUrl: z.string().max(512).regex(BROKER_URL, 'an mqtt:// or mqtts:// URL such as mqtt://cloud.example:1883').optional(),
          accessToken: z.string().max(256).optional(),
          user: z.string().min(1).max(128).optional(),
        })
        .strict(),
      handler: (input) =>
        serially(async () => {
          if (input.brokerUrl === undefined && input.accessToken === undefined && input.user === undefined) {
            throw new GatewayError('INVALID_PARAMETER', 'give at least one of brokerUrl, accessToken, user');
          }
          if (input.accessToken !== undefined && !parseBearerToken(GATEWAY_TOKEN_PREFIX, input.accessToken)) {
            throw new GatewayError('INVALID_PARAMETER', `accessToken: ${TOKEN_HINT}`);
          }
          if (input.user !== undefined && !ctx.interfaces.accessPolicy.principalFor(input.user)) {
            throw new GatewayError('INVALID_PARAMETER', `user: no user '${input.user}' on this gateway; add it first (/api/security/user/add)`);
          }
          const stored: StoredSettings = { ...readStored(), ...input };
          const next = settingsFrom(stored);
          if (!next) throw new GatewayError('INVALID_PARAMETER', `${stored.brokerUrl ? 'accessToken' : 'brokerUrl'} is needed too: the link has none yet`);
          writeStoredSettings(file, stored);
          await stop();
          start(next);
          logger.info({ broker: shownUrl(next.brokerUrl), user: next.user }, 'cloud link set through the API');
          return status();
        }),
    });
    ctx.interfaces.define({
      path: '/api/security/cloud-link/remove',
      method: 'POST',
      summary: 'Removes the cloud link settings made through the API: the link goes back to the config\'s cloudLink section, or closes when there is none.',
      tags: ['security'],
      input: z.object({}).strict(),
      handler: () =>
        serially(async () => {
          rmSync(file, { force: true });
          await stop();
          const fromConfig = settingsFrom({});
          if (fromConfig) start(fromConfig);
          logger.info({ configured: fromConfig !== undefined }, 'cloud link settings from the API removed');
          return status();
        }),
    });

    return { stop: () => serially(stop) };
  },
});

/**
 * What `CloudRole.create` is given, and how it becomes what the role and its
 * plugins read: the `cloud` section (the parsed config's, or the parts'
 * defaults, with the options over it field by field), the environment, and
 * the extras no config field says (certificates as PEM, MQTT 3.1.1 to an
 * external broker).
 */
import type { Logger } from 'pino';
import type { GatewayConfig } from '../../../config/schema.js';
import { readPart } from '../../config/config-parts.js';
import type { ToolCatalogue } from '../../mcp/dispatch.js';
import type { Plugin } from '../../runtime/plugin-host.js';
import type { RateLimitSettings } from '../../http/rate-limit.js';
import type { WhileWaiting } from '../../runtime/role-database.js';
import { pluginParts } from '../../runtime/role.js';
import { CLOUD_ROLE_PART } from './config.js';
import type { CloudContext, CloudExtras } from './context.js';

export interface CloudRoleOptions {
  dataDir: string;
  logger: Logger;
  version: string;
  catalogue: ToolCatalogue;
  /** The parsed configuration: its `cloud` section, which the options below override field by field. */
  config?: GatewayConfig;
  /** Where secrets are read (CLOUD_BROKER_PASSWORD, CLOUD_DYNSEC_PASSWORD); process.env unless told. */
  env?: NodeJS.ProcessEnv;
  /** The role's plugins; CLOUD_PLUGINS unless told. */
  plugins?: readonly Plugin<CloudContext>[];
  /** An external broker; without it the role embeds one on `embeddedBroker` (127.0.0.1:1883 unless told, or the config's). */
  broker?: { url: string; username?: string; password?: string; protocolVersion?: 4 | 5; reconnectMaxMs?: number; tls?: { caFile?: string; certFile?: string; keyFile?: string } };
  /** With an external Mosquitto: the cloud's dynamic security admin client (`cloud.dynamicSecurity`, CLOUD_DYNSEC_PASSWORD). */
  dynamicSecurity?: { username: string; password: string };
  embeddedBroker?: { host?: string; port?: number; tls?: { key: string | Buffer; cert: string | Buffer } };
  topicPrefix?: string;
  callDeadlineMs?: number;
  /** Origins and Hosts /mcp accepts (as on a gateway); an empty Host list accepts any Host. */
  allowedOrigins?: readonly string[];
  allowedHosts?: readonly string[];
  now?: () => number;
  /** How often the embedded broker's connected gateways are checked against revoked tokens (10 s unless told). */
  revocationSweepMs?: number;
  /** How often revocations made elsewhere are read (1 s unless told). */
  revocationPollMs?: number;
  /** The tokens' PostgreSQL database (`cloud.databaseUrl`); CLOUD_DATABASE_URL in `env` wins. */
  databaseUrl?: string;
  /** The metrics token; the config's `metricsToken` (METRICS_TOKEN) unless told, one made at the first start without either. */
  metricsToken?: string;
  /** `cloud.rateLimits` (core/http/rate-limit.ts); the config's, or the defaults, unless told. */
  rateLimits?: RateLimitSettings;
  /** Wait for a token database (PostgreSQL) that does not answer at start, serving the probes here meanwhile (core/runtime/database-wait.ts); without, such a start fails at once. */
  whileWaiting?: WhileWaiting;
}

/** The options' values that are given, as fields of the `cloud` section. */
function givenFields(o: CloudRoleOptions): Record<string, unknown> {
  const fields: Record<string, unknown> = {
    topicPrefix: o.topicPrefix, callDeadlineMs: o.callDeadlineMs, revocationSweepMs: o.revocationSweepMs, revocationPollMs: o.revocationPollMs, databaseUrl: o.databaseUrl, allowedOrigins: o.allowedOrigins, allowedHosts: o.allowedHosts,
    mqttHost: o.embeddedBroker?.host ?? (o.config ? undefined : '127.0.0.1'), mqttPort: o.embeddedBroker?.port,
    brokerUrl: o.broker?.url, brokerUsername: o.broker?.username, brokerTls: o.broker?.tls, brokerReconnectMaxSeconds: o.broker?.reconnectMaxMs === undefined ? undefined : o.broker.reconnectMaxMs / 1000,
    dynamicSecurity: o.dynamicSecurity ? { username: o.dynamicSecurity.username } : undefined, rateLimits: o.rateLimits,
  };
  return Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined));
}

/** The `cloud` section the role and its plugins read: the config's (or every part's defaults) with the options over it. */
export function cloudSection(o: CloudRoleOptions, plugins: readonly Plugin<CloudContext>[]): Record<string, unknown> {
  const parts = [CLOUD_ROLE_PART, ...plugins.flatMap((p) => pluginParts(p as Plugin<never>))].filter((p) => p.section === 'cloud');
  const base = (o.config as { cloud?: Record<string, unknown> } | undefined)?.cloud ?? Object.assign({}, ...parts.map((part) => readPart(undefined, part)));
  return { ...base, ...givenFields(o) };
}

/** The environment the plugins read secrets from: the given one (process.env unless told), with the external broker's and the dynamic security admin's passwords of the options. */
export function envOf(o: CloudRoleOptions): NodeJS.ProcessEnv {
  return {
    ...(o.env ?? process.env), ...(o.broker?.password !== undefined ? { CLOUD_BROKER_PASSWORD: o.broker.password } : {}),
    ...(o.dynamicSecurity ? { CLOUD_DYNSEC_PASSWORD: o.dynamicSecurity.password } : {}),
  };
}

export function extrasOf(o: CloudRoleOptions): CloudExtras {
  return { ...(o.embeddedBroker?.tls ? { mqttTls: o.embeddedBroker.tls } : {}), ...(o.broker?.protocolVersion ? { brokerProtocolVersion: o.broker.protocolVersion } : {}) };
}

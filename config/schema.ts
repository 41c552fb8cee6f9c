/**
 * The runtime's part of the configuration file: the keys core itself reads.
 * Which roles run (`roles`, named after core/roles/index.ts), the log level,
 * the data directory and time zone every role shares (`dataDir`,
 * `timeZone`; formerly `gateway.dataDir` and `gateway.timeZone`, still read
 * with a deprecation line), and the proxies every listener trusts
 * (`communication.trustProxy`).
 *
 * Every other section is declared by its owner, a role's wing or a plugin
 * (core/config-parts.ts), and the file is parsed once with all of them.
 * The `cloud`, `mcp` and `cloudLink` sections below are still the base
 * until their owners declare them: a part's field replaces the base field
 * of the same path.
 */
import { z } from 'zod';
import type { ConfigPart } from '../core/config-parts.js';

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

function isTimeZone(value: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: value });
    return true;
  } catch {
    return false;
  }
}

/**
 * The `roles` key: the services this process runs when no `--role` is
 * given, each one of `names` (the roles this build includes); `defaults`
 * when absent.
 */
export function rolesPart(names: readonly string[], defaults: readonly string[]): ConfigPart {
  const accepted = names.map((r) => `"${r}"`).join(', ');
  return {
    section: 'roles',
    schema: z
      .array(z.enum(names as [string, ...string[]]))
      .min(1, `roles must name at least one of ${accepted}`)
      .default([...defaults])
      .superRefine((roles, ctx) => {
        roles.forEach((role, i) => {
          if (roles.indexOf(role) !== i) ctx.addIssue({ code: 'custom', path: [i], input: role, message: `role '${role}' is named twice; name each role once` });
        });
      }),
  };
}

const logLevelSchema = z.enum(LOG_LEVELS).default('info');
/** Directory of every role's database, keys and certificates. */
const dataDirSchema = z.string().min(1).default('./data');
/** IANA time zone of every role's wall-clock computations; empty means the system's. */
const timeZoneSchema = z
  .string()
  .default('')
  .refine((tz) => tz === '' || isTimeZone(tz), 'timeZone must be an IANA time zone such as Europe/Berlin or UTC');
/** Which proxies may set X-Forwarded-For: false (none, the default: the source IP is the TCP peer), or a list of proxy addresses/CIDR ranges. */
const trustProxySchema = z.union([z.literal(false), z.array(z.string().min(1)).min(1)]).default(false);

/** The runtime's parts besides `roles`. */
export const RUNTIME_CONFIG: readonly ConfigPart[] = [
  { section: 'logLevel', schema: logLevelSchema },
  { section: 'dataDir', schema: dataDirSchema, aliases: { 'gateway.dataDir': 'dataDir' }, env: { GATEWAY_DATA_DIR: { type: 'text' } } },
  { section: 'timeZone', schema: timeZoneSchema, aliases: { 'gateway.timeZone': 'timeZone' } },
  { section: 'communication', fields: { trustProxy: trustProxySchema } },
];

/** The cloud relay's /mcp port. */
export const DEFAULT_CLOUD_PORT = 8040;
/** The embedded broker's MQTT port. */
export const DEFAULT_CLOUD_MQTT_PORT = 1883;

/**
 * The sections whose owners have not declared them yet. A part's field
 * replaces the field of the same path here, and a part's section is added
 * (core/config-parts.ts).
 */
export const baseConfigObject = z
  .object({
    /** The cloud relay (`--role cloud`): its /mcp listener and its broker; it shares `gateway.dataDir` (database cloud.db). */
    cloud: z
      .object({
        host: z.string().default('0.0.0.0'),
        port: z.number().int().min(0).max(65535).default(DEFAULT_CLOUD_PORT),
        /** The embedded broker (aedes, MQTT 3.1.1) the gateways dial; ignored when `brokerUrl` names an external one. */
        mqttHost: z.string().default('0.0.0.0'),
        mqttPort: z.number().int().min(0).max(65535).default(DEFAULT_CLOUD_MQTT_PORT),
        /** The embedded broker serves mqtts with this PEM certificate and key (files); plain mqtt without. */
        mqttTls: z.object({ certFile: z.string().min(1).max(1024), keyFile: z.string().min(1).max(1024) }).strict().optional(),
        /** An external broker (Mosquitto, EMQX, HiveMQ) instead of the embedded one. */
        brokerUrl: z.string().regex(/^mqtts?:\/\/[^\s/]+$/, 'an mqtt:// or mqtts:// URL').optional(),
        /** The cloud's own user on an external broker; the password comes from CLOUD_BROKER_PASSWORD. */
        brokerUsername: z.string().min(1).max(128).optional(),
        topicPrefix: z.string().min(1).max(64).regex(/^[\w./-]+$/, 'letters, digits, _ . / -').default('cncgw/v1'),
        /** How long a relayed tool call may take. */
        callDeadlineMs: z.number().int().min(1000).max(300_000).default(30_000),
        /** How often gateways connected to the embedded broker are checked against revoked tokens. */
        revocationSweepMs: z.number().int().min(1000).max(3_600_000).default(10_000),
        /** The longest wait between two attempts to connect to an external broker (exponential backoff with jitter from 1 s up to this). */
        brokerReconnectMaxSeconds: z.number().int().min(1).max(3600).default(60),
        /** As `mcp.allowedOrigins` / `mcp.allowedHosts`, for the cloud's /mcp. */
        allowedOrigins: z.array(z.string().min(1)).default([]),
        allowedHosts: z.array(z.string().min(1)).default([]),
      })
      .strict()
      .default({ host: '0.0.0.0', port: DEFAULT_CLOUD_PORT, mqttHost: '0.0.0.0', mqttPort: DEFAULT_CLOUD_MQTT_PORT, topicPrefix: 'cncgw/v1', callDeadlineMs: 30_000, revocationSweepMs: 10_000, brokerReconnectMaxSeconds: 60, allowedOrigins: [], allowedHosts: [] }),
    mcp: z
      .object({
        /** Browser origins allowed to call /mcp (e.g. "https://dashboard.plant.example"); requests without Origin are allowed. */
        allowedOrigins: z.array(z.string().min(1)).default([]),
        /** Host header values allowed for /mcp (e.g. "gateway-01:8080"); empty allows any (DNS-rebinding protection then rests on Origin). */
        allowedHosts: z.array(z.string().min(1)).default([]),
      })
      .strict()
      .default({ allowedOrigins: [], allowedHosts: [] }),
    /**
     * The gateway's outbound link to a cloud relay (docs/cloud-relay.md): it
     * dials the broker and answers tool calls the cloud sends. Absent: no link.
     */
    cloudLink: z
      .object({
        /** The broker, mqtt://host:1883 or mqtts://host:8883. */
        brokerUrl: z.string().regex(/^mqtts?:\/\/[^\s/]+$/, 'an mqtt:// or mqtts:// URL such as mqtt://cloud.example:1883'),
        /** The gateway token the cloud made for this gateway (cgw_…); or set GATEWAY_CLOUD_TOKEN instead of writing it here. */
        accessToken: z.string().min(1).max(256).optional(),
        /** The user whose authorised API list cloud calls run with; the built-in administrator by default. */
        user: z.string().min(1).max(128).default('admin'),
        /** MQTT protocol: 5 (request/response properties), falling back to 3.1.1 when the broker refuses 5 (the embedded aedes). */
        protocolVersion: z.union([z.literal(5), z.literal(4)]).default(5),
        topicPrefix: z.string().min(1).max(64).regex(/^[\w./-]+$/, 'letters, digits, _ . / -').default('cncgw/v1'),
        /** A PEM file of the CA (or the certificate itself) to trust for an mqtts broker with a private certificate. */
        caFile: z.string().min(1).max(1024).optional(),
        /** MQTT keepalive: a broker that hears nothing for 1.5 times this publishes the gateway's will (offline). */
        keepaliveSeconds: z.number().int().min(5).max(600).default(15),
        /** The longest wait between two attempts to connect (exponential backoff with jitter from 1 s up to this). */
        reconnectMaxSeconds: z.number().int().min(1).max(3600).default(60),
      })
      .strict()
      .optional(),
  })
  .strict();

/** Environment variables overriding fields of the base sections, until their owners declare them on their parts; a part declaring the field drops its entry here. */
export const BASE_ENVIRONMENT: Readonly<Record<string, { path: string; type: 'port' }>> = {
  CLOUD_PORT: { path: 'cloud.port', type: 'port' },
  CLOUD_MQTT_PORT: { path: 'cloud.mqttPort', type: 'port' },
};

/**
 * The parsed configuration as code reads it directly: the runtime's keys
 * and the base sections. Every other section is read through its part
 * (`readPart`, or a plugin's `settings`).
 */
export type GatewayConfig = z.output<typeof baseConfigObject> & {
  roles: string[];
  logLevel: z.output<typeof logLevelSchema>;
  dataDir: string;
  timeZone: string;
  communication: { trustProxy: z.output<typeof trustProxySchema> };
  /**
   * Read by code that has not moved to the runtime keys and the parts yet;
   * `gateway.dataDir` and `gateway.timeZone` hold the values of `dataDir`
   * and `timeZone`, whichever spelling the file used.
   * @deprecated read `dataDir` and `timeZone`, and a part's settings (readPart).
   */
  gateway: { dataDir: string; timeZone: string };
  /** @deprecated read the auth plugin's settings. */
  security: { securityControl: boolean };
};

/** @deprecated import from core/roles/programs/config.ts. */
export type { ProgramsWebhookSettings } from '../core/roles/programs/config.js';

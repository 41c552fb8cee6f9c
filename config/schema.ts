/**
 * The configuration file's schema. The machine and group entries (also the
 * HTTP API's bodies and the stored fleet) are the gateway's:
 * core/roles/gateway/machine-config.ts.
 */
import { z } from 'zod';
import { groupConfigSchema, machineConfigSchema } from '../core/roles/gateway/machine-config.js';

/** How long, and how many rows of, one data class's history is kept. 0 means no limit. */
const retentionLimitSchema = z
  .object({
    maxAgeDays: z.number().min(0).max(36_500).default(0),
    maxRows: z.number().int().min(0).default(0),
  })
  .strict();

export const retentionSchema = z
  .object({
    /** How often retention runs, seconds. */
    intervalSec: z.number().int().min(10).max(86_400).default(3600),
    /** Limits for every class without its own entry. */
    default: retentionLimitSchema.default({ maxAgeDays: 365, maxRows: 0 }),
    /** Limits per data class, e.g. { "Heartbeat": { "maxAgeDays": 30 } }. */
    classes: z.record(z.string().min(1), retentionLimitSchema).default({ Heartbeat: { maxAgeDays: 30, maxRows: 0 } }),
  })
  .strict();
export type RetentionConfig = z.output<typeof retentionSchema>;

function isTimeZone(value: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: value });
    return true;
  } catch {
    return false;
  }
}

/** The services one process can run (`--role`, config `roles`): the machine gateway and the program version service. */
export const ROLE_NAMES = ['gateway', 'programs', 'cloud'] as const;
export type RoleName = (typeof ROLE_NAMES)[number];
/** The roles `npm start` runs when neither `--role` nor the config's `roles` names any: the cloud runs elsewhere, on its own. */
export const DEFAULT_ROLES: readonly RoleName[] = ['gateway', 'programs'];

/** The cloud relay's /mcp port. */
export const DEFAULT_CLOUD_PORT = 8040;
/** The embedded broker's MQTT port. */
export const DEFAULT_CLOUD_MQTT_PORT = 1883;

/** The program version service's port (its /api/v1, /api/docs and /openapi/v1.json). */
export const DEFAULT_PROGRAMS_PORT = 8030;

/** Where the program service's webhooks may deliver (docs/programs-webhooks.md, "Targets"). */
export const programsWebhooksSchema = z
  .object({
    /** Also deliver to private, unique-local, carrier-grade NAT and loopback addresses (receivers inside the plant). */
    allowPrivateNetworks: z.boolean().default(false),
  })
  .strict();
export type ProgramsWebhookSettings = z.output<typeof programsWebhooksSchema>;

/**
 * The sections of the configuration file. Plugins and roles may declare
 * parts of their own (core/config-parts.ts): a part's field replaces the
 * field of the same path here, and a part's section is added.
 */
export const baseConfigObject = z
  .object({
    /** The services this process runs when no `--role` is given; both by default. */
    roles: z
      .array(z.enum(ROLE_NAMES))
      .min(1, 'roles must name at least one of "gateway", "programs", "cloud"')
      .default([...DEFAULT_ROLES])
      .superRefine((roles, ctx) => {
        roles.forEach((role, i) => {
          if (roles.indexOf(role) !== i) ctx.addIssue({ code: 'custom', path: [i], input: role, message: `role '${role}' is named twice; name each role once` });
        });
      }),
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
    /** The program version service's listener; it shares `gateway.dataDir` (database programs.db) and `gateway.timeZone`. */
    programs: z
      .object({
        host: z.string().default('0.0.0.0'),
        port: z.number().int().min(0).max(65535).default(DEFAULT_PROGRAMS_PORT),
        webhooks: programsWebhooksSchema.default({ allowPrivateNetworks: false }),
      })
      .strict()
      .default({ host: '0.0.0.0', port: DEFAULT_PROGRAMS_PORT, webhooks: { allowPrivateNetworks: false } }),
    gateway: z
      .object({
        name: z.string().min(1).default('gateway'),
        alias: z.string().default(''),
        /** Directory for the database, keys and certificates. */
        dataDir: z.string().min(1).default('./data'),
        /** IANA time zone; empty means the system's. */
        timeZone: z
          .string()
          .default('')
          .refine((tz) => tz === '' || isTimeZone(tz), 'timeZone must be an IANA time zone such as Europe/Berlin or UTC'),
      })
      .strict()
      .default({ name: 'gateway', alias: '', dataDir: './data', timeZone: '' }),
    communication: z
      .object({
        host: z.string().default('0.0.0.0'),
        port: z.number().int().min(0).max(65535).default(8080),
        enableIpWhiteList: z.boolean().default(false),
        ipWhiteList: z.array(z.string()).default([]),
        /**
         * Which proxies may set X-Forwarded-For: false (none, the default: the source IP is
         * the TCP peer), or a list of proxy addresses/CIDR ranges.
         */
        trustProxy: z.union([z.literal(false), z.array(z.string().min(1)).min(1)]).default(false),
      })
      .strict()
      .default({ host: '0.0.0.0', port: 8080, enableIpWhiteList: false, ipWhiteList: [], trustProxy: false }),
    security: z
      .object({ securityControl: z.boolean().default(true) })
      .strict()
      .default({ securityControl: true }),
    history: z
      .object({
        flushRows: z.number().int().min(1).max(5000).default(500),
        flushIntervalMs: z.number().int().min(10).max(1000).default(750),
        heartbeatSec: z.number().int().min(1).default(60),
        retention: retentionSchema.default(retentionSchema.parse({})),
      })
      .strict()
      .default({ flushRows: 500, flushIntervalMs: 750, heartbeatSec: 60, retention: retentionSchema.parse({}) }),
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
    logLevel: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
    machines: z.array(machineConfigSchema).default([]),
    groups: z.array(groupConfigSchema).default([]),
  })
  .strict();

/** The rules across the `machines` and `groups` entries: each ID once, and a group's members are machines listed. */
export function checkFleetEntries(config: Pick<z.output<typeof baseConfigObject>, 'machines' | 'groups'>, ctx: z.RefinementCtx): void {
  const seen = new Set<string>();
  config.machines.forEach((m, i) => {
    if (seen.has(m.machineID)) ctx.addIssue({ code: 'custom', path: ['machines', i, 'machineID'], message: `duplicate machineID '${m.machineID}'` });
    seen.add(m.machineID);
  });
  const groups = new Set<string>();
  config.groups.forEach((g, i) => {
    if (groups.has(g.groupID)) ctx.addIssue({ code: 'custom', path: ['groups', i, 'groupID'], message: `duplicate groupID '${g.groupID}'` });
    groups.add(g.groupID);
    g.machineIDs.forEach((id, j) => {
      if (!seen.has(id)) ctx.addIssue({ code: 'custom', path: ['groups', i, 'machineIDs', j], message: `unknown machineID '${id}'; accepted: machineIDs listed under machines` });
    });
  });
}

/** The configuration with no part of a plugin or role: the base sections and the fleet rules. */
export const gatewayConfigSchema = baseConfigObject.superRefine(checkFleetEntries);
export type GatewayConfig = z.output<typeof gatewayConfigSchema>;

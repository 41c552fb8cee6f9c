/**
 * The gateway configuration schema. The config file, the HTTP API's machine
 * and group bodies, and the stored fleet are all parsed by these schemas.
 */
import { z } from 'zod';

export const MACHINE_TASK_CLASSES = ['CNCStatus', 'Count', 'Cycle', 'TimeData', 'ToolLife', 'OEE'] as const;
export type MachineTaskClass = (typeof MACHINE_TASK_CLASSES)[number];

export const MACHINE_TYPES = ['lathe', 'mill', 'machiningCenter', 'turnMill', 'grinder', 'other'] as const;

/** Default sampling interval per task class, milliseconds. */
export const DEFAULT_TASK_INTERVAL_MS: Record<MachineTaskClass, number> = {
  CNCStatus: 1000,
  Count: 5000,
  Cycle: 5000,
  TimeData: 10_000,
  ToolLife: 30_000,
  OEE: 60_000,
};

/** Longest machineID or groupID. */
export const ID_MAX_LENGTH = 64;
/** What a machineID or groupID may be; every interface and MCP tool taking one checks it with the schemas below. */
export const ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;

const idSchema = (field: string) => {
  const rule = `${field} must be 1-${ID_MAX_LENGTH} characters of letters, digits, '_', '.' or '-', starting with a letter or digit (pattern ${ID_PATTERN.source})`;
  // max first: an over-long value is refused by its length, before the pattern looks at it.
  return z.string().max(ID_MAX_LENGTH, rule).regex(ID_PATTERN, rule);
};

/** A machineID: the one schema for creating a machine and for naming one in any input. */
export const machineIdSchema = idSchema('machineID');
/** A groupID: the one schema for creating a group and for naming one in any input. */
export const groupIdSchema = idSchema('groupID');

const taskSchema = (cls: MachineTaskClass) =>
  z
    .object({
      enabled: z.boolean().default(true),
      intervalMs: z.number().int().min(100).max(86_400_000).default(DEFAULT_TASK_INTERVAL_MS[cls]),
    })
    .strict();

const tasksShape = Object.fromEntries(
  MACHINE_TASK_CLASSES.map((cls) => [cls, taskSchema(cls).default({ enabled: true, intervalMs: DEFAULT_TASK_INTERVAL_MS[cls] })]),
) as { [K in MachineTaskClass]: z.ZodDefault<ReturnType<typeof taskSchema>> };

export const machineTasksSchema = z.object(tasksShape).strict();
export type MachineTasks = z.output<typeof machineTasksSchema>;

export const connectionPolicySchema = z
  .object({
    /** First reconnect delay. */
    backoffBaseMs: z.number().int().min(10).default(1000),
    /** Upper bound of the reconnect delay. */
    backoffMaxMs: z.number().int().min(10).default(30_000),
    /** Failed attempts after which the connection is reported offline rather than backing off. */
    offlineAfterAttempts: z.number().int().min(1).default(3),
    /** Watchdog over a driver's connect(); drivers keep their own, usually shorter, timeouts. */
    connectTimeoutMs: z.number().int().min(10).default(5000),
    /** Watchdog over one task sample. */
    requestTimeoutMs: z.number().int().min(10).default(5000),
    /** Consecutive failed samples after which the connection is treated as lost. */
    failuresBeforeLost: z.number().int().min(1).default(3),
  })
  .strict();

export const machineConfigSchema = z
  .object({
    machineID: machineIdSchema,
    name: z.string().min(1).max(128),
    system: z.string().max(64).default(''),
    model: z.string().max(64).default(''),
    machineType: z.enum(MACHINE_TYPES).default('other'),
    ip: z.string().max(255).default('127.0.0.1'),
    port: z.number().int().min(0).max(65535).default(0),
    isActive: z.boolean().default(true),
    /** Driver scheme, e.g. simulator, opcua, modbus, mqtt, focas. */
    driver: z.string().min(1).default('simulator'),
    /** Options of the driver, checked against the driver's own schema. */
    driverOptions: z.record(z.string(), z.unknown()).default({}),
    /** Controller credential; write-only. */
    password: z.string().max(256).optional(),
    /** File-server credential; write-only. */
    fileServerPassword: z.string().max(256).optional(),
    /** Ideal cycle time in seconds, used by OEE performance. */
    idealCycleTimeSec: z.number().positive().optional(),
    tasks: machineTasksSchema.default(machineTasksSchema.parse({})),
    connection: connectionPolicySchema.default(connectionPolicySchema.parse({})),
  })
  .strict();
export type MachineConfig = z.output<typeof machineConfigSchema>;
export type MachineConfigInput = z.input<typeof machineConfigSchema>;

/** Fields that are accepted on write and never returned. */
export const WRITE_ONLY_MACHINE_FIELDS = ['password', 'fileServerPassword'] as const;

export const GROUP_TASK_CLASSES = ['GroupCount', 'GroupCumulativeTime', 'GroupOEE'] as const;
export type GroupTaskClass = (typeof GROUP_TASK_CLASSES)[number];

/** Default refresh interval per group task class, milliseconds. */
export const DEFAULT_GROUP_TASK_INTERVAL_MS: Record<GroupTaskClass, number> = {
  GroupCount: 10_000,
  GroupCumulativeTime: 30_000,
  GroupOEE: 60_000,
};

const groupTaskSchema = (cls: GroupTaskClass) =>
  z
    .object({
      enabled: z.boolean().default(true),
      intervalMs: z.number().int().min(1000).max(86_400_000).default(DEFAULT_GROUP_TASK_INTERVAL_MS[cls]),
    })
    .strict();

const groupTasksShape = Object.fromEntries(
  GROUP_TASK_CLASSES.map((cls) => [cls, groupTaskSchema(cls).default({ enabled: true, intervalMs: DEFAULT_GROUP_TASK_INTERVAL_MS[cls] })]),
) as { [K in GroupTaskClass]: z.ZodDefault<ReturnType<typeof groupTaskSchema>> };

export const groupTasksSchema = z.object(groupTasksShape).strict();
export type GroupTasks = z.output<typeof groupTasksSchema>;

export const groupConfigSchema = z
  .object({
    groupID: groupIdSchema,
    name: z.string().min(1).max(128),
    isActive: z.boolean().default(true),
    machineIDs: z.array(machineIdSchema).default([]),
    tasks: groupTasksSchema.default(groupTasksSchema.parse({})),
  })
  .strict();
export type GroupConfig = z.output<typeof groupConfigSchema>;

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

export const gatewayConfigSchema = z
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
  .strict()
  .superRefine((config, ctx) => {
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
  });
export type GatewayConfig = z.output<typeof gatewayConfigSchema>;

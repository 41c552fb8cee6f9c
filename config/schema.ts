/**
 * The runtime's part of the configuration file: the keys core itself reads.
 * Which roles run (`roles`, named after core/roles/index.ts), the log level,
 * the data directory and time zone every role shares (`dataDir`,
 * `timeZone`; formerly `gateway.dataDir` and `gateway.timeZone`, still read
 * with a deprecation line), the proxies every listener trusts
 * (`communication.trustProxy`), what every TLS listener accepts (`tls`:
 * the minimum version and the TLS 1.2 suites), and tracing (`telemetry`,
 * docs/tracing.md).
 *
 * Every other section is declared by its owner, a role's wing or a plugin
 * (core/config/config-parts.ts), and the file is parsed once with all of them.
 */
import { z } from 'zod';
import type { ConfigPart } from '../core/config/config-parts.js';
import { TELEMETRY_CONFIG, type TelemetrySection } from '../core/telemetry/settings.js';
import { tlsPolicySchema, type TlsPolicy } from '../core/http/tls.js';

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
/** The token a Prometheus scrape of /metrics presents; empty: one made at the first start (core/telemetry/metrics-token.ts). Checked where it is used, so its value never appears in a config error. */
const metricsTokenSchema = z.string().max(512).default('');
/** A file the log is appended to instead of stdout (JSON lines, reopened on SIGHUP); empty: stdout. */
const logFileSchema = z.string().max(4096).default('');
/** Which proxies may set X-Forwarded-For: false (none, the default: the source IP is the TCP peer), or a list of proxy addresses/CIDR ranges. */
const trustProxySchema = z.union([z.literal(false), z.array(z.string().min(1)).min(1)]).default(false);

/** The runtime's parts besides `roles`. */
export const RUNTIME_CONFIG: readonly ConfigPart[] = [
  { section: 'logLevel', schema: logLevelSchema },
  { section: 'logFile', schema: logFileSchema, env: { LOG_FILE: { type: 'text' } } },
  { section: 'metricsToken', schema: metricsTokenSchema, env: { METRICS_TOKEN: { type: 'text' } } },
  { section: 'dataDir', schema: dataDirSchema, aliases: { 'gateway.dataDir': 'dataDir' }, env: { GATEWAY_DATA_DIR: { type: 'text' } } },
  { section: 'timeZone', schema: timeZoneSchema, aliases: { 'gateway.timeZone': 'timeZone' } },
  { section: 'communication', fields: { trustProxy: trustProxySchema } },
  TELEMETRY_CONFIG,
  { section: 'tls', schema: tlsPolicySchema },
];

/** The cloud relay's /mcp port. */
export const DEFAULT_CLOUD_PORT = 8040;
/** The embedded broker's MQTT port. */
export const DEFAULT_CLOUD_MQTT_PORT = 1883;

/**
 * The parsed configuration as code reads it directly: the runtime's keys.
 * Every other section is read through its part (`readPart`, or a plugin's
 * `settings`).
 */
export type GatewayConfig = {
  roles: string[];
  logLevel: z.output<typeof logLevelSchema>;
  logFile: string;
  metricsToken: string;
  dataDir: string;
  timeZone: string;
  communication: { trustProxy: z.output<typeof trustProxySchema> };
  /** Tracing (core/telemetry/settings.ts; the OTEL_* variables override it). */
  telemetry: TelemetrySection;
  /** What every role's TLS listener accepts: the oldest protocol version and the TLS 1.2 suites (core/http/tls.ts). */
  tls: TlsPolicy;
};

/**
 * Where tracing is configured: the standard OpenTelemetry variables
 * (OTEL_EXPORTER_OTLP_ENDPOINT, …) and the config's `telemetry` section.
 * A variable that is set wins over the section's field, as the other
 * environment overrides do (GATEWAY_PORT over `communication.port`).
 * Tracing is off unless an endpoint is given by either, and always off with
 * OTEL_SDK_DISABLED=true or OTEL_TRACES_EXPORTER=none (docs/tracing.md).
 *
 * A mistake in the section is named by its path by the config schema; a
 * mistake in a variable is a ConfigError naming the variable.
 */
import { z } from 'zod';
import type { ConfigPart } from '../config/config-parts.js';
import { ConfigError } from '../config/config-error.js';
import { describeFound } from '../interfaces/schema-errors.js';

export const OTLP_PROTOCOLS = ['http/protobuf', 'http/json'] as const;
export const SAMPLERS = ['parentbased_traceidratio', 'parentbased_always_on', 'parentbased_always_off', 'traceidratio', 'always_on', 'always_off'] as const;
export type OtlpProtocol = (typeof OTLP_PROTOCOLS)[number];
export type SamplerName = (typeof SAMPLERS)[number];

/** Longest text of a variable quoted back in an error. */
const QUOTED_MAX_CHARS = 120;

const pairsSchema = z.record(z.string().min(1).max(256), z.string().max(4096));

/** The `telemetry` section; every field optional, the variables override it. */
export const TELEMETRY_CONFIG: ConfigPart = {
  section: 'telemetry',
  fields: {
    /** The OTLP/HTTP base URL; traces go to `<endpoint>/v1/traces`. */
    endpoint: z.url({ protocol: /^https?$/ }).optional(),
    /** The full URL traces are posted to (wins over `endpoint`). */
    tracesEndpoint: z.url({ protocol: /^https?$/ }).optional(),
    protocol: z.enum(OTLP_PROTOCOLS).default('http/protobuf'),
    /** Headers sent with every export (an API key of a hosted backend); never logged. */
    headers: pairsSchema.default({}),
    /** Replaces `cncgw` in the per-role names (`<serviceName>-gateway`), or names the service of a process running one role. */
    serviceName: z.string().min(1).max(256).optional(),
    sampler: z.enum(SAMPLERS).default('parentbased_traceidratio'),
    /** The ratio of root traces kept, 0 to 1. */
    samplerArg: z.number().min(0).max(1).default(1),
    resourceAttributes: pairsSchema.default({}),
  },
};

/** The `telemetry` section as parsed. */
export interface TelemetrySection {
  endpoint?: string | undefined;
  tracesEndpoint?: string | undefined;
  protocol: OtlpProtocol;
  headers: Record<string, string>;
  serviceName?: string | undefined;
  sampler: SamplerName;
  samplerArg: number;
  resourceAttributes: Record<string, string>;
}

/** What the SDK is started with once tracing is on. */
export interface TelemetrySettings {
  /** The URL traces are posted to. */
  tracesUrl: string;
  protocol: OtlpProtocol;
  headers: Record<string, string>;
  /** The service name of each role this process runs. */
  serviceNames: Record<string, string>;
  sampler: SamplerName;
  samplerArg: number;
  resourceAttributes: Record<string, string>;
}

const variableError = (variable: string, value: string, expected: string) =>
  new ConfigError('(environment)', [`${variable}: found ${describeFound(value.slice(0, QUOTED_MAX_CHARS))}; expected ${expected}`]);

/** `k1=v1,k2=v2` (values percent-decoded), as the W3C baggage format OTEL_*_HEADERS and OTEL_RESOURCE_ATTRIBUTES use. */
export function parsePairs(variable: string, text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const item of text.split(',')) {
    if (item.trim() === '') continue;
    const at = item.indexOf('=');
    const key = at > 0 ? item.slice(0, at).trim() : '';
    if (!key) throw new ConfigError('(environment)', [`${variable}: an item is not key=value; expected a comma list such as key1=value1,key2=value2`]);
    try {
      out[key] = decodeURIComponent(item.slice(at + 1).trim());
    } catch {
      throw new ConfigError('(environment)', [`${variable}: the value of '${key.slice(0, QUOTED_MAX_CHARS)}' is not percent-encoded correctly`]);
    }
  }
  return out;
}

function oneOf<T extends string>(variable: string, value: string | undefined, accepted: readonly T[]): T | undefined {
  if (value === undefined || value === '') return undefined;
  const v = value.trim().toLowerCase();
  if ((accepted as readonly string[]).includes(v)) return v as T;
  throw variableError(variable, value, `one of ${accepted.map((a) => `"${a}"`).join(', ')}`);
}

function urlVariable(variable: string, value: string | undefined): string | undefined {
  if (value === undefined || value.trim() === '') return undefined;
  try {
    const url = new URL(value.trim());
    if (url.protocol === 'http:' || url.protocol === 'https:') return url.href;
  } catch {
    // reported below
  }
  throw variableError(variable, value, 'an http:// or https:// URL such as http://localhost:4318');
}

function samplerArgVariable(value: string | undefined): number | undefined {
  if (value === undefined || value.trim() === '') return undefined;
  const n = Number(value);
  if (Number.isFinite(n) && n >= 0 && n <= 1) return n;
  throw variableError('OTEL_TRACES_SAMPLER_ARG', value, 'a number from 0 to 1 (the ratio of traces kept)');
}

/** The traces URL: the traces endpoint as given, or the base endpoint + `/v1/traces`; undefined when neither is set. */
function tracesUrl(env: NodeJS.ProcessEnv, section: TelemetrySection | undefined): string | undefined {
  const full = urlVariable('OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) ?? section?.tracesEndpoint;
  if (full) return full;
  const base = urlVariable('OTEL_EXPORTER_OTLP_ENDPOINT', env.OTEL_EXPORTER_OTLP_ENDPOINT) ?? section?.endpoint;
  return base ? `${base.replace(/\/+$/, '')}/v1/traces` : undefined;
}

/** `cncgw-<role>` for each role, or the configured name (alone for one role, as the prefix for several). */
export function serviceNames(roles: readonly string[], configured: string | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const role of roles) out[role] = configured === undefined ? `cncgw-${role}` : roles.length === 1 ? configured : `${configured}-${role}`;
  return out;
}

/**
 * The settings tracing starts with, or undefined when it stays off (no
 * endpoint, OTEL_SDK_DISABLED=true, OTEL_TRACES_EXPORTER=none). `roles` are
 * the roles this process runs.
 */
export function resolveTelemetry(section: TelemetrySection | undefined, env: NodeJS.ProcessEnv, roles: readonly string[]): TelemetrySettings | undefined {
  if (oneOf('OTEL_SDK_DISABLED', env.OTEL_SDK_DISABLED, ['true', 'false']) === 'true') return undefined;
  if (oneOf('OTEL_TRACES_EXPORTER', env.OTEL_TRACES_EXPORTER, ['otlp', 'none']) === 'none') return undefined;
  const url = tracesUrl(env, section);
  if (!url) return undefined;
  const protocol = oneOf('OTEL_EXPORTER_OTLP_TRACES_PROTOCOL', env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL, OTLP_PROTOCOLS) ?? oneOf('OTEL_EXPORTER_OTLP_PROTOCOL', env.OTEL_EXPORTER_OTLP_PROTOCOL, OTLP_PROTOCOLS);
  const headerVariable = env.OTEL_EXPORTER_OTLP_TRACES_HEADERS ? 'OTEL_EXPORTER_OTLP_TRACES_HEADERS' : 'OTEL_EXPORTER_OTLP_HEADERS';
  const headers = { ...section?.headers, ...parsePairs(headerVariable, env[headerVariable] ?? '') };
  const name = env.OTEL_SERVICE_NAME?.trim() || section?.serviceName;
  return {
    tracesUrl: url,
    protocol: protocol ?? section?.protocol ?? 'http/protobuf',
    headers,
    serviceNames: serviceNames(roles, name),
    sampler: oneOf('OTEL_TRACES_SAMPLER', env.OTEL_TRACES_SAMPLER, SAMPLERS) ?? section?.sampler ?? 'parentbased_traceidratio',
    samplerArg: samplerArgVariable(env.OTEL_TRACES_SAMPLER_ARG) ?? section?.samplerArg ?? 1,
    resourceAttributes: { ...section?.resourceAttributes, ...parsePairs('OTEL_RESOURCE_ATTRIBUTES', env.OTEL_RESOURCE_ATTRIBUTES ?? '') },
  };
}

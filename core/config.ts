/**
 * Loads the gateway config: the file (default `config/default.json`, or
 * `--config FILE`), then the environment overrides GATEWAY_PORT,
 * GATEWAY_DATA_DIR and PROGRAMS_PORT, then the schema: the base
 * (config/schema.ts) with the parts plugins and roles declare
 * (core/config-parts.ts; core/roles/index.ts binds every part of the build
 * to these functions). `--role` selects the services to run over the file's
 * `roles`. A mistake is a ConfigError naming the file, the path, what was
 * found and what is accepted.
 */
import { readFileSync } from 'node:fs';
import { resolve, join } from 'node:path';
import { ROLE_NAMES, type GatewayConfig, type RoleName } from '../config/schema.js';
import { configSchema, type OwnedConfigPart } from './config-parts.js';
import { describeFound, describeIssues } from './schema-errors.js';
import { PACKAGE_ROOT } from './package-root.js';

export const DEFAULT_CONFIG_FILE = join(PACKAGE_ROOT, 'config', 'default.json');

export class ConfigError extends Error {
  constructor(
    readonly file: string,
    readonly problems: string[],
  ) {
    super(`invalid configuration in ${file}:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

// Which file each parsed config came from, so the gateway can name it when it applies the
// config's fleet without every caller passing the path along.
const sources = new WeakMap<GatewayConfig, string>();

/** The file a config was loaded from, or the label it was parsed under (`(inline)` by default). */
export function configSource(config: GatewayConfig): string {
  return sources.get(config) ?? '(inline)';
}

// The settings each parsed config file wrote itself (dotted paths two levels deep), as opposed to
// those the schema defaulted: a stored setting is overridden only by a value the user wrote.
const written = new WeakMap<GatewayConfig, ReadonlySet<string>>();

/** Whether the config file wrote `path` (e.g. `security.securityControl`) itself rather than taking its default. */
export function configWrites(config: GatewayConfig, path: string): boolean {
  return written.get(config)?.has(path) ?? false;
}

function writtenPaths(raw: Record<string, unknown>): Set<string> {
  const out = new Set<string>();
  for (const [key, value] of Object.entries(raw)) {
    out.add(key);
    if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
      for (const inner of Object.keys(value)) out.add(`${key}.${inner}`);
    }
  }
  return out;
}

/** A loaded config plus where it came from. */
export interface LoadedConfig {
  file: string;
  config: GatewayConfig;
}

/** Reads `--config FILE` or `--config=FILE` from argv. */
export function configFileFromArgs(argv: readonly string[]): string | undefined {
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--config') {
      const next = argv[i + 1];
      if (!next) throw new ConfigError('(command line)', ['--config: found nothing; expected a file path after --config']);
      return next;
    }
    if (arg?.startsWith('--config=')) return arg.slice('--config='.length);
  }
  return undefined;
}

/** A port from the environment, or undefined when the variable is unset or empty. */
function portFromEnv(env: NodeJS.ProcessEnv, name: string, file: string): number | undefined {
  const value = env[name];
  if (value === undefined || value === '') return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 65535) {
    throw new ConfigError(file, [`${name} (environment): found ${describeFound(value)}; expected an integer 0-65535`]);
  }
  return n;
}

/** A boolean from the environment (`true`/`1`, `false`/`0`); undefined when unset. */
function booleanFromEnv(env: NodeJS.ProcessEnv, name: string, file: string): boolean | undefined {
  const value = env[name];
  if (value === undefined || value === '') return undefined;
  if (value === 'true' || value === '1') return true;
  if (value === 'false' || value === '0') return false;
  throw new ConfigError(file, [`${name} (environment): found ${describeFound(value)}; expected true, false, 1 or 0`]);
}

/** The section `key` of the raw config, created when absent; a section that is not an object is left for the schema to report. */
function section(raw: Record<string, unknown>, key: string): Record<string, unknown> | undefined {
  const value = (raw[key] ??= {});
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}

/** The longest `--role` value quoted back in an error. */
const ROLE_ARG_MAX_CHARS = 200;
const ROLES_ACCEPTED = `one of ${ROLE_NAMES.map((r) => `"${r}"`).join('|')} (repeat --role, or give a comma list: --role ${ROLE_NAMES.join(',')})`;

/**
 * The roles named by `--role NAME` / `--role=NAME` on the command line
 * (repeatable, each a comma list), in the order of ROLE_NAMES; undefined when
 * there is none. A bad value is a ConfigError naming `--role`.
 */
export function rolesFromArgs(argv: readonly string[]): RoleName[] | undefined {
  const values: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--role') {
      const next = argv[i + 1];
      if (next === undefined || next.startsWith('--')) throw new ConfigError('(command line)', [`--role: found nothing; expected ${ROLES_ACCEPTED}`]);
      values.push(next);
      i++;
    } else if (arg?.startsWith('--role=')) {
      values.push(arg.slice('--role='.length));
    }
  }
  if (!values.length) return undefined;
  const named = new Set<RoleName>();
  const problems: string[] = [];
  for (const value of values) {
    for (const name of value.split(',')) {
      const role = name.trim();
      if ((ROLE_NAMES as readonly string[]).includes(role)) named.add(role as RoleName);
      else problems.push(`--role: found ${describeFound(role.slice(0, ROLE_ARG_MAX_CHARS))}; expected ${ROLES_ACCEPTED}`);
    }
  }
  if (problems.length) throw new ConfigError('(command line)', problems.slice(0, 5));
  return ROLE_NAMES.filter((r) => named.has(r));
}

/** The roles a process runs and what named them. */
export interface RoleSelection {
  roles: RoleName[];
  /** `--role` on the command line, the config file's `roles`, or the default (every role). */
  from: 'command line' | 'config' | 'default';
}

/** The roles this process runs: those of `--role`, else the config's `roles` (every role by default), in the order of ROLE_NAMES. */
export function selectRoles(argv: readonly string[], config: GatewayConfig): RoleSelection {
  const named = rolesFromArgs(argv);
  if (named) return { roles: named, from: 'command line' };
  return { roles: ROLE_NAMES.filter((r) => config.roles.includes(r)), from: configWrites(config, 'roles') ? 'config' : 'default' };
}

function applyEnvironment(raw: Record<string, unknown>, env: NodeJS.ProcessEnv, file: string): void {
  const port = portFromEnv(env, 'GATEWAY_PORT', file);
  if (port !== undefined) {
    const communication = section(raw, 'communication');
    if (communication) communication.port = port;
  }
  const cloudPort = portFromEnv(env, 'CLOUD_PORT', file);
  if (cloudPort !== undefined) {
    const cloud = section(raw, 'cloud');
    if (cloud) cloud.port = cloudPort;
  }
  const cloudMqttPort = portFromEnv(env, 'CLOUD_MQTT_PORT', file);
  if (cloudMqttPort !== undefined) {
    const cloud = section(raw, 'cloud');
    if (cloud) cloud.mqttPort = cloudMqttPort;
  }
  const programsPort = portFromEnv(env, 'PROGRAMS_PORT', file);
  if (programsPort !== undefined) {
    const programs = section(raw, 'programs');
    if (programs) programs.port = programsPort;
  }
  const allowPrivate = booleanFromEnv(env, 'PROGRAMS_WEBHOOKS_ALLOW_PRIVATE_NETWORKS', file);
  if (allowPrivate !== undefined) {
    const programs = section(raw, 'programs');
    const webhooks = programs && section(programs, 'webhooks');
    if (webhooks) webhooks.allowPrivateNetworks = allowPrivate;
  }
  const dataDir = env.GATEWAY_DATA_DIR;
  if (dataDir !== undefined && dataDir !== '') {
    const gateway = section(raw, 'gateway');
    if (gateway) gateway.dataDir = dataDir;
  }
}

/** Parses an already-read config object (used by tests and by `loadConfig`) with the base schema and `parts`. */
export function parseConfig(raw: unknown, file = '(inline)', env: NodeJS.ProcessEnv = {}, parts: readonly OwnedConfigPart[] = []): GatewayConfig {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    throw new ConfigError(file, ['(root): expected a JSON object']);
  }
  const copy = structuredClone(raw) as Record<string, unknown>;
  applyEnvironment(copy, env, file);
  const result = configSchema(parts).safeParse(copy, { reportInput: true });
  if (!result.success) throw new ConfigError(file, describeIssues(result.error.issues, copy));
  sources.set(result.data, file);
  written.set(result.data, writtenPaths(raw as Record<string, unknown>));
  return result.data;
}

/** Loads the config file named on the command line, or the default one, with the base schema and `parts`. */
export function loadConfig(argv: readonly string[] = process.argv.slice(2), env: NodeJS.ProcessEnv = process.env, parts: readonly OwnedConfigPart[] = []): LoadedConfig {
  const file = resolve(configFileFromArgs(argv) ?? DEFAULT_CONFIG_FILE);
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? 'read error';
    throw new ConfigError(file, [`(file): cannot read it (${code}); expected a readable JSON file`]);
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw new ConfigError(file, [`(file): not valid JSON (${(err as Error).message})`]);
  }
  return { file, config: parseConfig(raw, file, env, parts) };
}

/**
 * The bytes of a file a config field names (a certificate, a key), or an
 * error naming the field, the path and why it cannot be read.
 */
export function readConfigFile(path: string, field: string): Buffer {
  try {
    return readFileSync(path);
  } catch (err) {
    throw new Error(`${field}: cannot read '${path.slice(0, 256)}' (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`, { cause: err });
  }
}

/**
 * For command-line tools: the config as `npm start` reads it, or the exit
 * code 2 after printing the config mistake (with its path) to stderr.
 */
export function loadConfigForCli(argv: readonly string[], parts: readonly OwnedConfigPart[] = []): LoadedConfig | 2 {
  try {
    return loadConfig(argv, process.env, parts);
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\n`);
      return 2;
    }
    throw err;
  }
}

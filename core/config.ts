/**
 * Loads the gateway config: the file (default `config/default.json`, or
 * `--config FILE`), then the environment overrides GATEWAY_PORT and
 * GATEWAY_DATA_DIR, then the schema. A mistake is a ConfigError naming the
 * file, the path, what was found and what is accepted.
 */
import { readFileSync } from 'node:fs';
import { resolve, join } from 'node:path';
import { gatewayConfigSchema, type GatewayConfig } from '../config/schema.js';
import { describeIssues } from './schema-errors.js';
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

function applyEnvironment(raw: Record<string, unknown>, env: NodeJS.ProcessEnv, file: string): void {
  const port = env.GATEWAY_PORT;
  if (port !== undefined && port !== '') {
    const n = Number(port);
    if (!Number.isInteger(n) || n < 0 || n > 65535) {
      throw new ConfigError(file, [`GATEWAY_PORT (environment): found "${port}"; expected an integer 0-65535`]);
    }
    const communication = (raw.communication ??= {}) as Record<string, unknown>;
    communication.port = n;
  }
  const dataDir = env.GATEWAY_DATA_DIR;
  if (dataDir !== undefined && dataDir !== '') {
    const gateway = (raw.gateway ??= {}) as Record<string, unknown>;
    gateway.dataDir = dataDir;
  }
}

/** Parses an already-read config object (used by tests and by `loadConfig`). */
export function parseConfig(raw: unknown, file = '(inline)', env: NodeJS.ProcessEnv = {}): GatewayConfig {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    throw new ConfigError(file, ['(root): expected a JSON object']);
  }
  const copy = structuredClone(raw) as Record<string, unknown>;
  applyEnvironment(copy, env, file);
  const result = gatewayConfigSchema.safeParse(copy, { reportInput: true });
  if (!result.success) throw new ConfigError(file, describeIssues(result.error.issues, copy));
  sources.set(result.data, file);
  written.set(result.data, writtenPaths(raw as Record<string, unknown>));
  return result.data;
}

/** Loads the config file named on the command line, or the default one. */
export function loadConfig(argv: readonly string[] = process.argv.slice(2), env: NodeJS.ProcessEnv = process.env): LoadedConfig {
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
  return { file, config: parseConfig(raw, file, env) };
}

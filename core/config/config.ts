/**
 * Loads the configuration: the file (default `config/default.json`, or
 * `--config FILE`), its old spellings moved to their new paths, the
 * environment overrides the parts declare (GATEWAY_PORT, GATEWAY_DATA_DIR,
 * PROGRAMS_PORT, …), then the schema: every part the runtime, the roles and
 * their plugins declare (core/config/config-parts.ts; core/roles/index.ts binds every part of the build
 * to these functions). `--role` selects the services to run over the file's
 * `roles`. A mistake is a ConfigError naming the file, the path as the file
 * wrote it, what was found and what is accepted.
 */
import { readFileSync } from 'node:fs';
import { resolve, join } from 'node:path';
import type { GatewayConfig } from '../../config/schema.js';
import { assembleConfig, type OwnedConfigPart } from './config-parts.js';
import { applyEnvironment, issuesAsWritten, moveOldSpellings, oldSpellingNotice } from './config-overrides.js';
import { describeFound, describeIssues } from '../interfaces/schema-errors.js';
import { PACKAGE_ROOT } from '../runtime/package-root.js';
import { ConfigError } from './config-error.js';

export const DEFAULT_CONFIG_FILE = join(PACKAGE_ROOT, 'config', 'default.json');

// Its own file, so that what the config schema imports (the telemetry section) can throw it without a cycle.
export { ConfigError };

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

/** The longest `--role` value quoted back in an error. */
const ROLE_ARG_MAX_CHARS = 200;
const rolesAccepted = (names: readonly string[]) => `one of ${names.map((r) => `"${r}"`).join('|')} (repeat --role, or give a comma list: --role ${names.join(',')})`;

/**
 * The roles named by `--role NAME` / `--role=NAME` on the command line
 * (repeatable, each a comma list), in the order of `names` (the roles of
 * this build, core/roles/index.ts); undefined when there is none. A bad
 * value is a ConfigError naming `--role`.
 */
export function rolesFromArgs(argv: readonly string[], names: readonly string[]): string[] | undefined {
  const values: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--role') {
      const next = argv[i + 1];
      if (next === undefined || next.startsWith('--')) throw new ConfigError('(command line)', [`--role: found nothing; expected ${rolesAccepted(names)}`]);
      values.push(next);
      i++;
    } else if (arg?.startsWith('--role=')) {
      values.push(arg.slice('--role='.length));
    }
  }
  if (!values.length) return undefined;
  const named = new Set<string>();
  const problems: string[] = [];
  for (const value of values) {
    for (const name of value.split(',')) {
      const role = name.trim();
      if (names.includes(role)) named.add(role);
      else problems.push(`--role: found ${describeFound(role.slice(0, ROLE_ARG_MAX_CHARS))}; expected ${rolesAccepted(names)}`);
    }
  }
  if (problems.length) throw new ConfigError('(command line)', problems.slice(0, 5));
  return names.filter((r) => named.has(r));
}

/** The roles a process runs and what named them. */
export interface RoleSelection {
  roles: string[];
  /** `--role` on the command line, the config file's `roles`, or the default (the roles started by default). */
  from: 'command line' | 'config' | 'default';
}

/** The roles this process runs: those of `--role`, else the config's `roles` (its default unless written), in the order of `names`. */
export function selectRoles(argv: readonly string[], config: GatewayConfig, names: readonly string[]): RoleSelection {
  const named = rolesFromArgs(argv, names);
  if (named) return { roles: named, from: 'command line' };
  return { roles: names.filter((r) => config.roles.includes(r)), from: configWrites(config, 'roles') ? 'config' : 'default' };
}

// The deprecation lines of each parsed config (an old spelling the file used), for the banner and commands.
const notices = new WeakMap<GatewayConfig, readonly string[]>();

/** Lines to show about how the config file was written (an old spelling it still uses); empty for most files. */
export function configNotices(config: GatewayConfig): readonly string[] {
  return notices.get(config) ?? [];
}

/**
 * Parses an already-read config object (used by tests and by `loadConfig`)
 * with `parts`. The runtime's own keys are parts too, so a parse without the
 * build's parts (core/roles/index.ts `CONFIG_PARTS`) knows no key at all:
 * the parts are always given.
 */
export function parseConfig(raw: unknown, file: string, env: NodeJS.ProcessEnv, parts: readonly OwnedConfigPart[]): GatewayConfig {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    throw new ConfigError(file, ['(root): expected a JSON object']);
  }
  const { schema, aliases, overrides } = assembleConfig(parts);
  const copy = structuredClone(raw) as Record<string, unknown>;
  const moved = moveOldSpellings(copy, aliases);
  if (moved.problems.length) throw new ConfigError(file, moved.problems);
  // What the file wrote itself, under the names it has now; the environment's values are not the file's.
  const wrote = writtenPaths(copy);
  const environment = applyEnvironment(copy, env, overrides);
  if ('problem' in environment) throw new ConfigError(file, [environment.problem]);
  const result = schema.safeParse(copy, { reportInput: true });
  if (!result.success) throw new ConfigError(file, describeIssues(issuesAsWritten(result.error.issues, moved.used, environment.paths), copy));
  // The runtime's own parts (config/schema.ts) are always among `parts`, so their keys are in every result.
  const config = result.data as GatewayConfig;
  sources.set(config, file);
  written.set(config, wrote);
  notices.set(config, moved.used.map((alias) => oldSpellingNotice(file, alias)));
  return config;
}

/** Loads the config file named on the command line, or the default one, with the base schema and `parts`. */
export function loadConfig(argv: readonly string[], env: NodeJS.ProcessEnv, parts: readonly OwnedConfigPart[]): LoadedConfig {
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
 * For command-line tools: the config as `npm start` reads it (its notices,
 * such as an old spelling, printed to stderr), or the exit code 2 after
 * printing the config mistake (with its path) to stderr.
 */
export function loadConfigForCli(argv: readonly string[], parts: readonly OwnedConfigPart[], env: NodeJS.ProcessEnv = process.env): LoadedConfig | 2 {
  try {
    const loaded = loadConfig(argv, env, parts);
    for (const line of configNotices(loaded.config)) process.stderr.write(`${line}\n`);
    return loaded;
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\n`);
      return 2;
    }
    throw err;
  }
}

/**
 * Every role this build includes, in start order: the gateway first, so the
 * program service can reach it in-process. Adding a role is a folder under
 * core/roles/ with its definition, and one line here.
 *
 * The configuration is read with every part of every role here (its own
 * and its plugins'): `parseConfig`, `loadConfig` and `loadConfigForCli` of
 * core/config/config.ts bound to them, for the process, its commands and tests.
 */
import type { GatewayConfig } from '../../config/schema.js';
import { loadConfig as loadWithParts, loadConfigForCli as loadForCliWithParts, parseConfig as parseWithParts, type LoadedConfig } from '../config/config.js';
import { configPartsOf, keptFilesOf } from '../runtime/role.js';
import { cloudRole } from './cloud/definition.js';
import { gatewayRole } from './gateway/definition.js';
import { programsRole } from './programs/definition.js';

export const ROLES = [gatewayRole, programsRole, cloudRole] as const;

/** The configuration parts of every role and plugin of this build. */
export const CONFIG_PARTS = configPartsOf(ROLES);

/** What every role and plugin of this build keeps in the data directory: what backup copies and restore puts back (core/backup/kept-files.ts). */
export const KEPT_FILES = keptFilesOf(ROLES);

/** Parses an already-read config object with every part of the build. */
export function parseConfig(raw: unknown, file = '(inline)', env: NodeJS.ProcessEnv = {}): GatewayConfig {
  return parseWithParts(raw, file, env, CONFIG_PARTS);
}

/** Loads the config file named on the command line, or the default one, with every part of the build. */
export function loadConfig(argv: readonly string[] = process.argv.slice(2), env: NodeJS.ProcessEnv = process.env): LoadedConfig {
  return loadWithParts(argv, env, CONFIG_PARTS);
}

/** For commands: the config as `npm start` reads it, or 2 after printing the mistake. */
export function loadConfigForCli(argv: readonly string[], env: NodeJS.ProcessEnv = process.env): LoadedConfig | 2 {
  return loadForCliWithParts(argv, CONFIG_PARTS, env);
}

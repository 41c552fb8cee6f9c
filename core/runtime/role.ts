/**
 * A role is one definition (`RoleDefinition`): its name, its database file,
 * whether `npm start` runs it by default, where it stops among the others,
 * its plugins, and how it starts. The definitions live in the roles' wings
 * (core/roles/<name>/definition.ts) and are listed once, in start order, in
 * core/roles/index.ts; `startRoles` starts the selected ones in list order,
 * hands each what the roles before it offer, and gives back their banner
 * sections (list order) and their stop parts (by `stopRank`). When two or
 * more roles with a first administrator start together, it hands each the
 * same generated first-start password (core/auth/first-admin.ts) and adds the
 * section that prints it once, naming each console's login.
 */
import type { Logger } from 'pino';
import { rolesPart, RUNTIME_CONFIG, type GatewayConfig } from '../../config/schema.js';
import type { Command } from './commands.js';
import { keptPlan, RUNTIME_KEEPS, type KeptFiles, type KeptPlan } from '../backup/kept-files.js';
import { RUNTIME_OWNER, type ConfigPart, type OwnedConfigPart } from '../config/config-parts.js';
import type { GatewayLink } from '../gateway-link/types.js';
import type { Plugin } from './plugin-host.js';
import type { StopPart } from './process-signals.js';
import { SHARED_ADMIN_PASSWORD_ENV, SharedFirstPassword } from '../auth/first-admin.js';
import { sharedPasswordLines } from './startup-banner.js';
import { inRole } from '../telemetry/tracing.js';
import { StartCancelled } from './start-cancelled.js';

/** What a role that started offers the roles that start after it. */
export interface RoleOffers {
  /** The gateway in this process, reached in-process (the program service uses it). */
  'gateway-link': GatewayLink;
}

/** What a role's `start` is given. */
export interface RoleStartFacts {
  config: GatewayConfig;
  /** The config file's path, for messages and the banner. */
  file: string;
  /** The process's logger; a role logs through a child of it named after itself (the gateway, the first role, logs through it as it is). */
  logger: Logger;
  env: NodeJS.ProcessEnv;
  /** What the roles started before this one offer (start order is the list order of core/roles/index.ts). */
  offers: Partial<RoleOffers>;
  /** Every role compiled in, started or not (the cloud reads the gateway's declared tools). */
  definitions: readonly RoleDefinition[];
  /** The first-start password shared by the administrators of the roles this process starts, when it starts two or more that have one and ADMIN_PASSWORD is not set (core/auth/first-admin.ts). */
  sharedFirstPassword?: SharedFirstPassword;
  /** Ends the start: a stop signal arrived meanwhile (a role waiting for its database stops waiting, and throws StartCancelled). */
  signal?: AbortSignal;
}

/** A role that started and listens: its banner section, its part of the stop, and what the final log line reports of it. */
export interface StartedRole {
  banner: readonly string[];
  stop: StopPart;
  /** Fields for the `stopped cleanly` log line (e.g. the history writer's figures). */
  stoppedFacts?: () => Record<string, unknown>;
  /** What this role offers the roles that start after it. */
  offers?: Partial<RoleOffers>;
  /** The URL of the role's console (where its administrator logs in), for the shared first-start password's lines. */
  consoleUrl?: string;
}

export interface RoleDefinition {
  /** `--role NAME` and the config's `roles`: 'gateway', 'programs', 'cloud'. */
  readonly name: string;
  /** The role's SQLite file in the data directory, e.g. 'gateway.db'. */
  readonly databaseFile: string;
  /** Whether `npm start` runs it when neither `--role` nor the config's `roles` names any. */
  readonly startsByDefault: boolean;
  /** Whether the role has users with a first administrator, and what the banner calls its console ('fleet console'). */
  readonly firstAdministrator?: { readonly console: string };
  /** Lower stops first: a role stops before the roles it calls (programs 10, gateway 20, cloud 30). */
  readonly stopRank: number;
  /** The role's own parts of the configuration (its listener, its store; core/config/config-parts.ts); its plugins declare theirs. */
  readonly config: readonly ConfigPart[];
  /** The role's plugins (its composition root, compose.ts), booted in dependency order. */
  readonly plugins: readonly Plugin<never>[];
  /** The wing's own commands (`core/main.ts <name>`); its plugins declare theirs. */
  readonly commands: readonly Command[];
  /** Files the role itself keeps in the data directory besides `databaseFile` (core/backup/kept-files.ts); its plugins declare theirs. */
  readonly keeps?: KeptFiles;
  /**
   * The PostgreSQL connection string the role's database is on with this
   * configuration and environment, when it is not `databaseFile`: the backup
   * says to dump it with pg_dump, as it is not in the data directory.
   */
  sharedDatabase?(config: GatewayConfig, env: NodeJS.ProcessEnv): string | undefined;
  /** Opens the role's runtime, boots its plugins and listens; throws RoleStartError to stop the process with its exit code. */
  start(facts: RoleStartFacts): Promise<StartedRole>;
}

/** Declares a role; the identity function exists for type checking and readability. */
export function defineRole(definition: RoleDefinition): RoleDefinition {
  return definition;
}

/** The parts a plugin declares: none, one, or a list (core/runtime/plugin-host.ts). */
export function pluginParts(plugin: Plugin<never>): readonly ConfigPart[] {
  const { config } = plugin;
  return config === undefined ? [] : Array.isArray(config) ? config : [config as ConfigPart];
}

/**
 * Every configuration part of a build, with its owner: the runtime's
 * (config/schema.ts, with `roles` naming these roles), then each role's
 * own and its plugins'. All roles compiled in count, not only those that
 * run, so a mistake in any section stops every start.
 */
export function configPartsOf(roles: readonly RoleDefinition[]): OwnedConfigPart[] {
  const runtime = [rolesPart(roles.map((r) => r.name), roles.filter((r) => r.startsByDefault).map((r) => r.name)), ...RUNTIME_CONFIG];
  return [
    ...runtime.map((part): OwnedConfigPart => ({ owner: RUNTIME_OWNER, part })),
    ...roles.flatMap((role) => [
      ...role.config.map((part): OwnedConfigPart => ({ owner: { kind: 'role', name: role.name }, part })),
      ...role.plugins.flatMap((p) => pluginParts(p).map((part): OwnedConfigPart => ({ owner: { kind: 'plugin', name: p.name }, part }))),
    ]),
  ];
}

/**
 * Every command of a build: the runtime's own (`runtime`, e.g. backup),
 * then each role's and its plugins'. A name declared twice is a
 * programming mistake and throws, naming both places.
 */
export function commandsOf(roles: readonly RoleDefinition[], runtime: readonly Command[] = []): Command[] {
  const found = new Map<string, { command: Command; where: string }>();
  const byRole = roles.map((role) => [...role.commands.map((command) => ({ command, where: `role '${role.name}'` })), ...role.plugins.flatMap((p) => p.commands.map((command) => ({ command, where: `plugin '${p.name}'` })))]);
  for (const declared of [runtime.map((command) => ({ command, where: 'the runtime' })), ...byRole]) {
    for (const entry of declared) {
      const before = found.get(entry.command.name);
      if (before) throw new Error(`command '${entry.command.name}' is declared by ${before.where} and ${entry.where}`);
      found.set(entry.command.name, entry);
    }
  }
  return [...found.values()].map((e) => e.command);
}

/**
 * What a build keeps in the data directory (core/backup/kept-files.ts): per role
 * its database, its own files and its plugins', then the runtime's; each
 * path once.
 */
export function keptFilesOf(roles: readonly RoleDefinition[]): KeptPlan {
  return keptPlan([
    ...roles.flatMap((role) => [
      { owner: `role '${role.name}'`, keeps: { databases: [role.databaseFile], ...role.keeps } },
      ...role.plugins.flatMap((p) => (p.keeps ? [{ owner: `plugin '${p.name}'`, keeps: p.keeps }] : [])),
    ]),
    { owner: 'the runtime', keeps: RUNTIME_KEEPS },
  ]);
}

/** The roles of `roles` whose database is on PostgreSQL under `config` and `env`, with its connection string. */
export function sharedDatabasesOf(roles: readonly RoleDefinition[], config: GatewayConfig, env: NodeJS.ProcessEnv): { role: string; url: string }[] {
  return roles.flatMap((role) => {
    const url = role.sharedDatabase?.(config, env);
    return url ? [{ role: role.name, url }] : [];
  });
}

/** A role that could not start: exit 2 (as an invalid config) or 1 (e.g. its port is taken). */
export class RoleStartError extends Error {
  constructor(
    message: string,
    readonly exitCode: number,
  ) {
    super(message);
    this.name = 'RoleStartError';
  }
}

/** Where a role's listener address comes from: its config fields and the environment variable that overrides the port. */
export interface ListenSettings {
  host: string;
  port: number;
  hostField: string;
  portField: string;
  portVariable: string;
}

/**
 * A role's listener that could not open: exit 1. A taken port (the usual
 * case: a second instance on the same machine) says which variable or field
 * moves it; anything else names every setting of the address.
 */
export function listenFailed(role: string, file: string, at: ListenSettings, err: unknown): RoleStartError {
  const e = err as NodeJS.ErrnoException;
  const where = `${role} failed to listen on ${at.host}:${at.port}`;
  if (e.code === 'EADDRINUSE') {
    return new RoleStartError(`${where}: the port is in use by another process; choose another with ${at.portVariable}=<port> or ${at.portField} in ${file}`, 1);
  }
  return new RoleStartError(`${where}: ${e.message} (config ${file}: ${at.hostField}, ${at.portField} or ${at.portVariable})`, 1);
}

/** The roles a process started: their banner sections in start order, their stop parts in stop order. */
export interface RunningRoles {
  /** One section per role in start order, then the shared first-start password's section when a role took it. */
  banners: readonly (readonly string[])[];
  stopParts: readonly StopPart[];
  /** The `stopped cleanly` log line's fields, from every role. */
  stoppedFacts(): Record<string, unknown>;
}

/** The started roles by `stopRank` (stable: equal ranks stop in start order). */
function inStopOrder(started: readonly { definition: RoleDefinition; role: StartedRole }[]) {
  return [...started].sort((a, b) => a.definition.stopRank - b.definition.stopRank);
}

/**
 * Starts the roles of `definitions` named in `names`, in list order, each
 * given what the roles before it offer. When one fails, those already
 * started stop (by rank, failures logged) and the error is thrown on; so
 * they do when `facts.signal` ends the start (StartCancelled).
 */
export async function startRoles(
  definitions: readonly RoleDefinition[],
  names: readonly string[],
  facts: Omit<RoleStartFacts, 'offers' | 'definitions' | 'sharedFirstPassword'>,
): Promise<RunningRoles> {
  const started: { definition: RoleDefinition; role: StartedRole }[] = [];
  const offers: Partial<RoleOffers> = {};
  const selected = definitions.filter((d) => names.includes(d.name));
  const shared = sharedFirstPasswordFor(selected, facts.env);
  for (const definition of selected) {
    try {
      if (facts.signal?.aborted) throw new StartCancelled();
      // Whatever the role sets going (timers, listeners, actors) inherits its service for tracing.
      const role = await inRole(definition.name, () => definition.start({ ...facts, offers: { ...offers }, definitions, ...(shared ? { sharedFirstPassword: shared } : {}) }));
      started.push({ definition, role });
      Object.assign(offers, role.offers);
      // A stop that came while this role started: it stops too, with those before it.
      if (facts.signal?.aborted) throw new StartCancelled();
    } catch (err) {
      for (const { definition: d, role } of inStopOrder(started)) {
        await role.stop.stop().catch((stopErr: unknown) => facts.logger.error({ err: stopErr, role: d.name }, 'stop failed'));
      }
      throw err;
    }
  }
  return {
    banners: [...started.map((s) => s.role.banner), ...sharedPasswordSection(shared, started)],
    stopParts: inStopOrder(started).map((s) => s.role.stop),
    stoppedFacts: () => Object.assign({}, ...started.map((s) => s.role.stoppedFacts?.() ?? {})) as Record<string, unknown>,
  };
}

/**
 * One first-start password for the administrators of every role started
 * together, when two or more of them have one and ADMIN_PASSWORD does not
 * set it already; each role takes it only at its first start and only when
 * its own variable is not set (core/auth/first-admin.ts).
 */
function sharedFirstPasswordFor(selected: readonly RoleDefinition[], env: NodeJS.ProcessEnv): SharedFirstPassword | undefined {
  const withAdministrator = selected.filter((d) => d.firstAdministrator);
  if (withAdministrator.length < 2 || (env[SHARED_ADMIN_PASSWORD_ENV] ?? '') !== '') return undefined;
  return new SharedFirstPassword();
}

/** The banner section printing the shared password once, naming each login it serves; none when no role took it. */
function sharedPasswordSection(shared: SharedFirstPassword | undefined, started: readonly { definition: RoleDefinition; role: StartedRole }[]): string[][] {
  const takers = shared?.takenBy();
  if (!shared || !takers?.size) return [];
  const logins = started.flatMap(({ definition, role }) => {
    const username = takers.get(definition.name);
    return username === undefined ? [] : [{ console: definition.firstAdministrator?.console ?? definition.name, url: role.consoleUrl ?? '', username }];
  });
  return [sharedPasswordLines(shared.password, logins)];
}

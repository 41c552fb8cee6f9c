/**
 * Plugins are named, declare what they depend on, the schema migrations of
 * the tables they own, the part of the configuration they read, the MCP
 * tools they contribute and the commands they offer, and receive an
 * explicit context. Their migrations run first, in boot order; then their
 * tools are registered, in boot order; then they boot in dependency order
 * and stop in reverse order; a missing or cyclic dependency fails at start
 * with the names involved.
 */
import type { Logger } from 'pino';
import type { z } from 'zod';
import type { Command } from './commands.js';
import type { KeptFiles } from '../backup/kept-files.js';
import { configWrites as configWritesOf } from '../config/config.js';
import { readPart, type ConfigPart, type PartSettings } from '../config/config-parts.js';
import type { ToolDefinition } from '../mcp/tools.js';
import { BASE_SCHEMA_OWNER, type Migration } from '../store/migrations.js';
import { Readiness } from './health.js';
import { RoleMetrics } from '../telemetry/metrics.js';

/**
 * What every plugin is given by its role's runtime besides the role's
 * context: the role's metrics registry (`metrics.gauge({…, collect})`,
 * docs/operations.md "Metrics") and its readiness checks
 * (`readiness.add('drivers', check)`, "Health and readiness").
 */
export interface RoleFacilities {
  metrics: RoleMetrics;
  readiness: Readiness;
}

/** What a plugin's register() may return to be told when to stop. */
export interface PluginHandle {
  stop?(): Promise<void> | void;
}

/** What register() is given besides the role's context, for a plugin that declares a config part. */
export interface PartAccess<Settings> {
  /** The plugin's config part as parsed: its fields (defaults applied); undefined for an optional section that is absent. */
  settings: Settings;
  /** Whether the config file wrote the part's field itself rather than taking its default (the file wins over stored settings for what it writes). */
  configWrites(field: string): boolean;
}

export interface Plugin<Ctx> {
  name: string;
  dependsOn: readonly string[];
  /** Schema changes of the tables this plugin owns, recorded under its name; they run before any plugin registers. */
  migrations: readonly Migration[];
  /**
   * The part of the configuration this plugin reads (core/config/config-parts.ts),
   * if any, or its parts when it reads fields of several sections; given to
   * register() as `settings` (the fields of all its parts together, each
   * name once).
   */
  config?: ConfigPart | readonly ConfigPart[];
  /** MCP tools this plugin contributes; registered in boot order before any plugin registers. */
  tools: readonly ToolDefinition[];
  /** Commands of this plugin, run as `core/main.ts <name>` instead of starting the roles (core/runtime/commands.ts). */
  commands: readonly Command[];
  /** Files this plugin keeps in the data directory, which backup copies and restore puts back (core/backup/kept-files.ts). */
  keeps?: KeptFiles;
  register(ctx: Ctx & { logger: Logger } & RoleFacilities & Partial<PartAccess<unknown>>): Promise<PluginHandle | void> | PluginHandle | void;
}

/** register()'s context: the role's, the plugin's logger, and for a plugin with a config part its settings (in place of any `settings` of the role's context). */
export type RegisterContext<Ctx, S extends z.ZodRawShape, Optional extends boolean> = keyof S extends never
  ? Ctx & { logger: Logger } & RoleFacilities
  : Omit<Ctx, 'settings' | 'configWrites'> & { logger: Logger } & RoleFacilities & PartAccess<Optional extends true ? PartSettings<S> | undefined : PartSettings<S>>;

/**
 * Declares a plugin; the identity function exists for type inference and
 * readability. A plugin with a config part names its fields' type after the
 * context's, so register() sees its settings typed:
 * `definePlugin<GatewayContext, typeof NOTES_FIELDS>({ config: { section: 'notes', fields: NOTES_FIELDS }, … })`
 * (and `true` third for an optional section). A plugin reading fields of
 * several sections gives a list of parts and the type of all their fields
 * together (`typeof A_FIELDS & typeof B_FIELDS`).
 */
export function definePlugin<Ctx, S extends z.ZodRawShape = Record<never, never>, Optional extends boolean = false>(plugin: {
  name: string;
  dependsOn?: readonly string[];
  migrations?: readonly Migration[];
  config?: keyof S extends never ? ConfigPart | readonly ConfigPart[] : (ConfigPart<S> & { optional?: Optional }) | readonly ConfigPart[];
  tools?: readonly ToolDefinition[];
  commands?: readonly Command[];
  keeps?: KeptFiles;
  register(ctx: RegisterContext<Ctx, S, Optional>): Promise<PluginHandle | void> | PluginHandle | void;
}): Plugin<Ctx> {
  return { dependsOn: [], migrations: [], tools: [], commands: [], ...plugin } as unknown as Plugin<Ctx>;
}

/** Applies one owner's migrations to the role's database; returns the ids applied. */
export type MigrationRunner = (owner: string, migrations: readonly Migration[]) => Promise<number[]>;

/** What a host gives plugins besides their context and their migrations. */
export interface PluginHostOptions {
  /** The parsed configuration plugins read their parts from; without one, a part's settings are its defaults. */
  config?: object;
  /** Where declared MCP tools go (the gateway's registry); a host without one refuses plugins that declare any. */
  tools?: { register(tool: ToolDefinition): void };
  /** The role's metrics and readiness (RoleRuntime's); a host without them gives plugins a registry and checks of their own that nothing serves. */
  facilities?: RoleFacilities;
}

export class PluginError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PluginError';
  }
}

/** Orders plugins so that each comes after its dependencies. */
export function bootOrder<Ctx>(plugins: readonly Plugin<Ctx>[]): Plugin<Ctx>[] {
  const byName = new Map<string, Plugin<Ctx>>();
  for (const p of plugins) {
    if (p.name === BASE_SCHEMA_OWNER) throw new PluginError(`plugin name '${p.name}' is reserved for the base schema's migrations`);
    if (byName.has(p.name)) throw new PluginError(`plugin '${p.name}' is registered twice`);
    byName.set(p.name, p);
  }
  for (const p of plugins) {
    for (const dep of p.dependsOn) {
      if (!byName.has(dep)) {
        throw new PluginError(`plugin '${p.name}' depends on '${dep}', which is not registered (registered: ${[...byName.keys()].join(', ')})`);
      }
    }
  }
  const ordered: Plugin<Ctx>[] = [];
  const state = new Map<string, 'visiting' | 'done'>();
  const visit = (p: Plugin<Ctx>, trail: string[]): void => {
    const s = state.get(p.name);
    if (s === 'done') return;
    if (s === 'visiting') {
      const cycle = [...trail.slice(trail.indexOf(p.name)), p.name];
      throw new PluginError(`plugin dependency cycle: ${cycle.join(' -> ')}`);
    }
    state.set(p.name, 'visiting');
    for (const dep of p.dependsOn) visit(byName.get(dep) as Plugin<Ctx>, [...trail, p.name]);
    state.set(p.name, 'done');
    ordered.push(p);
  };
  for (const p of plugins) visit(p, []);
  return ordered;
}

/** Boots plugins in dependency order and stops them in reverse. */
export class PluginHost<Ctx> {
  private readonly started: { plugin: Plugin<Ctx>; handle: PluginHandle | void }[] = [];

  constructor(
    private readonly plugins: readonly Plugin<Ctx>[],
    private readonly logger: Logger,
    /** Runs plugins' migrations on the role's database; a host without one refuses plugins that declare any. */
    private readonly runMigrations?: MigrationRunner,
    private readonly options: PluginHostOptions = {},
  ) {}

  async start(ctx: Ctx): Promise<void> {
    const order = bootOrder(this.plugins);
    // Every schema is in place before any plugin starts, so a failed migration leaves nothing to stop.
    for (const plugin of order) {
      if (plugin.migrations.length === 0) continue;
      if (!this.runMigrations) throw new PluginError(`plugin '${plugin.name}' declares migrations, but this host has no database`);
      try {
        const applied = await this.runMigrations(plugin.name, plugin.migrations);
        if (applied.length) this.logger.info({ plugin: plugin.name, migrations: applied }, 'applied schema migrations');
      } catch (err) {
        throw new PluginError(`plugin '${plugin.name}': ${(err as Error).message}`);
      }
    }
    this.registerTools(order);
    const facilities = this.options.facilities ?? { metrics: new RoleMetrics('plugins'), readiness: new Readiness(this.logger) };
    for (const plugin of order) {
      const logger = this.logger.child({ plugin: plugin.name });
      try {
        const handle = await plugin.register({ ...ctx, logger, ...facilities, ...this.partAccess(plugin) });
        this.started.push({ plugin, handle });
      } catch (err) {
        await this.stop();
        throw new PluginError(`plugin '${plugin.name}' failed to start: ${(err as Error).message}`);
      }
    }
  }

  /** Every declared tool, in boot order, before any plugin registers: a clash fails the start naming the plugin and the tool. */
  private registerTools(order: readonly Plugin<Ctx>[]): void {
    for (const plugin of order) {
      if (plugin.tools.length === 0) continue;
      if (!this.options.tools) throw new PluginError(`plugin '${plugin.name}' declares MCP tools, but this role serves none`);
      for (const tool of plugin.tools) {
        try {
          this.options.tools.register(tool);
        } catch (err) {
          throw new PluginError(`plugin '${plugin.name}' failed to start: ${(err as Error).message}`);
        }
      }
    }
  }

  /** `settings` and `configWrites` for a plugin with config parts; nothing for one without (the context's own fields stay). */
  private partAccess(plugin: Plugin<Ctx>): Partial<PartAccess<unknown>> {
    const declared = plugin.config;
    if (!declared) return {};
    const { config } = this.options;
    const writes = (path: string) => config !== undefined && configWritesOf(config as Parameters<typeof configWritesOf>[0], path);
    if (!Array.isArray(declared)) {
      const part = declared as ConfigPart;
      return { settings: readPart(config, part), configWrites: (field) => writes(`${part.section}.${field}`) };
    }
    // Several parts: their fields together, each name once, and where each field is written.
    const sectionOf = new Map<string, string>();
    for (const part of declared as readonly ConfigPart[]) {
      if (part.schema) throw new PluginError(`a list of config parts gives fields; section '${part.section}' is a whole schema`);
      for (const field of Object.keys(part.fields ?? {})) {
        if (sectionOf.has(field)) throw new PluginError(`config field '${field}' is in sections '${sectionOf.get(field)}' and '${part.section}'; give the fields of its parts different names`);
        sectionOf.set(field, part.section);
      }
    }
    const settings = Object.assign({}, ...(declared as readonly ConfigPart[]).map((part) => readPart(config, part) ?? {})) as unknown;
    return { settings, configWrites: (field) => sectionOf.has(field) && writes(`${sectionOf.get(field)}.${field}`) };
  }

  /** Names of the started plugins, in boot order. */
  names(): string[] {
    return this.started.map((s) => s.plugin.name);
  }

  async stop(): Promise<void> {
    while (this.started.length) {
      const { plugin, handle } = this.started.pop() as { plugin: Plugin<Ctx>; handle: PluginHandle | void };
      try {
        await handle?.stop?.();
      } catch (err) {
        this.logger.error({ err, plugin: plugin.name }, 'plugin failed to stop');
      }
    }
  }
}

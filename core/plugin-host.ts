/**
 * Plugins are named, declare what they depend on and the schema migrations
 * of the tables they own, and receive an explicit context. Their migrations
 * run first, in boot order; then they boot in dependency order and stop in
 * reverse order; a missing or cyclic dependency fails at start with the names
 * involved.
 */
import type { Logger } from 'pino';
import type { Command } from './commands.js';
import { BASE_SCHEMA_OWNER, type Migration } from './store/migrations.js';

/** What a plugin's register() may return to be told when to stop. */
export interface PluginHandle {
  stop?(): Promise<void> | void;
}

export interface Plugin<Ctx> {
  name: string;
  dependsOn: readonly string[];
  /** Schema changes of the tables this plugin owns, recorded under its name; they run before any plugin registers. */
  migrations: readonly Migration[];
  /** Commands of this plugin, run as `core/main.ts <name>` instead of starting the roles (core/commands.ts). */
  commands: readonly Command[];
  register(ctx: Ctx & { logger: Logger }): Promise<PluginHandle | void> | PluginHandle | void;
}

/** Declares a plugin; the identity function exists for type inference and readability. */
export function definePlugin<Ctx>(plugin: {
  name: string;
  dependsOn?: readonly string[];
  migrations?: readonly Migration[];
  commands?: readonly Command[];
  register: Plugin<Ctx>['register'];
}): Plugin<Ctx> {
  return { dependsOn: [], migrations: [], commands: [], ...plugin };
}

/** Applies one owner's migrations to the role's database; returns the ids applied. */
export type MigrationRunner = (owner: string, migrations: readonly Migration[]) => Promise<number[]>;

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
    for (const plugin of order) {
      const logger = this.logger.child({ plugin: plugin.name });
      try {
        const handle = await plugin.register({ ...ctx, logger });
        this.started.push({ plugin, handle });
      } catch (err) {
        await this.stop();
        throw new PluginError(`plugin '${plugin.name}' failed to start: ${(err as Error).message}`);
      }
    }
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

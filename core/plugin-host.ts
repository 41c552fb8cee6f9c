/**
 * Plugins are named, declare what they depend on, and receive an explicit
 * context. They boot in dependency order and stop in reverse order; a missing
 * or cyclic dependency fails at start with the names involved.
 */
import type { Logger } from 'pino';

/** What a plugin's register() may return to be told when to stop. */
export interface PluginHandle {
  stop?(): Promise<void> | void;
}

export interface Plugin<Ctx> {
  name: string;
  dependsOn: readonly string[];
  register(ctx: Ctx & { logger: Logger }): Promise<PluginHandle | void> | PluginHandle | void;
}

/** Declares a plugin; the identity function exists for type inference and readability. */
export function definePlugin<Ctx>(plugin: { name: string; dependsOn?: readonly string[]; register: Plugin<Ctx>['register'] }): Plugin<Ctx> {
  return { dependsOn: [], ...plugin };
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
  ) {}

  async start(ctx: Ctx): Promise<void> {
    for (const plugin of bootOrder(this.plugins)) {
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

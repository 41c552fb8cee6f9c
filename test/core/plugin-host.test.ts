import { describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { bootOrder, definePlugin, PluginHost, type Plugin } from '../../core/runtime/plugin-host.js';

const logger = pino({ level: 'silent' });
type Ctx = { events: string[] };

function recorder(name: string, dependsOn: string[] = []): Plugin<Ctx> {
  return definePlugin<Ctx>({
    name,
    dependsOn,
    register(ctx) {
      ctx.events.push(`start ${name}`);
      return { stop: () => void ctx.events.push(`stop ${name}`) };
    },
  });
}

describe('plugin host', () => {
  it('boots plugins in dependency order, whatever order they are listed in', () => {
    const order = bootOrder([recorder('mcp', ['api', 'auth']), recorder('api', ['store']), recorder('auth', ['store']), recorder('store')]);
    const names = order.map((p) => p.name);
    expect(names.indexOf('store')).toBeLessThan(names.indexOf('api'));
    expect(names.indexOf('store')).toBeLessThan(names.indexOf('auth'));
    expect(names.indexOf('api')).toBeLessThan(names.indexOf('mcp'));
    expect(names.indexOf('auth')).toBeLessThan(names.indexOf('mcp'));
  });

  it('fails at start with a clear message for a missing dependency', () => {
    expect(() => bootOrder([recorder('api', ['store'])])).toThrow(/plugin 'api' depends on 'store', which is not registered/);
  });

  it('fails at start naming the cycle for cyclic dependencies', () => {
    expect(() => bootOrder([recorder('a', ['b']), recorder('b', ['c']), recorder('c', ['a'])])).toThrow(
      /plugin dependency cycle: a -> b -> c -> a/,
    );
  });

  it('rejects a plugin registered twice', () => {
    expect(() => bootOrder([recorder('a'), recorder('a')])).toThrow(/registered twice/);
  });

  it('stops plugins in reverse boot order', async () => {
    const events: string[] = [];
    const host = new PluginHost([recorder('api', ['store']), recorder('store'), recorder('mcp', ['api'])], logger);
    await host.start({ events });
    await host.stop();
    expect(events).toEqual(['start store', 'start api', 'start mcp', 'stop mcp', 'stop api', 'stop store']);
  });

  it('gives each plugin its own explicit context and logger', async () => {
    const seen: unknown[] = [];
    const plugin = definePlugin<Ctx>({
      name: 'p',
      register(ctx) {
        seen.push(ctx.events, typeof ctx.logger.info);
      },
    });
    const events = ['x'];
    await new PluginHost([plugin], logger).start({ events });
    expect(seen).toEqual([events, 'function']);
  });

  it('stops the plugins already started when a later one fails to start', async () => {
    const events: string[] = [];
    const failing = definePlugin<Ctx>({
      name: 'broken',
      dependsOn: ['store'],
      register() {
        throw new Error('no port');
      },
    });
    const host = new PluginHost([recorder('store'), failing], logger);
    await expect(host.start({ events })).rejects.toThrow(/plugin 'broken' failed to start: no port/);
    expect(events).toEqual(['start store', 'stop store']);
  });
});

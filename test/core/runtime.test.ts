/**
 * The role runtime's stop order, on its own and as the gateway uses it:
 * requests stop, then the plugins in reverse boot order, then the role's own
 * closers (the gateway's history writer) in reverse order, then the
 * database; a plugin that fails to start stops the plugins started before it,
 * and the role's closers and database close.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { Gateway } from '../../core/roles/gateway/gateway.js';
import type { GatewayContext } from '../../core/roles/gateway/context.js';
import { createHttpApp } from '../../core/http/http-server.js';
import { definePlugin, type Plugin } from '../../core/runtime/plugin-host.js';
import { RoleRuntime } from '../../core/runtime/runtime.js';
import { Database } from '../../core/store/database.js';
import { parseConfig } from '../../core/roles/index.js';
import { DRIVERS } from '../../drivers/registry.js';
import { simMachine, TEST_ADMIN_PASSWORD, TEST_PLUGINS } from '../fixtures/gateway.js';

const logger = pino({ level: 'silent' });
const freshDir = () => mkdtempSync(join(tmpdir(), 'role-runtime-'));

/** Whether the database still takes a write-connection query. */
const answers = (db: Database) =>
  db.write((tx) => tx.get<{ one: number }>('SELECT 1 AS one')).then(
    (row) => row?.one === 1,
    () => false,
  );

const toClose: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (toClose.length) await (toClose.pop() as () => Promise<void>)();
});

describe('RoleRuntime', () => {
  it('stops requests, then plugins in reverse boot order, then its closers in reverse, then the database; a second stop does nothing', async () => {
    const runtime = await RoleRuntime.open({
      role: 'example',
      dataDir: freshDir(),
      databaseFile: 'example.db',
      logger,
      now: () => 42,
      baseMigrations: [{ id: 1, name: 'base', up: ['CREATE TABLE base_rows (id INTEGER PRIMARY KEY)'] }],
    });
    toClose.push(() => runtime.stop());
    const events: string[] = [];
    const { db } = runtime;
    const plugin = (name: string, dependsOn: string[] = []): Plugin<object> =>
      definePlugin<object>({
        name,
        dependsOn,
        migrations: [{ id: 1, name: `${name} table`, up: [`CREATE TABLE ${name}_rows (id INTEGER PRIMARY KEY)`] }],
        register: () => {
          events.push(`start ${name}`);
          return {
            stop: async () => {
              events.push(`stop ${name} (listening ${runtime.listening}, db ${await answers(db)})`);
            },
          };
        },
      });
    const http = createHttpApp(logger);
    http.get('/ping', () => ({ pong: true }));
    const started = await runtime.startPlugins([plugin('second', ['first']), plugin('first')], {}, http);
    expect(started.names()).toEqual(['first', 'second']);
    expect(runtime.pluginNames()).toEqual(['first', 'second']);
    runtime.onStop('writer', async () => void events.push(`close writer (db ${await answers(db)})`));
    runtime.onStop('cache', async () => void events.push(`close cache (db ${await answers(db)})`));

    const url = await runtime.listen('127.0.0.1', 0);
    expect(await (await fetch(`${url}/ping`)).json()).toEqual({ pong: true });
    const owners = await db.all<{ plugin: string; version: number; applied_at: number }>('SELECT plugin, version, applied_at FROM schema_migrations ORDER BY plugin');
    expect(owners).toEqual([
      { plugin: 'core', version: 1, applied_at: 42 },
      { plugin: 'first', version: 1, applied_at: 42 },
      { plugin: 'second', version: 1, applied_at: 42 },
    ]);

    await runtime.stop();
    expect(events).toEqual([
      'start first',
      'start second',
      'stop second (listening false, db true)',
      'stop first (listening false, db true)',
      'close cache (db true)',
      'close writer (db true)',
    ]);
    expect(await answers(db)).toBe(false);
    await runtime.stop();
    expect(events).toHaveLength(6);
  });

  it('a plugin that fails to start stops those started before it; stopping the runtime then closes its closers and the database', async () => {
    const runtime = await RoleRuntime.open({ role: 'example', dataDir: freshDir(), databaseFile: 'example.db', logger, now: Date.now });
    toClose.push(() => runtime.stop());
    const events: string[] = [];
    runtime.onStop('writer', async () => void events.push('close writer'));
    const ok = definePlugin<object>({ name: 'ok', register: () => ({ stop: () => void events.push('stop ok') }) });
    const boom = definePlugin<object>({
      name: 'boom',
      dependsOn: ['ok'],
      register: () => {
        throw new Error('no licence file');
      },
    });
    await expect(runtime.startPlugins([boom, ok], {}, createHttpApp(logger))).rejects.toThrow("plugin 'boom' failed to start: no licence file");
    expect(events).toEqual(['stop ok']);
    expect(await answers(runtime.db)).toBe(true);
    await runtime.stop();
    expect(events).toEqual(['stop ok', 'close writer']);
    expect(await answers(runtime.db)).toBe(false);
  });
});

/** A plugin that boots first (listed first, no dependencies), so it stops last, and records what it finds open when it stops. */
function lastToStop(events: string[], seen: { ctx?: GatewayContext }): Plugin<GatewayContext> {
  return definePlugin<GatewayContext>({
    name: 'stop-probe',
    register(ctx) {
      seen.ctx = ctx;
      return {
        async stop() {
          // The history writer still takes rows and the database still answers: both close after every plugin.
          ctx.history.push({ machineID: 'PROBE', cls: 'Probe', ts: ctx.now(), data: { at: 'plugin stop' } });
          events.push(`stop-probe stopped (history open, db ${await answers(ctx.db)})`);
        },
      };
    },
  });
}

async function probeRows(dataDir: string): Promise<unknown[]> {
  const db = await Database.open(join(dataDir, 'gateway.db'));
  try {
    return await db.all('SELECT machine_id, class, data FROM history WHERE class = ?', ['Probe']);
  } finally {
    await db.close();
  }
}

describe('the gateway on the role runtime', () => {
  const config = (dataDir: string) => parseConfig({ logLevel: 'silent', gateway: { dataDir, timeZone: 'UTC' }, machines: [simMachine('M1')] });
  const create = (dataDir: string, plugins: readonly Plugin<GatewayContext>[]) =>
    Gateway.create({ config: config(dataDir), drivers: DRIVERS, plugins, logger, env: { GATEWAY_ADMIN_PASSWORD: TEST_ADMIN_PASSWORD } });

  it('stop: plugins (the last one to stop still finds the history writer and database open), then the history writer flushes, then the database closes', async () => {
    const dataDir = freshDir();
    const events: string[] = [];
    const seen: { ctx?: GatewayContext } = {};
    const gateway = await create(dataDir, [lastToStop(events, seen), ...TEST_PLUGINS]);
    toClose.push(() => gateway.stop());
    expect(gateway.context.startedPlugins()[0]).toBe('stop-probe');
    const url = await gateway.listen({ host: '127.0.0.1', port: 0 });
    expect((await fetch(`${url}/api/health`)).status).toBe(200);

    await gateway.stop();
    expect(events).toEqual(['stop-probe stopped (history open, db true)']);
    // The row pushed while the last plugin stopped was flushed by the writer's close, before the database closed.
    expect(await probeRows(dataDir)).toEqual([{ machine_id: 'PROBE', class: 'Probe', data: '{"at":"plugin stop"}' }]);
    expect(() => gateway.context.history.push({ machineID: 'PROBE', cls: 'Probe', ts: 0, data: {} })).toThrow('history writer is closed');
    expect(await answers(gateway.context.db)).toBe(false);
    await expect(fetch(`${url}/api/health`)).rejects.toThrow();
  });

  it('a plugin that fails to start: the plugins started stop, the history writer flushes and closes, the database closes, and create rejects naming the plugin', async () => {
    const dataDir = freshDir();
    const events: string[] = [];
    const seen: { ctx?: GatewayContext } = {};
    const failing = definePlugin<GatewayContext>({
      name: 'failing',
      dependsOn: ['machine-actors'],
      register: () => {
        throw new Error('cannot reach the licence server');
      },
    });
    await expect(create(dataDir, [lastToStop(events, seen), ...TEST_PLUGINS, failing])).rejects.toThrow("plugin 'failing' failed to start: cannot reach the licence server");
    expect(events).toEqual(['stop-probe stopped (history open, db true)']);
    const ctx = seen.ctx as GatewayContext;
    expect(() => ctx.history.push({ machineID: 'PROBE', cls: 'Probe', ts: 0, data: {} })).toThrow('history writer is closed');
    expect(await answers(ctx.db)).toBe(false);
    expect(await probeRows(dataDir)).toHaveLength(1);
    // Nothing holds the data directory: the gateway starts again on it.
    const again = await create(dataDir, TEST_PLUGINS);
    await again.stop();
  });
});

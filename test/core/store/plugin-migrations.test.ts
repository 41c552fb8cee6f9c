import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import type { GatewayContext } from '../../../core/roles/gateway/context.js';
import { bootOrder, definePlugin, PluginHost, type Plugin } from '../../../core/runtime/plugin-host.js';
import { Database } from '../../../core/store/database.js';
import { applyMigrations, type Migration } from '../../../core/store/migrations.js';
import { migrateGatewayStore as migrate } from '../../../core/roles/gateway/store/schema.js';
import { simMachine, startTestGateway, TEST_PLUGINS, type TestGateway } from '../../fixtures/gateway.js';
import { writeLegacySchema } from '../../fixtures/legacy-database.js';

const logger = pino({ level: 'silent' });
const dirs: string[] = [];
const open: Database[] = [];
let gw: TestGateway | undefined;

afterEach(async () => {
  await gw?.stop();
  gw = undefined;
  for (const db of open.splice(0)) await db.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function freshDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'gw-migrations-'));
  dirs.push(dir);
  return dir;
}

async function freshDb(): Promise<Database> {
  const db = await Database.open(join(freshDir(), 'test.db'));
  open.push(db);
  return db;
}

/** A plugin owning two tables and a trigger whose body has two statements, each ending in `;`. */
const NOTES_MIGRATIONS: readonly Migration[] = [
  {
    id: 1,
    name: 'notes and their log',
    up: [
      'CREATE TABLE notes (id INTEGER PRIMARY KEY, machine_id TEXT NOT NULL, text TEXT NOT NULL)',
      'CREATE TABLE notes_log (note_id INTEGER NOT NULL, event TEXT NOT NULL)',
      `CREATE TRIGGER notes_logged AFTER INSERT ON notes BEGIN
         INSERT INTO notes_log (note_id, event) VALUES (new.id, 'added');
         INSERT INTO notes_log (note_id, event) VALUES (new.id, 'indexed');
       END`,
    ],
  },
  { id: 2, name: 'first note', up: async (tx) => void (await tx.run("INSERT INTO notes (machine_id, text) VALUES ('M1', 'check spindle')")) },
];

function notesPlugin(registered: string[]): Plugin<GatewayContext> {
  return definePlugin<GatewayContext>({
    name: 'machine-notes',
    migrations: NOTES_MIGRATIONS,
    async register(ctx) {
      // Its tables exist by the time it registers.
      const [row] = await ctx.db.all<{ n: number }>('SELECT COUNT(*) AS n FROM notes');
      registered.push(`notes=${row?.n}`);
    },
  });
}

type Row = { plugin: string; version: number; name: string; applied_at: number };
const bookkeeping = (db: Database) => db.all<Row>('SELECT plugin, version, name, applied_at FROM schema_migrations ORDER BY plugin, version');

describe('plugin-contributed migrations', () => {
  it('a database written by the previous release keeps its base migrations (nothing re-runs) and a new plugin migrates beside them', async () => {
    const dataDir = freshDir();
    mkdirSync(dataDir, { recursive: true });
    const legacy = await Database.open(join(dataDir, 'gateway.db'));
    await writeLegacySchema(legacy, 4, 123);
    await legacy.write((tx) => tx.run('INSERT INTO machines (machine_id, config, created_at, updated_at) VALUES (?, ?, 1, 1)', ['KEEP', JSON.stringify(simMachine('KEEP'))]));
    await legacy.close();

    const registered: string[] = [];
    gw = await startTestGateway({}, dataDir, { plugins: [...TEST_PLUGINS, notesPlugin(registered)] });
    const db = gw.gateway.context.db;
    const rows = await bookkeeping(db);
    expect(rows.filter((r) => r.plugin === 'core')).toEqual([
      { plugin: 'core', version: 1, name: 'fleet and history', applied_at: 123 },
      { plugin: 'core', version: 2, name: 'users, secret keys and security settings', applied_at: 123 },
      { plugin: 'core', version: 3, name: 'covering indexes for analysis', applied_at: 123 },
      { plugin: 'core', version: 4, name: 'account identity for users and secret keys', applied_at: 123 },
    ]);
    expect(rows.filter((r) => r.plugin === 'machine-notes').map((r) => [r.version, r.name])).toEqual([
      [1, 'notes and their log'],
      [2, 'first note'],
    ]);
    expect(registered).toEqual(['notes=1']);
    expect(await db.all('SELECT event FROM notes_log ORDER BY rowid')).toEqual([{ event: 'added' }, { event: 'indexed' }]);
    expect(gw.gateway.context.store.getMachine('KEEP')?.machineID).toBe('KEEP');
    const before = await bookkeeping(db);
    await gw.stop();

    // The next start applies nothing again: the seed row is not inserted twice and every record is unchanged.
    gw = await startTestGateway({}, dataDir, { plugins: [...TEST_PLUGINS, notesPlugin(registered)] });
    expect(registered).toEqual(['notes=1', 'notes=1']);
    expect(await bookkeeping(gw.gateway.context.db)).toEqual(before);
  });

  it('a fresh database records the base schema as core 1–4; running it again applies nothing', async () => {
    const db = await freshDb();
    expect(await migrate(db)).toEqual([1, 2, 3, 4]);
    expect(await migrate(db)).toEqual([]);
    expect((await bookkeeping(db)).map((r) => `${r.plugin}:${r.version}`)).toEqual(['core:1', 'core:2', 'core:3', 'core:4']);
  });

  it('migrations run in boot order before any plugin registers; two plugins may both have a migration 1', async () => {
    const db = await freshDb();
    const events: string[] = [];
    const orders = definePlugin<object>({
      name: 'orders',
      dependsOn: ['parts'],
      // Reads the table of the plugin it depends on: fails unless parts migrated first.
      migrations: [{ id: 1, name: 'orders', up: async (tx) => {
        await tx.run('CREATE TABLE orders (part_id INTEGER NOT NULL)');
        await tx.run('INSERT INTO orders SELECT id FROM parts');
      } }],
      register: () => void events.push('orders registered'),
    });
    const parts = definePlugin<object>({
      name: 'parts',
      migrations: [{ id: 1, name: 'parts', up: ['CREATE TABLE parts (id INTEGER PRIMARY KEY)', 'INSERT INTO parts (id) VALUES (7)'] }],
      register: () => void events.push('parts registered'),
    });
    const host = new PluginHost([orders, parts], logger, async (owner, migrations) => {
      events.push(`migrate ${owner}`);
      return applyMigrations(db, owner, migrations);
    });
    await host.start({});
    expect(events).toEqual(['migrate parts', 'migrate orders', 'parts registered', 'orders registered']);
    expect(await db.all('SELECT part_id FROM orders')).toEqual([{ part_id: 7 }]);
    expect((await bookkeeping(db)).map((r) => `${r.plugin}:${r.version}`)).toEqual(['orders:1', 'parts:1']);
    await host.stop();
  });

  it('a failing migration is rolled back alone, is not recorded, names the plugin and migration, and no plugin starts', async () => {
    const db = await freshDb();
    const events: string[] = [];
    const broken = definePlugin<object>({
      name: 'broken',
      migrations: [
        { id: 1, name: 'good', up: ['CREATE TABLE good (x)'] },
        { id: 2, name: 'bad', up: ['CREATE TABLE half (x)', 'INSERT INTO missing VALUES (1)'] },
      ],
      register: () => void events.push('broken registered'),
    });
    const host = new PluginHost([broken], logger, (owner, migrations) => applyMigrations(db, owner, migrations));
    await expect(host.start({})).rejects.toThrow(/plugin 'broken': migration 2 \('bad'\) of 'broken' failed and was rolled back: .*no such table: missing/);
    expect(events).toEqual([]);
    expect(await db.all("SELECT name FROM sqlite_master WHERE type = 'table' AND name IN ('good', 'half')")).toEqual([{ name: 'good' }]);
    expect((await bookkeeping(db)).map((r) => `${r.plugin}:${r.version}`)).toEqual(['broken:1']);
  });

  it('ids out of order, the reserved name core, and migrations on a host without a database are refused with the names involved', async () => {
    const db = await freshDb();
    await expect(applyMigrations(db, 'p', [{ id: 1, name: 'a', up: [] }, { id: 1, name: 'b', up: [] }])).rejects.toThrow(/migrations of 'p': id 1 \('b'\) must be an integer greater than 1/);
    expect(() => bootOrder([definePlugin<object>({ name: 'core', register: () => undefined })])).toThrow(/plugin name 'core' is reserved/);
    const host = new PluginHost([definePlugin<object>({ name: 'p', migrations: [{ id: 1, name: 'a', up: [] }], register: () => undefined })], logger);
    await expect(host.start({})).rejects.toThrow(/plugin 'p' declares migrations, but this host has no database/);
  });
});

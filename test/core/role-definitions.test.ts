/**
 * Roles are definitions (core/runtime/role.ts) listed once (core/roles/index.ts):
 * the config's role names are the list's, the selected roles start in list
 * order and are handed what the roles before them offer, their banner
 * sections come in list order and they stop by `stopRank`. A role made of
 * a definition alone, beside the real gateway, runs that way.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Fastify from 'fastify';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { parseConfig } from '../../core/roles/index.js';
import { definePlugin } from '../../core/runtime/plugin-host.js';
import { defineRole, RoleStartError, startRoles, type RoleDefinition, type RoleStartFacts } from '../../core/runtime/role.js';
import { ROLES } from '../../core/roles/index.js';
import { RoleRuntime } from '../../core/runtime/runtime.js';
import { TEST_ADMIN_PASSWORD } from '../fixtures/gateway.js';

const logger = pino({ level: 'silent' });

const toStop: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (toStop.length) await (toStop.pop() as () => Promise<void>)();
});

/** A role made of a definition only: its own database and plugin on the role runtime, a listener, and what it was handed. */
function notesRole(events: string[], stopRank: number): RoleDefinition {
  const plugin = definePlugin<object>({
    name: 'notes-api',
    migrations: [{ id: 1, name: 'notes', up: ['CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT NOT NULL)'] }],
    register: () => {
      events.push('notes-api registered');
    },
  });
  return defineRole({
    name: 'notes',
    databaseFile: 'notes.db',
    startsByDefault: false,
    config: [],
    stopRank,
    plugins: [plugin],
    commands: [],
    async start({ config, offers, definitions }: RoleStartFacts) {
      const link = offers['gateway-link'];
      events.push(`notes starts; the gateway offers ${link ? `a link with ${(await link.listMachines()).length} machine(s)` : 'nothing'}; ${definitions.length} roles compiled in`);
      const runtime = await RoleRuntime.open({ role: 'notes', dataDir: config.dataDir, databaseFile: 'notes.db', logger, now: Date.now });
      const http = Fastify();
      http.get('/notes', async () => runtime.db.all('SELECT * FROM notes'));
      await runtime.startPlugins([plugin], {}, http);
      const url = await runtime.listen('127.0.0.1', 0);
      return {
        banner: [`  Notes at ${url}`],
        stop: { name: 'notes', stop: async () => { events.push('notes stops'); await runtime.stop(); } },
        stoppedFacts: () => ({ notes: 'closed' }),
      };
    },
  });
}

/** The real gateway definition, its stop recorded in `events`. */
function recordedGateway(events: string[]): RoleDefinition {
  const gateway = ROLES.find((r) => r.name === 'gateway') as RoleDefinition;
  return defineRole({
    ...gateway,
    async start(facts) {
      const started = await gateway.start(facts);
      events.push('gateway started');
      return { ...started, stop: { ...started.stop, stop: async () => { events.push('gateway stops'); await started.stop.stop(); } } };
    },
  });
}

function gatewayConfig() {
  const dataDir = mkdtempSync(join(tmpdir(), 'role-definitions-'));
  return parseConfig({
    gateway: { dataDir, timeZone: 'UTC' },
    communication: { host: '127.0.0.1', port: 0 },
    mtconnect: { host: '127.0.0.1', port: 0 },
    logLevel: 'silent',
    machines: [{ machineID: 'M1', name: 'Mill 1', driver: 'simulator' }],
  });
}

describe('role definitions', () => {
  it('the config accepts exactly the roles of the list, and runs by default those that start by default', () => {
    expect(parseConfig({}).roles).toEqual(ROLES.filter((r) => r.startsByDefault).map((r) => r.name));
    for (const role of ROLES) expect(parseConfig({ roles: [role.name] }).roles).toEqual([role.name]);
    expect(() => parseConfig({ roles: ['notes'] })).toThrow(`roles[0]: found "notes"; expected one of ${ROLES.map((r) => `"${r.name}"`).join('|')}`);
    expect(new Set(ROLES.map((r) => r.databaseFile)).size).toBe(ROLES.length);
    expect([...ROLES].sort((a, b) => a.stopRank - b.stopRank).map((r) => r.name)).toEqual(['programs', 'gateway', 'cloud']);
  });

  it('a role made of a definition only starts after the roles before it in the list, gets what they offer, prints its section in list order and stops by rank', async () => {
    const events: string[] = [];
    const roles = [recordedGateway(events), notesRole(events, 5)];
    const running = await startRoles(roles, ['notes', 'gateway'], { config: gatewayConfig(), file: 'roles.json', logger, env: { GATEWAY_ADMIN_PASSWORD: TEST_ADMIN_PASSWORD } });
    let stopped = false;
    toStop.push(async () => {
      if (!stopped) for (const part of running.stopParts) await part.stop();
    });
    expect(events).toEqual(['gateway started', 'notes starts; the gateway offers a link with 1 machine(s); 2 roles compiled in', 'notes-api registered']);
    expect(running.banners.map((b) => b[0])).toEqual([expect.stringMatching(/^ {2}CNC machine gateway \S+ is running$/), expect.stringMatching(/^ {2}Notes at http:\/\/127\.0\.0\.1:\d+$/)]);
    const notesUrl = (running.banners[1]?.[0] ?? '').replace('  Notes at ', '');
    expect(await (await fetch(`${notesUrl}/notes`)).json()).toEqual([]);
    expect(running.stopParts.map((p) => p.name)).toEqual(['notes', expect.stringMatching(/^gateway /)]);
    expect(running.stoppedFacts()).toEqual({ notes: 'closed', history: expect.any(Object) });
    for (const part of running.stopParts) await part.stop();
    stopped = true;
    expect(events.slice(-2)).toEqual(['notes stops', 'gateway stops']);
  });

  it('a role that fails to start stops those started before it, by rank, and its error goes on to the process', async () => {
    const events: string[] = [];
    const failing = defineRole({
      name: 'broken',
      databaseFile: 'broken.db',
      startsByDefault: false,
      config: [],
      stopRank: 1,
      plugins: [],
      commands: [],
      start: () => Promise.reject(new RoleStartError('broken failed to start', 2)),
    });
    const first = notesRole(events, 50);
    const start = startRoles([first, recordedGateway(events), failing], ['notes', 'gateway', 'broken'], { config: gatewayConfig(), file: 'roles.json', logger, env: { GATEWAY_ADMIN_PASSWORD: TEST_ADMIN_PASSWORD } });
    await expect(start).rejects.toMatchObject({ name: 'RoleStartError', message: 'broken failed to start', exitCode: 2 });
    expect(events).toEqual(['notes starts; the gateway offers nothing; 3 roles compiled in', 'notes-api registered', 'gateway started', 'gateway stops', 'notes stops']);
  });
});

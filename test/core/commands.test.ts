/**
 * `core/main.ts <command>` runs a command a role's wing or a plugin declares
 * (core/runtime/commands.ts) instead of starting the roles; the reset and token
 * commands themselves are tested where they live (test/plugins/auth,
 * test/cloud).
 */
import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCommand, type Command, type CommandIO } from '../../core/runtime/commands.js';
import { definePlugin } from '../../core/runtime/plugin-host.js';
import { commandsOf, defineRole, type RoleDefinition } from '../../core/runtime/role.js';
import { ROLES } from '../../core/roles/index.js';

const ROOT = resolve(import.meta.dirname, '../..');

/** A CommandIO that keeps what is written; its config loader must not be reached unless `config` is given. */
function capture(): CommandIO & { out: string; err: string } {
  const io = {
    out: '',
    err: '',
    env: {},
    loadConfig: () => 2 as const,
    stdout: { write: (text: string) => (io.out += text) },
    stderr: { write: (text: string) => (io.err += text) },
  };
  return io;
}

const echo: Command = {
  name: 'echo',
  usage: 'usage: echo WORDS',
  run: (argv, io) => {
    io.stdout.write(`${argv.join(' ')}\n`);
    return Promise.resolve(argv.length ? 0 : 2);
  },
};

function roleWith(name: string, commands: readonly Command[], pluginCommands: readonly Command[] = []): RoleDefinition {
  return defineRole({
    name,
    databaseFile: `${name}.db`,
    startsByDefault: false,
    config: [],
    stopRank: 1,
    plugins: [definePlugin<object>({ name: `${name}-plugin`, commands: pluginCommands, register: () => undefined })],
    commands,
    start: () => Promise.reject(new Error('not started here')),
  });
}

describe('commands', () => {
  it('the roles declare reset-admin-password (the auth plugin) and cloud-token (the cloud wing), each once', () => {
    expect(commandsOf(ROLES).map((c) => c.name).sort()).toEqual(['cloud-token', 'reset-admin-password']);
  });

  it("a role's own commands and its plugins' are found; a name declared twice names both declarations", () => {
    expect(commandsOf([roleWith('notes', [echo], [{ ...echo, name: 'count' }])]).map((c) => c.name)).toEqual(['echo', 'count']);
    expect(() => commandsOf([roleWith('notes', [echo]), roleWith('other', [], [echo])])).toThrow("command 'echo' is declared by role 'notes' and plugin 'other-plugin'");
  });

  it('runs the named command with the arguments after its name; no command when the first argument is an option or there is none', async () => {
    const io = capture();
    expect(await runCommand([echo], ['echo', 'a', '--config', 'x.json'], io)).toBe(0);
    expect(io.out).toBe('a --config x.json\n');
    expect(await runCommand([echo], ['--config', 'x.json', 'echo'], io)).toBeUndefined();
    expect(await runCommand([echo], [], io)).toBeUndefined();
  });

  it('a word that is no command exits 2 naming the accepted commands; a command that throws exits 1 saying so', async () => {
    const io = capture();
    expect(await runCommand([echo], ['ehco'], io)).toBe(2);
    expect(io.err).toBe("unknown command 'ehco'; accepted: echo, or options only (--config FILE, --role NAME) to start the roles\n");
    const broken: Command = { name: 'broken', usage: 'broken', run: () => Promise.reject(new Error('disk full')) };
    const io2 = capture();
    expect(await runCommand([broken], ['broken'], io2)).toBe(1);
    expect(io2.err).toMatch(/^broken failed: Error: disk full\n/);
  });

  it('the process refuses an unknown command before reading the config or starting anything', () => {
    const r = spawnSync(process.execPath, ['--import', 'tsx', 'core/main.ts', 'reset-admin-pasword', '--config', 'does-not-exist.json'], { cwd: ROOT, encoding: 'utf8' });
    expect(r.status).toBe(2);
    expect(r.stderr).toBe("unknown command 'reset-admin-pasword'; accepted: reset-admin-password, cloud-token, backup, restore, or options only (--config FILE, --role NAME) to start the roles\n");
    expect(r.stdout).toBe('');
  }, 30_000);
});

/**
 * A Ctrl-C while the roles are still starting stops the process as cleanly
 * as one after the start (core/main.ts installs the stop before the first
 * listener opens): exit 0, `stopped cleanly` in the log, no lock file left
 * in the data directory. Once with the gateway answering and the program
 * service still booting, once with the program service waiting for a
 * PostgreSQL server that does not answer (core/runtime/database-wait.ts), whose
 * probes answer meanwhile.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { freePort } from '../fixtures/free-port.js';
import { untilDefined } from '../fixtures/until.js';

const ROOT = resolve(import.meta.dirname, '../..');

interface Started {
  dataDir: string;
  lines: () => Record<string, unknown>[];
  interrupt: () => void;
  exited: Promise<number | null>;
}

/** `node core/main.ts` on a fresh data directory with the gateway and the program service on ports the OS picks; the log is JSON on stdout. */
function start(env: Record<string, string>): Started {
  const dataDir = mkdtempSync(join(tmpdir(), 'start-interrupted-'));
  const config = join(dataDir, 'config.json');
  writeFileSync(config, JSON.stringify({ dataDir, timeZone: 'UTC', logLevel: 'info', communication: { host: '127.0.0.1', port: 0 }, programs: { host: '127.0.0.1', port: 0 }, mtconnect: { host: '127.0.0.1', port: 0 }, machines: [] }));
  const child = spawn(process.execPath, ['--import', 'tsx', 'core/main.ts', '--config', config], {
    cwd: ROOT, env: { ...process.env, GATEWAY_PORT: '', PROGRAMS_PORT: '', GATEWAY_DATA_DIR: '', PROGRAMS_DATABASE_URL: '', ...env }, stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  const lines = () => out.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Record<string, unknown>);
  const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
  return { dataDir, lines, interrupt: () => child.kill('SIGINT'), exited };
}

const locksIn = (dir: string) => readdirSync(dir).filter((f) => f.endsWith('.lock'));

describe('a Ctrl-C while the roles start', () => {
  it('with the gateway answering and the program service still booting: exit 0, stopped cleanly, no lock file left', async () => {
    const run = start({ PROGRAMS_ADMIN_PASSWORD: 'start-interrupted-pw', GATEWAY_ADMIN_PASSWORD: 'start-interrupted-pw' });
    const gateway = await untilDefined('the gateway listening', () => run.lines().find((l) => typeof l.msg === 'string' && l.msg.startsWith('Server listening at'))?.msg as string | undefined, 60_000);
    run.interrupt();
    expect(await run.exited).toBe(0);
    expect(run.lines().some((l) => l.msg === 'stopped cleanly')).toBe(true);
    expect(locksIn(run.dataDir)).toEqual([]);
    await expect(fetch(`${gateway.replace('Server listening at ', '')}/healthz`)).rejects.toThrow();
  }, 90_000);

  it('with the program service waiting for its database: its probes answer, and the stop ends the wait: exit 0, stopped cleanly, no lock file left', async () => {
    const port = await freePort();
    const run = start({ PROGRAMS_DATABASE_URL: `postgresql://programs:pw@127.0.0.1:${port}/programs`, GATEWAY_ADMIN_PASSWORD: 'start-interrupted-pw' });
    const probes = await untilDefined('the program service waiting', () => run.lines().find((l) => typeof l.probes === 'string')?.probes as string | undefined, 60_000);
    expect((await fetch(probes.replace(/readyz$/, 'healthz'))).status).toBe(200);
    expect(await (await fetch(probes)).json()).toMatchObject({ status: 'not-ready', checks: { database: 'unavailable' }, reasons: { database: 'connection refused' } });
    expect(locksIn(run.dataDir).sort()).toEqual(['gateway.db.lock', 'programs.db.lock']);
    run.interrupt();
    expect(await run.exited).toBe(0);
    expect(run.lines().some((l) => l.msg === 'stopped cleanly')).toBe(true);
    expect(locksIn(run.dataDir)).toEqual([]);
    await expect(fetch(probes)).rejects.toThrow();
  }, 90_000);
});

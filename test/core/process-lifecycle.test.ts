/**
 * The gateway as a process: Ctrl-C stops it cleanly with nothing written
 * lost; SIGKILL mid-run leaves a readable database that lost at most the last
 * second of history; a config mistake exits non-zero naming the path.
 */
import { describe, expect, it } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Database } from '../../core/store/database.js';
import { simMachine } from '../fixtures/gateway.js';

const ROOT = resolve(import.meta.dirname, '../..');

function writeConfig(dataDir: string, extra: Record<string, unknown> = {}): string {
  const file = join(dataDir, 'config.json');
  const machines = Array.from({ length: 12 }, (_, i) => simMachine(`M${i}`, { driverOptions: { seed: i, machineType: 'mill', system: 'FANUC' } }));
  writeFileSync(
    file,
    JSON.stringify({
      gateway: { dataDir, timeZone: 'UTC' },
      communication: { host: '127.0.0.1', port: 0 },
      history: { heartbeatSec: 1 },
      logLevel: 'info',
      machines,
      ...extra,
    }),
  );
  return file;
}

interface Running {
  child: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
}

function startGateway(configFile: string): Running {
  const child = spawn(process.execPath, ['--import', 'tsx', 'core/main.ts', '--config', configFile], {
    cwd: ROOT,
    env: { ...process.env, GATEWAY_PORT: '', GATEWAY_DATA_DIR: '' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
  return { child, output: () => out, exited };
}

async function waitFor(check: () => boolean, ms: number, what: string): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function inspect(dataDir: string) {
  const db = await Database.open(join(dataDir, 'gateway.db'));
  try {
    const integrity = await db.get<{ integrity_check: string }>('PRAGMA integrity_check');
    const stats = await db.get<{ n: number; minSeq: number; maxSeq: number; maxTs: number }>(
      'SELECT COUNT(*) AS n, MIN(seq) AS minSeq, MAX(seq) AS maxSeq, MAX(ts) AS maxTs FROM history',
    );
    const machines = await db.get<{ n: number }>('SELECT COUNT(*) AS n FROM machines');
    return { integrity: integrity?.integrity_check, machines: machines?.n, ...(stats as { n: number; minSeq: number; maxSeq: number; maxTs: number }) };
  } finally {
    await db.close();
  }
}

describe('gateway process', () => {
  it('Ctrl-C stops cleanly: the writer flushes and every row pushed is in the database', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'gw-proc-'));
    const gw = startGateway(writeConfig(dataDir));
    await waitFor(() => gw.output().includes('is running'), 15_000, 'the banner');
    expect(gw.output()).toMatch(/health: +http:\/\/127\.0\.0\.1:\d+\/api\/health/);
    await new Promise((r) => setTimeout(r, 2500));
    gw.child.kill('SIGINT');
    expect(await gw.exited).toBe(0);
    const line = gw.output().split('\n').find((l) => l.includes('stopped cleanly'));
    expect(line).toBeDefined();
    const { history } = JSON.parse(line as string) as { history: { rowsWritten: number; lastSeq: number; pending: number } };
    expect(history.pending).toBe(0);
    const db = await inspect(dataDir);
    expect(db.integrity).toBe('ok');
    expect(db.maxSeq).toBe(history.lastSeq);
    expect(db.n).toBe(history.rowsWritten);
    expect(db.n).toBeGreaterThan(12);
  });

  it('SIGKILL mid-run keeps the database readable and loses at most the last second of history', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'gw-kill-'));
    const config = writeConfig(dataDir);
    const gw = startGateway(config);
    await waitFor(() => gw.output().includes('is running'), 15_000, 'the banner');
    await new Promise((r) => setTimeout(r, 3300));
    const killedAt = Date.now();
    gw.child.kill('SIGKILL');
    await gw.exited;
    const db = await inspect(dataDir);
    expect(db.integrity).toBe('ok');
    expect(db.machines).toBe(12);
    // Rows are contiguous: a batch is committed whole or not at all.
    expect(db.n).toBe(db.maxSeq - db.minSeq + 1);
    // Twelve machines write a heartbeat each per second on their own phases, so rows arrive about every 83 ms;
    // with the default flush interval (750 ms) the newest committed row is less than a second old.
    expect(killedAt - db.maxTs).toBeLessThan(1000);

    const again = startGateway(config);
    await waitFor(() => again.output().includes('is running'), 15_000, 'the restart banner');
    await new Promise((r) => setTimeout(r, 1500));
    again.child.kill('SIGTERM');
    expect(await again.exited).toBe(0);
    const after = await inspect(dataDir);
    expect(after.maxSeq).toBeGreaterThan(db.maxSeq);
    expect(after.n).toBe(after.maxSeq - after.minSeq + 1);
  });

  it('a config mistake exits non-zero naming the path, what was found and what is accepted', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'gw-bad-'));
    const file = join(dataDir, 'bad.json');
    writeFileSync(file, JSON.stringify({ machines: [{ machineID: 'A', name: 'A', port: 'abc' }] }));
    const gw = startGateway(file);
    expect(await gw.exited).toBe(2);
    expect(gw.output()).toContain(`invalid configuration in ${file}`);
    expect(gw.output()).toMatch(/machines\[0\]\.port: found "abc"; expected number/);
  });
});

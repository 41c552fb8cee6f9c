/**
 * The log file setting (`logFile`, LOG_FILE): a process started with it
 * writes its log as JSON lines to the file and only the banner to stdout,
 * so the two never mix; the metrics token made at the first start is shown
 * in the banner and never written to the log.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../core/roles/index.js';

const ROOT = resolve(import.meta.dirname, '../..');

describe('the log file', () => {
  it('logFile is a runtime setting with LOG_FILE as its override; empty means stdout', () => {
    expect(parseConfig({}).logFile).toBe('');
    expect(parseConfig({ logFile: '/var/log/cnc/gateway.log' }).logFile).toBe('/var/log/cnc/gateway.log');
    expect(parseConfig({ logFile: '/var/log/a.log' }, '(inline)', { LOG_FILE: '/var/log/b.log' }).logFile).toBe('/var/log/b.log');
  });

  it('with LOG_FILE the log goes to the file as JSON lines and stdout holds the banner alone, with the metrics token made at this start', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'log-file-'));
    const file = join(dataDir, 'config.json');
    const logFile = join(dataDir, 'logs', 'programs.log');
    writeFileSync(file, JSON.stringify({ dataDir, timeZone: 'UTC', programs: { host: '127.0.0.1', port: 0 } }));
    const child = spawn(process.execPath, ['--import', 'tsx', 'core/main.ts', '--config', file, '--role', 'programs'], {
      cwd: ROOT,
      env: { ...process.env, GATEWAY_DATA_DIR: '', PROGRAMS_PORT: '0', METRICS_TOKEN: '', LOG_FILE: logFile },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
    const end = Date.now() + 30_000;
    while (!stdout.includes('Press Ctrl-C to stop') && Date.now() < end) await new Promise((r) => setTimeout(r, 50));
    child.kill('SIGINT');
    expect(await exited).toBe(0);

    expect(stdout).toMatch(/Program version service \S+ is running/);
    const token = /metrics token: +(mtk_\S+)/.exec(stdout)?.[1];
    expect(token).toMatch(/^mtk_/);
    expect(stdout.split('\n').filter((line) => line.trimStart().startsWith('{'))).toEqual([]);

    expect(existsSync(logFile)).toBe(true);
    const log = readFileSync(logFile, 'utf8');
    const records = log.split('\n').filter(Boolean).map((line) => JSON.parse(line) as { msg: string });
    expect(records.length).toBeGreaterThan(0);
    expect(records.some((r) => r.msg.includes('stopped cleanly'))).toBe(true);
    expect(log).not.toContain(token as string);
  }, 60_000);
});

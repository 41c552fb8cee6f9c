import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, renameSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Writable } from 'node:stream';
import { stripVTControlCharacters } from 'node:util';
import { describe, expect, it } from 'vitest';
import { createLogger, logFormat } from '../../core/telemetry/logger.js';

describe('logger', () => {
  it('GW-14 credentials never reach the log, wherever they appear in a record', () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _enc, done) {
        lines.push(chunk.toString());
        done();
      },
    });
    const logger = createLogger('info', sink);
    logger.info({ password: 'p1-secret', machine: { fileServerPassword: 'p2-secret', accessToken: 'p3-secret' }, req: { headers: { authorization: 'Bearer p4-secret' } } }, 'x');
    logger.info({ body: { currentPassword: 'p5-secret', newPassword: 'p6-secret' }, token: 'p7-secret' }, 'y');
    const text = lines.join('');
    expect(text).not.toMatch(/p\d-secret/);
    expect(text.match(/\[redacted\]/g)?.length).toBe(7);
  });
});

describe('log output', () => {
  const ROOT = resolve(import.meta.dirname, '../..');
  const child = (lines: number) => spawnSync(process.execPath, ['--import', 'tsx', 'test/fixtures/log-child.ts', String(lines)], { cwd: ROOT, encoding: 'utf8' });

  it('lines logged before the banner are printed before it, never inside or after it; JSON lines when stdout is not a terminal', () => {
    const { stdout, status } = child(300);
    expect(status).toBe(0);
    const lines = stdout.split('\n').filter(Boolean);
    const banner = lines.indexOf('  BANNER line 1');
    expect(banner).toBe(300);
    expect(lines[banner + 1]).toBe('  BANNER line 2');
    expect(lines.slice(0, banner).map((l) => (JSON.parse(l) as { msg: string }).msg)).toEqual(Array.from({ length: 300 }, (_, i) => `before the banner ${i}`));
    expect(JSON.parse(lines.at(-1) as string)).toMatchObject({ level: 30, msg: 'after the banner' });
    expect(stdout).not.toContain('never-shown');
  });

  it('readable lines on a terminal, credentials still redacted', () => {
    // `script` gives the process a terminal as its stdout, as a person running npm start has.
    const { stdout, status } = spawnSync('script', ['-qec', `${process.execPath} --import tsx test/fixtures/log-child.ts 2`, '/dev/null'], { cwd: ROOT, encoding: 'utf8' });
    expect(status).toBe(0);
    const text = stripVTControlCharacters(stdout).replace(/\r/g, '');
    expect(text).toMatch(/^\[\d\d:\d\d:\d\d\.\d{3}\] INFO: before the banner 0\n {4}line: 0\n {4}password: "\[redacted\]"$/m);
    expect(text.indexOf('before the banner 1')).toBeLessThan(text.indexOf('BANNER line 1'));
    expect(text).toMatch(/INFO: after the banner/);
    expect(text).not.toContain('{"level"');
    expect(text).not.toContain('never-shown');
  });

  it('the form follows stdout: pretty on a terminal, JSON otherwise, a file when one is named', () => {
    expect(logFormat({}, true)).toBe('pretty');
    expect(logFormat({}, false)).toBe('json');
    expect(logFormat({ pretty: false }, true)).toBe('json');
    expect(logFormat({ file: '/var/log/cnc/gateway.log' }, true)).toBe('file');
  });

  it('a log file is reopened on SIGHUP, so a rotated file is left whole and the log goes on in a new one', () => {
    const dir = mkdtempSync(join(tmpdir(), 'log-file-'));
    const file = join(dir, 'logs', 'gateway.log');
    const logger = createLogger('info', undefined, { file });
    logger.info('first');
    renameSync(file, `${file}.1`);
    logger.info('second, still into the moved file');
    process.emit('SIGHUP', 'SIGHUP');
    logger.info('third');
    const msgs = (path: string) => readFileSync(path, 'utf8').split('\n').filter(Boolean).map((l) => (JSON.parse(l) as { msg: string }).msg);
    expect(msgs(`${file}.1`)).toEqual(['first', 'second, still into the moved file']);
    expect(msgs(file)).toEqual(['third']);
  });

  it('a log file is created 0600 like the data files, also the new one after a rotation', () => {
    const dir = mkdtempSync(join(tmpdir(), 'log-mode-'));
    const file = join(dir, 'gateway.log');
    const logger = createLogger('info', undefined, { file });
    logger.info('first');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    renameSync(file, `${file}.1`);
    process.emit('SIGHUP', 'SIGHUP');
    logger.info('second');
    expect(statSync(file).mode & 0o777).toBe(0o600);
  });
});

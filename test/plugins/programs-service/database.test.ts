/**
 * Which database the program service opens: `programs.db` in the data
 * directory by default; PostgreSQL when `programs.databaseUrl` or
 * PROGRAMS_DATABASE_URL gives a connection string. A mistake in the string
 * stops the start naming the key; a server that does not answer is waited
 * for, the probes answering meanwhile; the password in the string is never
 * shown. (The service on a real PostgreSQL is
 * in the peer suite: test/peers/programs-postgres-start.test.ts.)
 */
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../../core/roles/index.js';
import { programsRole } from '../../../core/roles/programs/definition.js';
import { programsSettings } from '../../../core/roles/programs/config.js';
import { TEST_PROGRAMS_ADMIN_PASSWORD } from '../../fixtures/programs-accounts.js';
import { freePort } from '../../fixtures/free-port.js';
import { untilDefined } from '../../fixtures/until.js';
import { StartCancelled } from '../../../core/runtime/start-cancelled.js';

const logger = pino({ level: 'silent' });
const PASSWORD = 'Sup3r-secret-pw';
const freshDir = () => mkdtempSync(join(tmpdir(), 'programs-db-'));
const facts = (config: ReturnType<typeof parseConfig>, env: NodeJS.ProcessEnv) => ({ config, file: 'plant.json', logger, env, offers: {}, definitions: [] });

describe('the program service database', () => {
  it('without a connection string it opens programs.db in the data directory and says so in its banner', async () => {
    const dataDir = freshDir();
    const config = parseConfig({ logLevel: 'silent', dataDir, timeZone: 'UTC', programs: { host: '127.0.0.1', port: 0 } });
    const started = await programsRole.start(facts(config, { PROGRAMS_ADMIN_PASSWORD: TEST_PROGRAMS_ADMIN_PASSWORD }));
    try {
      expect(existsSync(join(dataDir, 'programs.db'))).toBe(true);
      expect(started.banner).toContain(`  data:        ${dataDir} (SQLite: programs.db)`);
    } finally {
      await started.stop.stop();
    }
  });

  it('programs.databaseUrl that is not a PostgreSQL connection string stops the start naming the key, without its password', () => {
    let message = '';
    try {
      parseConfig({ dataDir: freshDir(), programs: { databaseUrl: `mysql://plant:${PASSWORD}@db.plant:3306/programs` } });
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toContain('programs.databaseUrl: found "mysql:… (the rest not shown)"; expected a PostgreSQL connection string');
    expect(message).not.toContain(PASSWORD);
    try {
      parseConfig({ dataDir: freshDir(), programs: { databaseUrl: `plant:${PASSWORD} at db.plant` } });
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toContain('programs.databaseUrl: found "plant:… (the rest not shown)"');
    expect(message).not.toContain(PASSWORD);
    try {
      parseConfig({ dataDir: freshDir(), programs: { databaseUrl: `${PASSWORD} db.plant` } });
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toContain('programs.databaseUrl: found "(not a URL; not shown, as it may hold a password)"');
    expect(message).not.toContain(PASSWORD);
  });

  it('PROGRAMS_DATABASE_URL naming a server that does not answer: the start waits, /healthz answers and /readyz says database: unavailable with the reason, other requests 503; the lock is held; a stop ends the wait cleanly; the log never shows the password', async () => {
    const port = await freePort(); // nothing listens there any more
    const env = { PROGRAMS_DATABASE_URL: `postgresql://plant:${PASSWORD}@127.0.0.1:${port}/programs`, PROGRAMS_ADMIN_PASSWORD: TEST_PROGRAMS_ADMIN_PASSWORD };
    const dataDir = freshDir();
    const config = parseConfig({ logLevel: 'silent', dataDir, timeZone: 'UTC', programs: { host: '127.0.0.1', port: 0 } }, 'plant.json', env);
    expect(programsSettings(config).databaseUrl).toBe(env.PROGRAMS_DATABASE_URL);
    const lines: string[] = [];
    const logged = pino({ level: 'info' }, { write: (line: string) => void lines.push(line) });
    const stop = new AbortController();
    const starting = programsRole.start({ ...facts(config, env), logger: logged, signal: stop.signal }).then(() => 'started', (err: unknown) => err as Error);
    const probes = await untilDefined('the wait\'s log line naming the probes', () => lines.map((l) => JSON.parse(l) as { probes?: string }).find((l) => l.probes)?.probes);
    const base = probes.replace(/\/readyz$/, '');
    expect((await fetch(`${base}/healthz`)).status).toBe(200);
    const ready = await fetch(`${base}/readyz`);
    expect(ready.status).toBe(503);
    expect(await ready.json()).toEqual({ status: 'not-ready', checks: { database: 'unavailable', plugins: 'failing', listener: 'failing' }, reasons: { database: 'connection refused' } });
    const call = await fetch(`${base}/api/v1/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect([call.status, call.headers.get('retry-after'), call.headers.get('content-type')]).toEqual([503, '5', 'application/problem+json']);
    // The data directory is the role's while it waits; the SQLite file is not made when the database is elsewhere.
    expect(existsSync(join(dataDir, 'programs.db.lock'))).toBe(true);
    expect(existsSync(join(dataDir, 'programs.db'))).toBe(false);
    await new Promise((r) => setTimeout(r, 1500));
    expect(await Promise.race([starting, new Promise((r) => setTimeout(() => r('still waiting'), 50))])).toBe('still waiting');

    stop.abort();
    const ended = await starting;
    expect(ended).toBeInstanceOf(StartCancelled);
    expect(existsSync(join(dataDir, 'programs.db.lock'))).toBe(false);
    await expect(fetch(`${base}/healthz`)).rejects.toThrow();
    const text = lines.join('');
    expect(text).toContain(`postgresql://127.0.0.1:${port}/programs`);
    expect(text).not.toContain(PASSWORD);
  }, 30_000);
});

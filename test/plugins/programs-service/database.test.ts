/**
 * Which database the program service opens: `programs.db` in the data
 * directory by default; PostgreSQL when `programs.databaseUrl` or
 * PROGRAMS_DATABASE_URL gives a connection string. A mistake in the string,
 * or a server that does not answer, stops the start naming the key, and the
 * password in the string is never shown. (The service on a real PostgreSQL is
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

  it('PROGRAMS_DATABASE_URL naming a server that does not answer stops the start naming the variable and the server, never the password', async () => {
    const port = await freePort(); // nothing listens there any more
    const env = { PROGRAMS_DATABASE_URL: `postgresql://plant:${PASSWORD}@127.0.0.1:${port}/programs`, PROGRAMS_ADMIN_PASSWORD: TEST_PROGRAMS_ADMIN_PASSWORD };
    const dataDir = freshDir();
    const config = parseConfig({ logLevel: 'silent', dataDir, timeZone: 'UTC', programs: { host: '127.0.0.1', port: 0 } }, 'plant.json', env);
    expect(programsSettings(config).databaseUrl).toBe(env.PROGRAMS_DATABASE_URL);
    const failure = await programsRole.start(facts(config, env)).then(() => undefined, (err: unknown) => err as Error & { exitCode?: number });
    expect(failure?.message).toContain(`program service failed to start (config plant.json):\nPROGRAMS_DATABASE_URL (environment): cannot connect to PostgreSQL at postgresql://127.0.0.1:${port}/programs`);
    expect(failure?.exitCode).toBe(2);
    expect(`${failure?.message} ${String(failure?.cause ?? '')}`).not.toContain(PASSWORD);
    // The SQLite file is not made when the database is elsewhere.
    expect(existsSync(join(dataDir, 'programs.db'))).toBe(false);
  });

  it('programs.databaseUrl from the file is named as the key when its server does not answer', async () => {
    const port = await freePort();
    const config = parseConfig({ logLevel: 'silent', dataDir: freshDir(), timeZone: 'UTC', programs: { host: '127.0.0.1', port: 0, databaseUrl: `postgres://plant:${PASSWORD}@127.0.0.1:${port}/programs` } });
    await expect(programsRole.start(facts(config, {}))).rejects.toThrow(`programs.databaseUrl: cannot connect to PostgreSQL at postgresql://127.0.0.1:${port}/programs`);
  });
});

/**
 * Secrets from files (`<NAME>_FILE`, as systemd's LoadCredential= hands
 * them): core/config/secret-files.ts reads them once, and core/main.ts gives the
 * roles and commands the environment with the values, so a unit needs no
 * password in its Environment= lines.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SecretFileError, SECRET_VARIABLES, withSecretFiles } from '../../core/config/secret-files.js';

const ROOT = resolve(import.meta.dirname, '../..');

function secretFile(text: string): string {
  const file = join(mkdtempSync(join(tmpdir(), 'secret-files-')), 'secret');
  writeFileSync(file, text, { mode: 0o600 });
  return file;
}

describe('secrets from files', () => {
  it('ADMIN_PASSWORD_FILE and the other secrets\' _FILE variables give the file\'s text without its final line ending', () => {
    const env = withSecretFiles({ ADMIN_PASSWORD_FILE: secretFile('a password from a file\n'), METRICS_TOKEN_FILE: secretFile('token-from-a-credential-1234\r\n'), OTHER: 'kept' });
    expect(env.ADMIN_PASSWORD).toBe('a password from a file');
    expect(env.METRICS_TOKEN).toBe('token-from-a-credential-1234');
    expect(env.ADMIN_PASSWORD_FILE).toBeUndefined();
    expect(env.OTHER).toBe('kept');
    for (const name of ['GATEWAY_ADMIN_PASSWORD', 'PROGRAMS_ADMIN_PASSWORD', 'PROGRAMS_DATABASE_URL', 'CLOUD_DATABASE_URL', 'CLOUD_BROKER_PASSWORD', 'CLOUD_DYNSEC_PASSWORD', 'GATEWAY_CLOUD_TOKEN']) {
      expect(SECRET_VARIABLES).toContain(name);
    }
  });

  it('a secret set both ways, or a file that cannot be read, is refused naming the variable and never the value', () => {
    const file = secretFile('the-secret-value');
    expect(() => withSecretFiles({ ADMIN_PASSWORD: 'plain-value', ADMIN_PASSWORD_FILE: file })).toThrow(/ADMIN_PASSWORD and ADMIN_PASSWORD_FILE are both set/);
    expect(() => withSecretFiles({ METRICS_TOKEN_FILE: join(tmpdir(), 'no-such-secret-file') })).toThrow(SecretFileError);
    expect(() => withSecretFiles({ METRICS_TOKEN_FILE: join(tmpdir(), 'no-such-secret-file') })).toThrow(/METRICS_TOKEN_FILE: cannot read .*no-such-secret-file \(no such file\)/);
    expect(() => withSecretFiles({ METRICS_TOKEN_FILE: tmpdir() })).toThrow(/is a directory/);
    try {
      withSecretFiles({ ADMIN_PASSWORD: 'plain-value', ADMIN_PASSWORD_FILE: file });
    } catch (err) {
      expect((err as Error).message).not.toMatch(/plain-value|the-secret-value/);
    }
  });

  it('npm start refuses an unreadable secret file at start with exit code 2 and the variable\'s name', () => {
    const r = spawnSync(process.execPath, ['--import', 'tsx', 'core/main.ts', '--role', 'gateway'], {
      cwd: ROOT, encoding: 'utf8', timeout: 60_000, env: { ...process.env, GATEWAY_ADMIN_PASSWORD: '', GATEWAY_ADMIN_PASSWORD_FILE: join(tmpdir(), 'no-such-admin-password') },
    });
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/GATEWAY_ADMIN_PASSWORD_FILE: cannot read .*no-such-admin-password \(no such file\)/);
  }, 90_000);

  it('a command reads its secret from the file too: npm run cloud-token takes CLOUD_DATABASE_URL from CLOUD_DATABASE_URL_FILE', () => {
    const dir = mkdtempSync(join(tmpdir(), 'secret-files-cli-'));
    const config = join(dir, 'config.json');
    writeFileSync(config, JSON.stringify({ dataDir: dir, timeZone: 'UTC', machines: [] }));
    // A connection string with a mistake in it: the command names the key it came from (the file's variable's value), without the password.
    const r = spawnSync(process.execPath, ['--import', 'tsx', 'core/main.ts', 'cloud-token', 'list', '--config', config], {
      cwd: ROOT, encoding: 'utf8', timeout: 60_000, env: { ...process.env, GATEWAY_DATA_DIR: '', CLOUD_DATABASE_URL: '', CLOUD_DATABASE_URL_FILE: secretFile('not-a-url-with-secret-pw\n') },
    });
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/CLOUD_DATABASE_URL: not a PostgreSQL connection string/);
    expect(r.stderr).not.toContain('secret-pw');
  }, 90_000);
});

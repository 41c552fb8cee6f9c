import { afterEach, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestGateway, TEST_ADMIN_PASSWORD, type TestGateway } from '../../fixtures/gateway.js';
import { parseConfig } from '../../../core/roles/index.js';
import { PACKAGE_ROOT } from '../../../core/runtime/package-root.js';
import { resetAdminPassword } from '../../../plugins/auth/password-reset.js';

let gw: TestGateway | undefined;
afterEach(async () => {
  await gw?.stop();
  gw = undefined;
});

function configFor(dataDir: string) {
  return parseConfig({ logLevel: 'silent', gateway: { dataDir } });
}

async function login(g: TestGateway, username: string, password: string) {
  return g.request('POST', '/api/auth/login', { username, password }, { token: null });
}

/** A data directory left by a stopped gateway, with the administrator's JWT of that gateway. */
async function stoppedGatewayData(): Promise<{ dataDir: string; oldToken: string }> {
  const first = await startTestGateway();
  const oldToken = first.adminToken;
  expect((await first.request('POST', '/api/security/user/add', { username: 'bob', password: 'bob-password-1', authorizedApis: [] })).status).toBe(200);
  await first.stop();
  return { dataDir: first.dataDir, oldToken };
}

function runScript(args: string[], env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'core/main.ts', 'reset-admin-password', ...args], {
      cwd: PACKAGE_ROOT,
      env: { PATH: process.env.PATH ?? '', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('reset-admin-password', () => {
  it('sets a new random password for admin, invalidates its JWTs, and the restarted gateway accepts only the new one', async () => {
    const { dataDir, oldToken } = await stoppedGatewayData();
    const result = await resetAdminPassword({ config: configFor(dataDir), username: 'admin', env: {} });
    expect(result).toMatchObject({ username: 'admin', created: false, isAdmin: true, dataDir });
    expect(result.generatedPassword).toMatch(/^[A-Za-z0-9]{20}$/);

    gw = await startTestGateway({}, dataDir);
    const fresh = await login(gw, 'admin', result.generatedPassword as string);
    expect(fresh.status).toBe(200);
    expect((await gw.request('GET', '/api/security/users', undefined, { token: fresh.body.token as string })).status).toBe(200);
    expect((await login(gw, 'admin', TEST_ADMIN_PASSWORD)).status).toBe(401);
    const old = await gw.request('GET', '/api/security/users', undefined, { token: oldToken });
    expect([old.status, old.body.errorCode]).toEqual([401, 4]);
    // Other users are untouched.
    expect((await login(gw, 'bob', 'bob-password-1')).status).toBe(200);
  }, 60_000);

  it('creates a missing user as an administrator, with the password from GATEWAY_ADMIN_PASSWORD', async () => {
    const { dataDir } = await stoppedGatewayData();
    const result = await resetAdminPassword({ config: configFor(dataDir), username: 'rescue', env: { GATEWAY_ADMIN_PASSWORD: 'rescue-password-1' } });
    expect(result).toMatchObject({ username: 'rescue', created: true, isAdmin: true, generatedPassword: undefined });
    gw = await startTestGateway({}, dataDir);
    const res = await login(gw, 'rescue', 'rescue-password-1');
    expect(res.status).toBe(200);
    expect((await gw.request('GET', '/api/security/users', undefined, { token: res.body.token as string })).status).toBe(200);
    await expect(resetAdminPassword({ config: configFor(dataDir), username: 'x', env: { GATEWAY_ADMIN_PASSWORD: 'short' } })).rejects.toThrow(/at least 10/);
  }, 60_000);

  it('refuses, naming the data directory, when there is no database there', async () => {
    const empty = mkdtempSync(join(tmpdir(), 'gw-empty-'));
    await expect(resetAdminPassword({ config: configFor(empty), username: 'admin', env: {} })).rejects.toThrow(
      new RegExp(`no gateway database in the data directory ${empty.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`),
    );
  });

  it('refuses while the gateway is running, and leaves the password as it was', async () => {
    gw = await startTestGateway();
    await expect(resetAdminPassword({ config: configFor(gw.dataDir), username: 'admin', env: {} })).rejects.toThrow(/in use by another process: is the gateway running\?/);
    expect((await login(gw, 'admin', TEST_ADMIN_PASSWORD)).status).toBe(200);
    expect((await gw.request('GET', '/api/security/users')).status).toBe(200);
  });

  it('through the script entry: --config and --user are honoured, the password is printed once, a missing database exits non-zero', async () => {
    const { dataDir } = await stoppedGatewayData();
    const configFile = join(mkdtempSync(join(tmpdir(), 'gw-config-')), 'gateway.json');
    writeFileSync(configFile, JSON.stringify({ logLevel: 'silent', gateway: { dataDir } }));
    const ok = await runScript(['--config', configFile, '--user', 'admin'], {});
    expect(ok.code, ok.stderr).toBe(0);
    const password = /password: {2}(\S+)/.exec(ok.stdout)?.[1] ?? '';
    expect(password).toMatch(/^[A-Za-z0-9]{20}$/);
    expect(ok.stdout.split(password).length - 1).toBe(1);
    expect(ok.stdout).toContain(dataDir);
    gw = await startTestGateway({}, dataDir);
    expect((await login(gw, 'admin', password)).status).toBe(200);
    await gw.stop();
    gw = undefined;

    // GATEWAY_DATA_DIR overrides the file's dataDir, as for npm start.
    const empty = mkdtempSync(join(tmpdir(), 'gw-empty-'));
    const missing = await runScript(['--config', configFile], { GATEWAY_DATA_DIR: empty });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain(`no gateway database in the data directory ${empty}`);
    expect(missing.stdout).toBe('');
    const bad = await runScript(['--config', configFile, '--usr', 'x'], {});
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/unknown argument '--usr'; accepted: --config FILE, --user NAME/);
  }, 90_000);
});

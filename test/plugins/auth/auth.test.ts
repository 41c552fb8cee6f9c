import { afterEach, describe, expect, it } from 'vitest';
import { request as httpRequest } from 'node:http';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { decodeProtectedHeader } from 'jose';
import { simMachine, startTestGateway, TEST_ADMIN_PASSWORD, TEST_PASSWORD_COST, type TestGateway } from '../../fixtures/gateway.js';
import { jwtIssuedAgo, jwtWithForeignKey, unsignedJwt } from '../../fixtures/credentials.js';

let gw: TestGateway | undefined;
afterEach(async () => {
  await gw?.stop();
  gw = undefined;
});

async function addUser(g: TestGateway, username: string, authorizedApis: string[] = [], isAdmin = false) {
  const res = await g.request('POST', '/api/security/user/add', { username, password: `${username}-password-1`, isAdmin, authorizedApis });
  expect(res.status).toBe(200);
  const login = await g.request('POST', '/api/auth/login', { username, password: `${username}-password-1` }, { token: null });
  return (login.body.data as { token: string }).token;
}

async function createKey(g: TestGateway, username: string): Promise<{ id: string; key: string }> {
  const res = await g.request('POST', '/api/security/secret-key/create', { username, label: 'test' });
  expect(res.status).toBe(200);
  return res.body.data as { id: string; key: string };
}

describe('login and JWT', () => {
  it('GW-10 GW-30 login takes username and password and returns a JWT valid 24 hours, HS256 pinned', async () => {
    gw = await startTestGateway();
    const res = await gw.request('POST', '/api/auth/login', { username: 'admin', password: TEST_ADMIN_PASSWORD }, { token: null });
    expect(res.status).toBe(200);
    const { token } = res.body.data as { token: string };
    // The specification's Login response has `token` at the top level; the envelope's data carries it too.
    expect(res.body.token).toBe(token);
    expect(decodeProtectedHeader(token).alg).toBe('HS256');
    const payload = JSON.parse(Buffer.from(token.split('.')[1] as string, 'base64url').toString()) as { exp: number; iat: number; sub: string };
    expect(payload.exp - payload.iat).toBe(24 * 3600);
    expect(payload.sub).toBe('admin');
    const missing = await gw.request('POST', '/api/auth/login', { username: 'admin' }, { token: null });
    expect(missing.status).toBe(400);
    expect(missing.body.errorMsg).toMatch(/password/);
  });

  it('GW-23 a JWT is refused after 24 hours and a new login is needed', async () => {
    gw = await startTestGateway();
    const fresh = await jwtIssuedAgo(gw.dataDir, gw.adminToken, 23.9 * 3600_000);
    expect((await gw.request('GET', '/api/config/machines', undefined, { token: fresh })).status).toBe(200);
    const expired = await jwtIssuedAgo(gw.dataDir, gw.adminToken, 24 * 3600_000 + 5000);
    const res = await gw.request('GET', '/api/config/machines', undefined, { token: expired });
    expect([res.status, res.body.errorCode]).toEqual([401, 4]);
  });

  it('refuses a JWT signed with another key, an unsigned one (alg none), and one of a deleted user', async () => {
    gw = await startTestGateway();
    for (const token of [await jwtWithForeignKey('admin'), unsignedJwt('admin')]) {
      const res = await gw.request('GET', '/api/config/machines', undefined, { token });
      expect([res.status, res.body.errorCode]).toEqual([401, 4]);
    }
    const bob = await addUser(gw, 'bob', ['/api/config/machines']);
    expect((await gw.request('GET', '/api/config/machines', undefined, { token: bob })).status).toBe(200);
    await gw.request('POST', '/api/security/user/delete', { username: 'bob' });
    expect((await gw.request('GET', '/api/config/machines', undefined, { token: bob })).status).toBe(401);
  });

  it('the signing key is generated on first start, kept in the data directory (mode 0600) and reused', async () => {
    gw = await startTestGateway();
    const file = join(gw.dataDir, 'jwt-signing.key');
    const key = readFileSync(file, 'utf8');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const token = gw.adminToken;
    const dir = gw.dataDir;
    await gw.stop();
    gw = await startTestGateway({}, dir);
    expect(readFileSync(file, 'utf8')).toBe(key);
    expect((await gw.request('GET', '/api/config/machines', undefined, { token })).status).toBe(200);
  });

  it('repeated login failures are throttled with 429 and Retry-After, per source and user', async () => {
    gw = await startTestGateway();
    for (let i = 0; i < 5; i++) {
      const res = await gw.request('POST', '/api/auth/login', { username: 'admin', password: 'wrong-password' }, { token: null });
      expect([res.status, res.body.errorCode]).toEqual([401, 10]);
    }
    const blocked = await gw.request('POST', '/api/auth/login', { username: 'admin', password: TEST_ADMIN_PASSWORD }, { token: null });
    expect([blocked.status, blocked.body.errorCode]).toEqual([429, 8]);
    expect(Number(blocked.headers['retry-after'])).toBeGreaterThan(0);
    const elsewhere = await gw.request('POST', '/api/auth/login', { username: 'admin', password: TEST_ADMIN_PASSWORD }, { token: null, remoteAddress: '10.9.9.9' });
    expect(elsewhere.status).toBe(200);
  });

  it('an unknown user and a wrong password get the same answer', async () => {
    gw = await startTestGateway();
    const a = await gw.request('POST', '/api/auth/login', { username: 'nobody', password: 'whatever-1' }, { token: null });
    const b = await gw.request('POST', '/api/auth/login', { username: 'admin', password: 'whatever-1' }, { token: null });
    expect(a.body).toEqual(b.body);
    expect(a.status).toBe(b.status);
  });
});

describe('change-password', () => {
  it('GW-11 GW-31 takes the user from the JWT, checks currentPassword and returns errorCode and errorMsg', async () => {
    gw = await startTestGateway();
    const bob = await addUser(gw, 'bob');
    const wrong = await gw.request('POST', '/api/auth/change-password', { currentPassword: 'nope-nope-1', newPassword: 'brand-new-password' }, { token: bob });
    expect([wrong.status, wrong.body.errorCode]).toEqual([401, 10]);
    // A username in the body is not a field: the user comes from the JWT only.
    const withUser = await gw.request('POST', '/api/auth/change-password', { username: 'admin', currentPassword: 'bob-password-1', newPassword: 'brand-new-password' }, { token: bob });
    expect(withUser.status).toBe(400);
    const ok = await gw.request('POST', '/api/auth/change-password', { currentPassword: 'bob-password-1', newPassword: 'brand-new-password' }, { token: bob });
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ errorCode: 0, errorMsg: 'OK' });
    // The old JWT is invalidated; the new password logs in; admin's password is untouched.
    expect((await gw.request('POST', '/api/auth/change-password', { currentPassword: 'brand-new-password', newPassword: 'other-password-1' }, { token: bob })).status).toBe(401);
    expect((await gw.request('POST', '/api/auth/login', { username: 'bob', password: 'brand-new-password' }, { token: null })).status).toBe(200);
    expect((await gw.request('POST', '/api/auth/login', { username: 'admin', password: TEST_ADMIN_PASSWORD }, { token: null })).status).toBe(200);
  });

  it('GW-31 refuses a secret key: change-password needs a JWT', async () => {
    gw = await startTestGateway();
    await addUser(gw, 'bob');
    const { key } = await createKey(gw, 'bob');
    const res = await gw.request('POST', '/api/auth/change-password', { currentPassword: 'bob-password-1', newPassword: 'brand-new-password' }, { token: key });
    expect([res.status, res.body.errorCode]).toEqual([401, 3]);
  });

  it('rejects a short new password naming the field', async () => {
    gw = await startTestGateway();
    const res = await gw.request('POST', '/api/auth/change-password', { currentPassword: TEST_ADMIN_PASSWORD, newPassword: 'short' });
    expect(res.status).toBe(400);
    expect(res.body.errorMsg).toMatch(/newPassword: .*at least 10 characters/);
  });
});

describe('secret keys and users', () => {
  it('GW-73 a secret key is created by an administrator, shown once, stored as a hash and valid until revoked', async () => {
    gw = await startTestGateway();
    await addUser(gw, 'line', ['/api/config/machines']);
    const { id, key } = await createKey(gw, 'line');
    expect(key).toMatch(/^gwk_[0-9a-f]{12}_[A-Za-z0-9_-]{43}$/);
    // The secret itself may contain '_', so it is cut by position, not split.
    const secret = key.slice('gwk_'.length + 12 + 1);
    const listed = await gw.request('GET', '/api/security/secret-keys');
    expect(listed.raw).not.toContain(secret);
    expect(listed.body.data).toEqual([expect.objectContaining({ id, username: 'line', revokedAt: null })]);
    const stored = await gw.gateway.context.db.all<{ key_hash: string }>('SELECT key_hash FROM secret_keys');
    expect(stored[0]?.key_hash).not.toContain(secret);
    expect((await gw.request('GET', '/api/config/machines', undefined, { token: key })).status).toBe(200);
    await gw.request('POST', '/api/security/secret-key/revoke', { id });
    const revoked = await gw.request('GET', '/api/config/machines', undefined, { token: key });
    expect([revoked.status, revoked.body.errorCode]).toEqual([401, 4]);
  });

  it('passwords are stored as scrypt hashes and never returned', async () => {
    gw = await startTestGateway();
    await addUser(gw, 'carol');
    const rows = await gw.gateway.context.db.all<{ password_hash: string }>('SELECT password_hash FROM users');
    // Test gateways hash at the fixture's lowered cost; password-cost.test.ts checks the production one.
    for (const r of rows) expect(r.password_hash).toMatch(new RegExp(`^scrypt\\$${TEST_PASSWORD_COST.N}\\$8\\$1\\$`));
    const users = await gw.request('GET', '/api/security/users');
    expect(users.raw).not.toMatch(/scrypt|password/i);
  });

  it('authorised API entries must be known interfaces or prefixes, and never administration interfaces', async () => {
    gw = await startTestGateway();
    const res = await gw.request('POST', '/api/security/user/add', { username: 'dave', password: 'dave-password-1', authorizedApis: ['/api/config/machine', '/api/nope', '/api/security/users'] });
    expect(res.status).toBe(400);
    expect(res.body.errorMsg).toMatch(/'\/api\/nope', '\/api\/security\/users'/);
  });

  it('the last administrator cannot be deleted or demoted', async () => {
    gw = await startTestGateway();
    expect((await gw.request('POST', '/api/security/user/delete', { username: 'admin' })).status).toBe(400);
    expect((await gw.request('POST', '/api/security/user/update', { username: 'admin', isAdmin: false })).status).toBe(400);
  });

  it('the first administrator takes GATEWAY_ADMIN_PASSWORD; without it a random one is announced once', async () => {
    gw = await startTestGateway();
    expect(gw.gateway.context.announcements.join('\n')).toContain('password from GATEWAY_ADMIN_PASSWORD');
    expect(gw.gateway.context.announcements.join('\n')).not.toContain(TEST_ADMIN_PASSWORD);
    expect(gw.adminToken).not.toBe('');
  });
});

describe('security control and the IP white list', () => {
  it('GW-70 GW-71 GW-79 with security control off no credentials are needed; the white list still applies', async () => {
    gw = await startTestGateway({ machines: [simMachine('A')] });
    expect((await gw.request('GET', '/api/config/machines', undefined, { token: null })).status).toBe(401);
    await gw.request('POST', '/api/security/settings/update', { securityControl: false, enableIpWhiteList: true, ipWhiteList: ['10.1.0.0/16'] });
    const inList = await gw.request('GET', '/api/config/machines', undefined, { token: null, remoteAddress: '10.1.2.3' });
    expect(inList.status).toBe(200);
    const outside = await gw.request('GET', '/api/config/machines', undefined, { token: null, remoteAddress: '10.2.0.1' });
    expect([outside.status, outside.body.errorCode, outside.body.errorMsg]).toEqual([401, 7, 'IP not in white list.']);
  });

  it('GW-81 GW-82 GW-83 the white list checks secret keys, exempts JWTs and login, and matches CIDR, IPv6 and IPv4-mapped addresses', async () => {
    gw = await startTestGateway();
    await addUser(gw, 'line', ['/api/config/machines']);
    const { key } = await createKey(gw, 'line');
    const set = await gw.request('POST', '/api/security/settings/update', { enableIpWhiteList: true, ipWhiteList: ['192.168.10.0/24', '2001:db8::/32', '10.0.0.7'] });
    expect(set.status).toBe(200);
    const cases: [string, number][] = [
      ['192.168.10.44', 200],
      ['::ffff:192.168.10.44', 200],
      ['192.168.11.1', 401],
      ['2001:db8:1::5', 200],
      ['2001:db9::1', 401],
      ['10.0.0.7', 200],
      ['::ffff:10.0.0.8', 401],
    ];
    for (const [ip, status] of cases) {
      const res = await gw.request('GET', '/api/config/machines', undefined, { token: key, remoteAddress: ip });
      expect([ip, res.status]).toEqual([ip, status]);
      if (status === 401) expect(res.body.errorCode).toBe(7);
    }
    expect((await gw.request('GET', '/api/config/machines', undefined, { remoteAddress: '203.0.113.9' })).status).toBe(200);
    const login = await gw.request('POST', '/api/auth/login', { username: 'line', password: 'line-password-1' }, { token: null, remoteAddress: '203.0.113.9' });
    expect(login.status).toBe(200);
  });

  it('GW-84 a bad white-list entry is rejected naming it and the accepted forms', async () => {
    gw = await startTestGateway();
    const res = await gw.request('POST', '/api/security/settings/update', { ipWhiteList: ['10.0.0.0/24', 'not-an-ip'] });
    expect(res.status).toBe(400);
    expect(res.body.errorMsg).toMatch(/ipWhiteList\[1\]: 'not-an-ip' is not an IP address or CIDR range; accepted: .*2001:db8::\/32/);
  });

  it('GW-81 over real HTTP: a client bound to 127.0.0.2 is outside a list holding only 127.0.0.1', async () => {
    gw = await startTestGateway();
    await addUser(gw, 'line', ['/api/config/machines']);
    const { key } = await createKey(gw, 'line');
    await gw.request('POST', '/api/security/settings/update', { enableIpWhiteList: true, ipWhiteList: ['127.0.0.1'] });
    const url = new URL(await gw.gateway.listen({ host: '127.0.0.1', port: 0 }));
    const get = (localAddress: string) =>
      new Promise<{ status: number; body: string }>((resolve, reject) => {
        const req = httpRequest({ host: '127.0.0.1', port: url.port, path: '/api/config/machines', localAddress, headers: { authorization: `Bearer ${key}` } }, (res) => {
          let body = '';
          res.on('data', (d: Buffer) => (body += d.toString()));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
        });
        req.on('error', reject);
        req.end();
      });
    expect((await get('127.0.0.1')).status).toBe(200);
    const outside = await get('127.0.0.2');
    expect(outside.status).toBe(401);
    expect(JSON.parse(outside.body)).toMatchObject({ errorCode: 7, errorMsg: 'IP not in white list.' });
  });
});

describe('API reference routes', () => {
  it('GW-81 the OpenAPI document and reference page need no credentials but obey the IP white list', async () => {
    gw = await startTestGateway();
    for (const url of ['/api/openapi.json', '/api/docs']) {
      const open = await gw.gateway.http.inject({ method: 'GET', url });
      expect([url, open.statusCode]).toEqual([url, 200]);
    }
    await gw.request('POST', '/api/security/settings/update', { enableIpWhiteList: true, ipWhiteList: ['127.0.0.1'] });
    for (const url of ['/api/openapi.json', '/api/docs']) {
      const outside = await gw.gateway.http.inject({ method: 'GET', url, remoteAddress: '127.0.0.2' });
      expect([url, outside.statusCode, (outside.json() as { errorCode: number }).errorCode]).toEqual([url, 401, 7]);
      const inside = await gw.gateway.http.inject({ method: 'GET', url });
      expect([url, inside.statusCode]).toEqual([url, 200]);
    }
  });
});

describe('proxies', () => {
  async function secretKeyGateway(raw: Record<string, unknown>) {
    const g = await startTestGateway(raw);
    await addUser(g, 'line', ['/api/config/machines']);
    const { key } = await createKey(g, 'line');
    await g.request('POST', '/api/security/settings/update', { enableIpWhiteList: true, ipWhiteList: ['10.5.0.0/16'] });
    return { g, key };
  }

  it('GW-81 X-Forwarded-For is ignored unless the peer is a trusted proxy', async () => {
    const { g, key } = await secretKeyGateway({});
    gw = g;
    const spoofed = await g.request('GET', '/api/config/machines', undefined, { token: key, remoteAddress: '127.0.0.2', headers: { 'x-forwarded-for': '10.5.1.1' } });
    expect([spoofed.status, spoofed.body.errorCode]).toEqual([401, 7]);
  });

  it('GW-81 behind a trusted proxy the client address from X-Forwarded-For is checked', async () => {
    const { g, key } = await secretKeyGateway({ communication: { trustProxy: ['127.0.0.1'] } });
    gw = g;
    const inside = await g.request('GET', '/api/config/machines', undefined, { token: key, headers: { 'x-forwarded-for': '10.5.1.1' } });
    expect(inside.status).toBe(200);
    const outside = await g.request('GET', '/api/config/machines', undefined, { token: key, headers: { 'x-forwarded-for': '10.6.1.1' } });
    expect([outside.status, outside.body.errorCode]).toEqual([401, 7]);
    const untrustedPeer = await g.request('GET', '/api/config/machines', undefined, { token: key, remoteAddress: '127.0.0.2', headers: { 'x-forwarded-for': '10.5.1.1' } });
    expect(untrustedPeer.status).toBe(401);
  });
});

describe('over real HTTP', () => {
  it('GW-01 GW-10 GW-72 login, then a configuration read, a live read and the OpenAPI document on a listening gateway', async () => {
    gw = await startTestGateway({ machines: [simMachine('R1')] });
    const base = await gw.gateway.listen({ host: '127.0.0.1', port: 0 });
    const login = await fetch(`${base}/api/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username: 'admin', password: TEST_ADMIN_PASSWORD }),
    });
    const { data } = (await login.json()) as { data: { token: string } };
    const auth = { authorization: `Bearer ${data.token}` };
    const machines = await fetch(`${base}/api/config/machines`, { headers: auth });
    expect(machines.status).toBe(200);
    expect(((await machines.json()) as { data: { machineID: string }[] }).data.map((m) => m.machineID)).toEqual(['R1']);
    let live: { errorCode: number; data?: { adjustedStatus?: string } } = { errorCode: -1 };
    for (let i = 0; i < 50 && live.errorCode !== 0; i++) {
      live = (await (await fetch(`${base}/api/cnc/readCNCStatusDetails?machineID=R1`, { headers: auth })).json()) as typeof live;
      if (live.errorCode !== 0) await new Promise((r) => setTimeout(r, 50));
    }
    expect(live.errorCode).toBe(0);
    expect(['RUNNING', 'HOLD', 'STOPPED', 'RESET', 'EMERGENCY']).toContain(live.data?.adjustedStatus);
    const noAuth = await fetch(`${base}/api/config/machines`);
    expect(noAuth.status).toBe(401);
    const doc = (await (await fetch(`${base}/api/openapi.json`)).json()) as { openapi: string };
    expect(doc.openapi).toMatch(/^3\.1/);
  });
});

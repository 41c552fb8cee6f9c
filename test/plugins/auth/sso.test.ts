/**
 * Sign-in to the gateway's fleet console through an OpenID Connect provider
 * (`security.oidc`): a real provider (oidc-provider) on 127.0.0.1, its forms
 * walked without a browser, and a real gateway listening on 127.0.0.1.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../../core/roles/index.js';
import { Gateway } from '../../../core/roles/gateway/gateway.js';
import { DRIVERS } from '../../../drivers/registry.js';
import { placeDefaults, TEST_ADMIN_PASSWORD, TEST_PLUGINS, withoutRateLimits } from '../../fixtures/gateway.js';
import { freePort } from '../../fixtures/free-port.js';
import { startTestIssuer, type TestAccount, type TestIssuer } from '../../fixtures/oidc-issuer.js';
import { consoleClient, consoleSignIn, providerLogout } from '../../fixtures/oidc-consoles.js';
import { BACKCHANNEL_LOGOUT_EVENT } from '../../../core/auth/logout-tokens.js';

const CLIENT = { id: 'gateway-console', secret: 'gateway-console-secret-of-thirty-two-characters' };

interface Running {
  gateway: Gateway;
  url: string;
  /** The gateway's log lines (JSON). */
  lines: Record<string, unknown>[];
  stop(): Promise<void>;
}

/** A gateway with `security.oidc` (merged over the test provider's client), listening on 127.0.0.1:`port`. */
async function startGateway(oidc: Record<string, unknown>, port: number, env: NodeJS.ProcessEnv = {}): Promise<Running> {
  const lines: Record<string, unknown>[] = [];
  const logger = pino({ level: 'info' }, { write: (line: string) => lines.push(JSON.parse(line) as Record<string, unknown>) });
  const raw = { security: { oidc } };
  const dataDir = mkdtempSync(join(tmpdir(), 'gw-sso-'));
  const config = parseConfig({ logLevel: 'silent', ...placeDefaults(raw, dataDir), ...withoutRateLimits(raw) });
  const gateway = await Gateway.create({ config, drivers: DRIVERS, plugins: TEST_PLUGINS, logger, env: { GATEWAY_ADMIN_PASSWORD: TEST_ADMIN_PASSWORD, ...env } });
  await gateway.http.listen({ host: '127.0.0.1', port });
  return { gateway, url: `http://127.0.0.1:${port}`, lines, stop: () => gateway.stop() };
}

/** Signs in through the provider and trades the one-time code for the console's JWT. */
async function signInForJwt(url: string, accountId: string) {
  const result = await consoleSignIn(url, accountId);
  expect(result.status, result.html.slice(0, 400)).toBe(200);
  const code = result.next?.split('#sso=')[1];
  expect(code).toBeTruthy();
  const answer = await fetch(`${url}/auth/oidc/token`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ code }) });
  expect(answer.status).toBe(200);
  const { token } = (await answer.json()) as { token: string };
  return { token, code: code as string, providerJar: result.providerJar };
}

async function api(url: string, path: string, token: string | null, init: RequestInit = {}) {
  const response = await fetch(`${url}${path}`, { ...init, headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(init.headers as Record<string, string> | undefined) } });
  return { status: response.status, body: (await response.json().catch(() => null)) as { errorCode?: number; data?: unknown } | null };
}

const usersOf = async (url: string, token: string) => (await api(url, '/api/security/users', token)).body?.data as { username: string; isAdmin: boolean; authorizedApis: string[] }[];

async function localLogin(url: string, username: string, password: string) {
  return api(url, '/api/auth/login', null, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username, password }) });
}

describe('sign-in through the provider (gateway)', () => {
  const accounts: TestAccount[] = [
    { id: 'alice-sub', name: 'Alice Admin', email: 'alice@plant.example', groups: ['cnc-admins'], claims: { preferred_username: 'alice' } },
    { id: 'bob-sub', name: 'Bob Operator', email: 'bob@plant.example', groups: ['operators', 'hall-2'], claims: { preferred_username: 'bob' } },
    { id: 'carol-sub', name: 'Carol', groups: ['visitors', 'canteen'], claims: { preferred_username: 'carol' } },
    { id: 'dave-sub', groups: ['operators'], claims: { preferred_username: 'admin' } },
  ];
  let op: TestIssuer;
  let gw: Running;
  let adminJwt: string;

  beforeAll(async () => {
    const port = await freePort();
    op = await startTestIssuer({ accounts, clients: [consoleClient(CLIENT.id, `http://127.0.0.1:${port}`)] });
    gw = await startGateway({
      issuer: op.issuer, clientId: CLIENT.id, clientSecret: CLIENT.secret, displayName: 'Plant SSO',
      roles: { 'cnc-admins': 'admin', operators: 'user' }, authorizedApis: { operators: ['/api/cnc/*'], 'hall-2': ['/api/config/machines'] },
    }, port);
    adminJwt = ((await localLogin(gw.url, 'admin', TEST_ADMIN_PASSWORD)).body?.data as { token: string }).token;
  }, 60_000);
  afterAll(async () => {
    await gw?.stop();
    await op?.close();
  });

  it('the status names the provider and says it can be reached', async () => {
    const status = await (await fetch(`${gw.url}/auth/oidc/status`)).json();
    expect(status).toEqual({ displayName: 'Plant SSO', reachable: true });
  });

  it('a mapped administrator group makes an administrator at the first sign-in, whose JWT works on /api, with the sign-in logged', async () => {
    const { token, code } = await signInForJwt(gw.url, 'alice-sub');
    const users = await usersOf(gw.url, token);
    expect(users.find((u) => u.username === 'alice')).toMatchObject({ isAdmin: true });
    expect(gw.lines.some((l) => l.event === 'sso.user.created' && l.username === 'alice' && l.role === 'admin')).toBe(true);
    expect(gw.lines.some((l) => l.event === 'sso.sign-in' && l.username === 'alice' && l.component === 'security')).toBe(true);
    expect(JSON.stringify(gw.lines)).not.toContain(CLIENT.secret);
    // The one-time code is good once.
    const again = await fetch(`${gw.url}/auth/oidc/token`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ code }) });
    expect(again.status).toBe(400);
  });

  it('a mapped user group makes a user with the authorised APIs of every mapped value it has; no password signs it in locally', async () => {
    const { token } = await signInForJwt(gw.url, 'bob-sub');
    const bob = (await usersOf(gw.url, adminJwt)).find((u) => u.username === 'bob');
    expect(bob).toMatchObject({ isAdmin: false, authorizedApis: ['/api/cnc/*', '/api/config/machines'] });
    // Not an administrator: the user list is refused.
    expect((await api(gw.url, '/api/security/users', token)).body?.errorCode).not.toBe(0);
    expect((await localLogin(gw.url, 'bob', '!oidc')).body?.errorCode).not.toBe(0);
    expect((await localLogin(gw.url, 'bob', '')).body?.errorCode).not.toBe(0);
  });

  it('a change of the claims changes the role at the next sign-in, and the change is logged', async () => {
    const bob = accounts[1] as TestAccount;
    bob.groups = ['cnc-admins'];
    try {
      await signInForJwt(gw.url, 'bob-sub');
      expect((await usersOf(gw.url, adminJwt)).find((u) => u.username === 'bob')).toMatchObject({ isAdmin: true });
      expect(gw.lines.some((l) => l.event === 'sso.role.changed' && l.username === 'bob' && l.to === 'admin' && String(l.from).startsWith('user'))).toBe(true);
    } finally {
      bob.groups = ['operators', 'hall-2'];
    }
    await signInForJwt(gw.url, 'bob-sub');
    expect((await usersOf(gw.url, adminJwt)).find((u) => u.username === 'bob')).toMatchObject({ isAdmin: false });
  });

  it('a sign-in after the provider rotated its signing key goes through: the new key is fetched from its JWKS without a restart', async () => {
    await signInForJwt(gw.url, 'alice-sub');
    await op.rotateKeys();
    const { token } = await signInForJwt(gw.url, 'alice-sub');
    expect((await api(gw.url, '/api/security/users', token)).body?.errorCode).toBe(0);
  });

  it('a user whose claims map to no role gets a page naming the values seen and the setting to map, and no account', async () => {
    const result = await consoleSignIn(gw.url, 'carol-sub');
    expect(result.status).toBe(403);
    expect(result.html).toContain('No access yet');
    expect(result.html).toContain('<code>visitors</code>');
    expect(result.html).toContain('<code>canteen</code>');
    expect(result.html).toContain('security.oidc.roles');
    expect(result.html).toContain('administrator');
    expect((await usersOf(gw.url, adminJwt)).some((u) => u.username === 'carol')).toBe(false);
    expect(gw.lines.some((l) => l.event === 'sso.sign-in.refused' && l.username === 'carol')).toBe(true);
  });

  it('a provider user whose name is a local user is refused, and the local user is not taken over', async () => {
    const result = await consoleSignIn(gw.url, 'dave-sub');
    expect(result.status).toBe(409);
    expect(result.html).toContain('User name taken');
    expect((await usersOf(gw.url, adminJwt)).filter((u) => u.username === 'admin')).toHaveLength(1);
    expect((await localLogin(gw.url, 'admin', TEST_ADMIN_PASSWORD)).body?.errorCode).toBe(0);
  });

  it('a callback that was not started here is refused with a page', async () => {
    const response = await fetch(`${gw.url}/auth/oidc/callback?code=abc&state=def`);
    expect(response.status).toBe(400);
    expect(await response.text()).toContain('Sign-in not recognised');
  });

  it('logout ends the session at once, and the console goes on to the provider\'s end_session_endpoint', async () => {
    const { token } = await signInForJwt(gw.url, 'alice-sub');
    expect((await api(gw.url, '/api/security/users', token)).body?.errorCode).toBe(0);
    const out = await fetch(`${gw.url}/auth/logout`, { method: 'POST', headers: { authorization: `Bearer ${token}` } });
    expect(out.status).toBe(204);
    expect((await api(gw.url, '/api/security/users', token)).status).toBe(401);
    const onward = await fetch(`${gw.url}/auth/oidc/logout`, { redirect: 'manual' });
    expect(onward.status).toBe(302);
    const location = new URL(onward.headers.get('location') as string);
    expect(`${location.origin}${location.pathname}`).toBe(`${op.issuer}/session/end`);
    expect(location.searchParams.get('post_logout_redirect_uri')).toBe(`${gw.url}/`);
    expect(location.searchParams.get('client_id')).toBe(CLIENT.id);
  });

  it('a sign-out at the provider ends the session at once through back-channel logout (OpenID Connect Back-Channel Logout 1.0)', async () => {
    const { token, providerJar } = await signInForJwt(gw.url, 'alice-sub');
    expect((await api(gw.url, '/api/security/users', token)).body?.errorCode).toBe(0);
    const onward = await fetch(`${gw.url}/auth/oidc/logout`, { redirect: 'manual' });
    const before = op.backchannelDeliveries.length;
    await providerLogout(onward.headers.get('location') as string, providerJar);
    expect(op.backchannelDeliveries.slice(before)).toContainEqual({ uri: `${gw.url}/auth/oidc/backchannel-logout`, status: 200 });
    expect((await api(gw.url, '/api/security/users', token)).status).toBe(401);
    // The local administrator's JWT is not touched.
    expect((await api(gw.url, '/api/security/users', adminJwt)).body?.errorCode).toBe(0);
  });

  it('a logout token that is not acceptable is refused and ends nothing', async () => {
    const { token } = await signInForJwt(gw.url, 'alice-sub');
    const good = { aud: CLIENT.id, sub: 'alice-sub', jti: 'j', events: { [BACKCHANNEL_LOGOUT_EVENT]: {} } };
    const other = await startTestIssuer({ accounts: [] });
    const logout = (claims: Record<string, unknown>, o: Parameters<TestIssuer['mint']>[1] = {}) => op.mint(claims, { typ: 'logout+jwt', ...o });
    try {
      const bad = [
        await op.mint({ ...good, jti: 'j0' }),
        await logout({ ...good, jti: 'j1', nonce: 'n' }),
        await logout({ ...good, jti: 'j2', events: {} }),
        await logout({ ...good, jti: 'j3', aud: 'another-client' }),
        await logout({ ...good, jti: 'j4' }, { expiresInSec: -60, issuedAtSec: Math.floor(Date.now() / 1000) - 600 }),
        await logout({ ...good, jti: 'j5', sub: undefined }),
        await logout({ ...good, jti: 'j6' }, { key: other.key }),
        await logout({ ...good, jti: 'j7', iss: other.issuer }),
        `${Buffer.from(JSON.stringify({ alg: 'none' })).toString('base64url')}.${Buffer.from(JSON.stringify({ ...good, iss: op.issuer, iat: 1, exp: 9_999_999_999 })).toString('base64url')}.`,
        'not-a-jwt',
      ];
      for (const logoutToken of bad) {
        const answer = await fetch(`${gw.url}/auth/oidc/backchannel-logout`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ logout_token: logoutToken }) });
        expect(answer.status, logoutToken.slice(0, 40)).toBe(400);
      }
      expect((await fetch(`${gw.url}/auth/oidc/backchannel-logout`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'x=1' })).status).toBe(400);
      expect((await api(gw.url, '/api/security/users', token)).body?.errorCode).toBe(0);
      // The same token, well formed, ends the session; sent again (a replay) it is refused.
      const logoutToken = await logout({ ...good, jti: 'j-ok' });
      const send = () => fetch(`${gw.url}/auth/oidc/backchannel-logout`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ logout_token: logoutToken }) });
      expect((await send()).status).toBe(200);
      expect((await api(gw.url, '/api/security/users', token)).status).toBe(401);
      expect((await send()).status).toBe(400);
    } finally {
      await other.close();
    }
  });
});

describe('the provider cannot be used (gateway)', () => {
  it('an issuer that is down: the status says so, the sign-in page says so, and the local form still works', async () => {
    const port = await freePort();
    const op = await startTestIssuer({ accounts: [], clients: [consoleClient(CLIENT.id, `http://127.0.0.1:${port}`)] });
    const gw = await startGateway({ issuer: op.issuer, clientId: CLIENT.id, clientSecret: CLIENT.secret, displayName: 'Plant SSO' }, port);
    try {
      op.pause();
      const status = (await (await fetch(`${gw.url}/auth/oidc/status`)).json()) as { reachable: boolean; reason?: string };
      expect(status.reachable).toBe(false);
      expect(status.reason).toBeTruthy();
      const page = await fetch(`${gw.url}/auth/oidc/login`, { redirect: 'manual' });
      expect(page.status).toBe(503);
      expect(await page.text()).toContain('Plant SSO cannot be reached');
      expect((await localLogin(gw.url, 'admin', TEST_ADMIN_PASSWORD)).body?.errorCode).toBe(0);
    } finally {
      op.resume();
      await gw.stop();
      await op.close();
    }
  }, 60_000);

  it('a discovery document that is not JSON: the status and the sign-in page say the provider cannot be used', async () => {
    const html: Server = createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<html>a login portal</html>'));
    await new Promise<void>((resolve) => html.listen(0, '127.0.0.1', resolve));
    const issuer = `http://127.0.0.1:${(html.address() as AddressInfo).port}`;
    const gw = await startGateway({ issuer, clientId: CLIENT.id }, 0);
    try {
      const address = gw.gateway.http.server.address() as AddressInfo;
      const url = `http://127.0.0.1:${address.port}`;
      const status = (await (await fetch(`${url}/auth/oidc/status`)).json()) as { reachable: boolean; reason?: string };
      expect(status.reachable).toBe(false);
      expect(status.reason).toMatch(/JSON/i);
      const page = await fetch(`${url}/auth/oidc/login`, { redirect: 'manual' });
      expect(page.status).toBe(503);
      expect((await localLogin(url, 'admin', TEST_ADMIN_PASSWORD)).body?.errorCode).toBe(0);
    } finally {
      await gw.stop();
      html.closeAllConnections();
      await new Promise<void>((resolve) => html.close(() => resolve()));
    }
  }, 60_000);

  it('a settings mistake stops the start naming its path', async () => {
    await expect(startGateway({ clientId: CLIENT.id }, 0)).rejects.toThrow(/security\.oidc\.issuer.*OIDC_ISSUER/);
    await expect(startGateway({ issuer: 'http://idp.plant.example', clientId: CLIENT.id }, 0)).rejects.toThrow(/security\.oidc\.issuer.*plain HTTP/);
    await expect(startGateway({ issuer: 'https://idp.plant.example', clientId: CLIENT.id, roles: { x: 'superuser' } }, 0)).rejects.toThrow(/security\.oidc\.roles/);
    await expect(startGateway({ issuer: 'https://idp.plant.example', clientId: CLIENT.id, tenant: 'x' }, 0)).rejects.toThrow(/security\.oidc/);
  });

  it('OIDC_ISSUER, OIDC_CLIENT_ID and OIDC_CLIENT_SECRET give what the section leaves out, and the secret is never logged', async () => {
    const port = await freePort();
    const op = await startTestIssuer({ accounts: [{ id: 'erin-sub', groups: ['cnc-admins'], claims: { preferred_username: 'erin' } }], clients: [consoleClient('consoles', `http://127.0.0.1:${port}`)] });
    const gw = await startGateway({ roles: { 'cnc-admins': 'admin' } }, port, { OIDC_ISSUER: op.issuer, OIDC_CLIENT_ID: 'consoles', OIDC_CLIENT_SECRET: 'consoles-secret-of-thirty-two-characters' });
    try {
      const { token } = await signInForJwt(gw.url, 'erin-sub');
      expect((await usersOf(gw.url, token)).find((u) => u.username === 'erin')).toMatchObject({ isAdmin: true });
      expect(JSON.stringify(gw.lines)).not.toContain('consoles-secret-of-thirty-two-characters');
    } finally {
      await gw.stop();
      await op.close();
    }
  }, 60_000);
});

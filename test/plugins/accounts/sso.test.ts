/**
 * Sign-in to the program service through an OpenID Connect provider
 * (`programs.oidc`), its access tokens on /api/v1, and the approval that
 * asks for a fresh sign-in: a real provider (oidc-provider) on 127.0.0.1,
 * its forms walked without a browser, a real service over HTTP with every
 * /api/v1 answer checked against its OpenAPI document.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SignJWT, importJWK } from 'jose';
import { parseConfig } from '../../../core/roles/index.js';
import { vaultPlugin } from '../../../plugins/vault/index.js';
import { freePort } from '../../fixtures/free-port.js';
import { openProgramsDatabase, startTestProgramService, type TestProgramService } from '../../fixtures/programs.js';
import { login, TEST_ACCOUNTS, TEST_PROGRAMS_ADMIN_PASSWORD, userSession, type Session } from '../../fixtures/programs-accounts.js';
import { signIn, startTestIssuer, type TestAccount, type TestIssuer } from '../../fixtures/oidc-issuer.js';
import { consoleClient, consoleSignIn, cookieHeader, providerLogout, takeCookies } from '../../fixtures/oidc-consoles.js';

const CLIENT = { id: 'programs-console', secret: 'programs-console-secret-of-thirty-two-characters' };
const MES = { id: 'mes-system', secret: 'mes-system-secret-of-thirty-two-characters' };
const LIB_A = 'lib_00000000000000aa';
const PROGRAM = Buffer.from('%\nO3001 (SSO)\nN10 G90 G54 G00 X0 Y0\nN20 M30\n%\n', 'latin1').toString('base64');

/** A session from a sign-in through the provider: the cookie header and the CSRF token. */
async function ssoSession(svc: TestProgramService, accountId: string, providerJar?: NonNullable<Parameters<typeof consoleSignIn>[2]>['providerJar']) {
  const result = await consoleSignIn(svc.url, accountId, providerJar ? { providerJar } : {});
  expect(result.status, result.html.slice(0, 400)).toBe(200);
  const cookie = cookieHeader(result.cookies);
  const me = await svc.request('GET', '/api/v1/auth/me', { cookie });
  expect(me.status).toBe(200);
  return { cookie, headers: { 'x-csrf-token': me.body.csrfToken as string }, me: me.body, result };
}

async function auditRows(svc: TestProgramService, action: string) {
  const db = await openProgramsDatabase(svc.dataDir);
  try {
    return await db.all<{ principal_name: string; auth_method: string; details: string }>('SELECT principal_name, auth_method, details FROM audit_log WHERE action = ? ORDER BY seq', [action]);
  } finally {
    await db.close();
  }
}

describe('sign-in through the provider (program service)', () => {
  const accounts: TestAccount[] = [
    { id: 'pat-sub', name: 'Pat Approver', email: 'pat@plant.example', groups: ['qa-approvers', 'hall-a'], claims: { preferred_username: 'pat' } },
    { id: 'cam-sub', name: 'Cam Programmer', groups: ['cam'], claims: { preferred_username: 'cam' } },
    { id: 'vic-sub', groups: ['visitors'], claims: { preferred_username: 'vic' } },
  ];
  let op: TestIssuer;
  let svc: TestProgramService;
  let url: string;
  let admin: Session;

  beforeAll(async () => {
    const port = await freePort();
    url = `http://127.0.0.1:${port}`;
    op = await startTestIssuer({
      accounts, clients: [consoleClient(CLIENT.id, url), { client_id: MES.id, client_secret: MES.secret, grant_types: ['client_credentials'], response_types: [], redirect_uris: [] }],
      resources: [{ url, scopes: ['programs'] }], clientClaims: { [MES.id]: { groups: ['mes-systems'] } },
    });
    const config = parseConfig({
      roles: ['programs'],
      programs: {
        oidc: {
          issuer: op.issuer, clientId: CLIENT.id, clientSecret: CLIENT.secret, displayName: 'Plant SSO', publicUrl: url, maxAuthAgeForApprovalSec: 5,
          roles: { 'qa-approvers': 'approver', cam: 'programmer', 'mes-systems': 'integration' },
          libraries: { 'hall-a': [LIB_A], cam: '*', 'mes-systems': '*', 'all-libraries': '*' },
        },
      },
    });
    svc = await startTestProgramService({ plugins: [TEST_ACCOUNTS, vaultPlugin], env: { PROGRAMS_ADMIN_PASSWORD: TEST_PROGRAMS_ADMIN_PASSWORD }, config, port });
    admin = await login(svc, 'admin', TEST_PROGRAMS_ADMIN_PASSWORD);
  }, 60_000);
  afterAll(async () => {
    await svc?.stop();
    await op?.close();
  });

  it('a mapped group makes a user with the mapped role and library scopes at the first sign-in, audited in the hash-chained audit', async () => {
    const { me } = await ssoSession(svc, 'pat-sub');
    expect(me).toMatchObject({ kind: 'user', name: 'pat', role: 'approver', scopes: { libraries: [LIB_A], machineGroups: '*' }, authMethod: 'session' });
    expect(me.identityProvider.authTime).toMatch(/^\d{4}-/);
    expect((await auditRows(svc, 'user.create')).some((r) => r.principal_name === 'pat' && JSON.parse(r.details).via === 'identity provider')).toBe(true);
    expect((await auditRows(svc, 'login')).some((r) => r.principal_name === 'pat' && r.auth_method === 'oidc')).toBe(true);
    // No password signs the user in with the local form.
    expect((await svc.request('POST', '/api/v1/auth/login', { body: { username: 'pat', password: '!oidc' } })).status).toBe(401);
  });

  it('a change of the claims changes the role and scopes at the next sign-in, and the change is audited with what it was', async () => {
    const cam = accounts[1] as TestAccount;
    expect((await ssoSession(svc, 'cam-sub')).me).toMatchObject({ role: 'programmer', scopes: { libraries: '*' } });
    cam.groups = ['qa-approvers'];
    try {
      expect((await ssoSession(svc, 'cam-sub')).me).toMatchObject({ role: 'approver', scopes: { libraries: [] } });
    } finally {
      cam.groups = ['cam'];
    }
    const change = (await auditRows(svc, 'user.update')).map((r) => JSON.parse(r.details)).find((d) => d.from?.role === 'programmer');
    expect(change).toMatchObject({ via: 'identity provider', from: { role: 'programmer' }, to: { role: 'approver', scopes: { libraries: [] } } });
  });

  it('a user whose claims map to no role gets a page naming the values seen and the setting to map, audited, and no account', async () => {
    const result = await consoleSignIn(svc.url, 'vic-sub');
    expect(result.status).toBe(403);
    expect(result.html).toContain('<code>visitors</code>');
    expect(result.html).toContain('programs.oidc.roles');
    expect(result.cookies.size).toBe(0);
    const users = await svc.request('GET', '/api/v1/admin/users', { cookie: admin.cookie });
    expect(users.body.items.some((u: { username: string }) => u.username === 'vic')).toBe(false);
    expect((await auditRows(svc, 'login.refused')).some((r) => r.principal_name === 'vic' && JSON.parse(r.details).reason === 'no role mapped')).toBe(true);
  });

  it('a user an administrator disabled is not signed in through the provider, and is not enabled by it', async () => {
    const { me } = await ssoSession(svc, 'cam-sub');
    const disable = (disabled: boolean) => svc.request('PATCH', `/api/v1/admin/users/${me.id}`, { cookie: admin.cookie, headers: admin.headers, body: { disabled } });
    expect((await disable(true)).status).toBe(200);
    try {
      const refused = await consoleSignIn(svc.url, 'cam-sub');
      expect(refused.status).toBe(403);
      expect(refused.html).toContain('Account disabled');
      expect(refused.cookies.size).toBe(0);
    } finally {
      expect((await disable(false)).status).toBe(200);
    }
  });

  it('logout ends the session, and the console goes on to the provider\'s end_session_endpoint', async () => {
    const s = await ssoSession(svc, 'pat-sub');
    expect((await svc.request('POST', '/api/v1/auth/logout', { cookie: s.cookie, headers: s.headers })).status).toBe(204);
    expect((await svc.request('GET', '/api/v1/auth/me', { cookie: s.cookie })).status).toBe(401);
    const onward = await fetch(`${url}/auth/oidc/logout?returnTo=%2Fterminal`, { redirect: 'manual' });
    const location = new URL(onward.headers.get('location') as string);
    expect(`${location.origin}${location.pathname}`).toBe(`${op.issuer}/session/end`);
    expect(location.searchParams.get('post_logout_redirect_uri')).toBe(`${url}/terminal`);
  });

  it('a sign-out at the provider ends the session at once through back-channel logout, audited', async () => {
    const s = await ssoSession(svc, 'pat-sub');
    const onward = await fetch(`${url}/auth/oidc/logout`, { redirect: 'manual' });
    await providerLogout(onward.headers.get('location') as string, s.result.providerJar);
    expect(op.backchannelDeliveries).toContainEqual({ uri: `${url}/auth/oidc/backchannel-logout`, status: 200 });
    expect((await svc.request('GET', '/api/v1/auth/me', { cookie: s.cookie })).status).toBe(401);
    expect((await auditRows(svc, 'logout')).some((r) => r.principal_name === 'pat' && /back-channel/.test(JSON.parse(r.details)?.via ?? ''))).toBe(true);
  });

  it('approving asks a person signed in through the provider longer ago than maxAuthAgeForApprovalSec to sign in again (max_age), then goes through; a local approver approves as before', async () => {
    const cam = await ssoSession(svc, 'cam-sub');
    const lib = await svc.request('POST', '/api/v1/libraries', { cookie: admin.cookie, headers: admin.headers, body: { name: 'SSO approvals', approvalPolicy: { mode: 'approvals', required: 1 }, approvers: [] } });
    const version = async () => {
      const prg = await svc.request('POST', '/api/v1/programs', { cookie: admin.cookie, headers: admin.headers, body: { libraryId: lib.body.id, name: `O${Math.floor(Math.random() * 9000) + 1000}`, controller: 'fanuc' } });
      const v = await svc.request('POST', `/api/v1/programs/${prg.body.id}/versions`, { cookie: cam.cookie, headers: cam.headers, body: { contentBase64: PROGRAM, notes: '' } });
      expect(v.status).toBe(201);
      const submitted = await svc.request('POST', `/api/v1/versions/${v.body.id}/submit`, { cookie: cam.cookie, headers: cam.headers });
      expect(submitted.status).toBe(200);
      return submitted.body.approval.id as string;
    };
    // pat sees every library only through an administrator's view: give pat a session whose scope holds the new library.
    const patAccount = accounts[0] as TestAccount;
    patAccount.groups = ['qa-approvers', 'all-libraries'];
    const before = await version();
    try {
      const pat = await ssoSession(svc, 'pat-sub');
      await new Promise((resolve) => setTimeout(resolve, 6_000));
      const refused = await svc.request('POST', `/api/v1/approvals/${before}/decide`, { cookie: pat.cookie, headers: pat.headers, body: { decision: 'approve', comment: '' } });
      expect(refused.status).toBe(401);
      expect(refused.body).toMatchObject({ type: expect.stringMatching(/reauthentication-required$/), maxAgeSec: 5 });
      expect(refused.body.signInUrl).toBe('/auth/oidc/login?purpose=reauthenticate&returnTo=%2F%23%2Fapprovals');
      // The browser follows signInUrl with its session: the provider asks for the login again (max_age), and the session takes the new auth_time.
      const again = await consoleSignIn(url, 'pat-sub', { query: refused.body.signInUrl.split('?')[1], cookies: new Map(pat.result.cookies), providerJar: pat.result.providerJar });
      expect(again.status, again.html.slice(0, 300)).toBe(200);
      expect(again.next).toBe('/#/approvals');
      const approved = await svc.request('POST', `/api/v1/approvals/${before}/decide`, { cookie: pat.cookie, headers: pat.headers, body: { decision: 'approve', comment: 'signed' } });
      expect(approved.status).toBe(200);
      expect(approved.body.approval.state).toBe('approved');
      expect((await auditRows(svc, 'reauthenticate')).some((r) => r.principal_name === 'pat')).toBe(true);
      // Another person's sign-in cannot refresh this session.
      const other = await consoleSignIn(url, 'cam-sub', { query: refused.body.signInUrl.split('?')[1], cookies: new Map(pat.result.cookies) });
      expect(other.status).toBe(403);
    } finally {
      patAccount.groups = ['qa-approvers', 'hall-a'];
    }
    const local = await userSession(svc, admin, 'pe.lena', 'approver');
    const localApproval = await version();
    await new Promise((resolve) => setTimeout(resolve, 6_000));
    expect((await svc.request('POST', `/api/v1/approvals/${localApproval}/decide`, { cookie: local.cookie, headers: local.headers, body: { decision: 'approve', comment: '' } })).status).toBe(200);
  }, 60_000);

  it('/api/v1 accepts the provider\'s access tokens for this service, mapped like people\'s claims, and the OpenAPI document declares the scheme', async () => {
    const token = await op.clientCredentialsToken(MES, url, 'programs');
    const me = await svc.request('GET', '/api/v1/auth/me', { token });
    expect(me.status).toBe(200);
    expect(me.body).toMatchObject({ kind: 'serviceToken', name: MES.id, role: 'integration', scopes: { libraries: '*' }, authMethod: 'accessToken' });
    const doc = await svc.document();
    const schemes = (doc.components as { securitySchemes: Record<string, { type: string; openIdConnectUrl?: string }> }).securitySchemes;
    expect(schemes.providerAccessToken).toMatchObject({ type: 'openIdConnect', openIdConnectUrl: `${op.issuer}/.well-known/openid-configuration` });
    const meOp = (doc.paths as Record<string, Record<string, { security: Record<string, unknown>[] }>>)['/api/v1/auth/me']?.get;
    expect(meOp?.security).toContainEqual({ providerAccessToken: [] });
  });

  it('an access token whose claims map to no role is refused (403) naming the values seen', async () => {
    const token = await op.mint({ aud: url, sub: 'robot', groups: ['robots'] });
    const res = await svc.request('GET', '/api/v1/auth/me', { token });
    expect(res.status).toBe(403);
    expect(res.body.detail).toContain('robots');
  });

  it('bad access tokens are refused with 401 and their reason: alg none, HS256 signed with the public key, another audience, expired, another issuer, a kid not in the JWKS, oversized', async () => {
    const claims = { aud: url, sub: 'mes', groups: ['mes-systems'] };
    const other = await startTestIssuer({ accounts: [] });
    try {
      const encode = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');
      const now = Math.floor(Date.now() / 1000);
      const hsKey = await importJWK({ kty: 'oct', k: Buffer.from(JSON.stringify(op.key.publicJwk)).toString('base64url') }, 'HS256');
      const cases: [string, string][] = [
        ['alg none', `${encode({ alg: 'none', typ: 'at+jwt' })}.${encode({ ...claims, iss: op.issuer, iat: now, exp: now + 600 })}.`],
        ['HS256 with the public key', await new SignJWT({ ...claims }).setProtectedHeader({ alg: 'HS256', kid: op.key.kid }).setIssuer(op.issuer).setIssuedAt().setExpirationTime('10m').sign(hsKey)],
        ['another audience', await op.mint({ ...claims, aud: 'https://other.plant.example' })],
        ['expired', await op.mint(claims, { issuedAtSec: now - 1200, expiresInSec: 600 })],
        ['another issuer', await other.mint({ ...claims })],
        ['a kid not in the JWKS', await op.mint(claims, { key: other.key })],
      ];
      // Longer than 16 KiB: refused before any reading, by the listener's bound on a request's headers.
      const oversized = await op.mint({ ...claims, padding: 'x'.repeat(20_000) });
      expect((await fetch(`${url}/api/v1/auth/me`, { headers: { authorization: `Bearer ${oversized}` } })).status).toBe(431);
      for (const [what, token] of cases) {
        const res = await svc.request('GET', '/api/v1/auth/me', { token });
        expect(res.status, what).toBe(401);
        expect(res.body.detail, what).toMatch(/the access token is not accepted/);
      }
      // Still accepted: the same claims, signed properly.
      expect((await svc.request('GET', '/api/v1/auth/me', { token: await op.mint(claims) })).status).toBe(200);
    } finally {
      await other.close();
    }
  });
});

describe('programs.oidc settings', () => {
  const start = (oidc: Record<string, unknown>, env: NodeJS.ProcessEnv = {}) => startTestProgramService({
    plugins: [TEST_ACCOUNTS], env: { PROGRAMS_ADMIN_PASSWORD: TEST_PROGRAMS_ADMIN_PASSWORD, ...env }, config: parseConfig({ roles: ['programs'], programs: { oidc } }),
  });

  it('a settings mistake stops the start naming its path', async () => {
    await expect(start({ clientId: 'x' })).rejects.toThrow(/programs\.oidc\.issuer.*OIDC_ISSUER/);
    expect(() => parseConfig({ roles: ['programs'], programs: { oidc: { issuer: 'https://idp.plant.example', clientId: 'x', roles: { g: 'superuser' } } } })).toThrow(/programs\.oidc\.roles/);
    expect(() => parseConfig({ roles: ['programs'], programs: { oidc: { issuer: 'https://idp.plant.example', clientId: 'x', libraries: { g: ['Shafts'] } } } })).toThrow(/programs\.oidc\.libraries/);
    expect(() => parseConfig({ roles: ['programs'], programs: { oidc: { issuer: 'https://idp.plant.example', clientId: 'x', maxAuthAgeForApprovalSec: 0 } } })).toThrow(/programs\.oidc\.maxAuthAgeForApprovalSec/);
  });

  it('without publicUrl no access token is accepted, and the document declares no such scheme', async () => {
    const svc = await start({ roles: {} }, { OIDC_ISSUER: 'https://idp.plant.example', OIDC_CLIENT_ID: 'consoles' });
    try {
      const doc = await svc.document();
      expect(Object.keys((doc.components as { securitySchemes: object }).securitySchemes)).not.toContain('providerAccessToken');
      const jwt = `${Buffer.from('{"alg":"RS256"}').toString('base64url')}.${Buffer.from('{"sub":"x"}').toString('base64url')}.c2ln`;
      expect((await svc.request('GET', '/api/v1/auth/me', { token: jwt })).status).toBe(401);
    } finally {
      await svc.stop();
    }
  });
});

describe('sign-in through the provider across both consoles', () => {
  it('a sign-out at the provider ends the sessions of the same sign-in in the other console too (back-channel logout)', async () => {
    const [pPort, gPort] = [await freePort(), await freePort()];
    const pUrl = `http://127.0.0.1:${pPort}`;
    const op = await startTestIssuer({ accounts: [{ id: 'ann-sub', groups: ['qa-approvers'], claims: { preferred_username: 'ann' } }], clients: [consoleClient('programs', pUrl)] });
    const config = parseConfig({ roles: ['programs'], programs: { oidc: { issuer: op.issuer, clientId: 'programs', clientSecret: 'programs-secret-of-thirty-two-characters', roles: { 'qa-approvers': 'approver' } } } });
    const svc = await startTestProgramService({ plugins: [TEST_ACCOUNTS], env: { PROGRAMS_ADMIN_PASSWORD: TEST_PROGRAMS_ADMIN_PASSWORD }, config, port: pPort });
    // The second console: a second program service standing in for another console of the same provider session.
    const gUrl = `http://127.0.0.1:${gPort}`;
    op.registerClient(consoleClient('second', gUrl));
    const config2 = parseConfig({ roles: ['programs'], programs: { oidc: { issuer: op.issuer, clientId: 'second', clientSecret: 'second-secret-of-thirty-two-characters', roles: { 'qa-approvers': 'approver' } } } });
    const svc2 = await startTestProgramService({ plugins: [TEST_ACCOUNTS], env: { PROGRAMS_ADMIN_PASSWORD: TEST_PROGRAMS_ADMIN_PASSWORD }, config: config2, port: gPort });
    try {
      // Two consoles on one host: a browser keeps one cookie jar for the host whatever the port, so a sign-in started in each keeps its own state.
      const jar = new Map<string, string>();
      const startAt = async (at: string) => {
        const started = await fetch(`${at}/auth/oidc/login`, { redirect: 'manual', headers: { cookie: cookieHeader(jar) } });
        takeCookies(jar, started);
        return started.headers.get('location') as string;
      };
      const toProvider = await startAt(pUrl);
      await startAt(gUrl);
      const walked = await signIn(toProvider, 'ann-sub');
      expect((await fetch(walked.redirect, { redirect: 'manual', headers: { cookie: cookieHeader(jar) } })).status).toBe(200);
      const first = await ssoSession(svc, 'ann-sub');
      const second = await ssoSession(svc2, 'ann-sub', first.result.providerJar);
      const onward = await fetch(`${pUrl}/auth/oidc/logout`, { redirect: 'manual' });
      await providerLogout(onward.headers.get('location') as string, first.result.providerJar);
      expect((await svc.request('GET', '/api/v1/auth/me', { cookie: first.cookie })).status).toBe(401);
      expect((await svc2.request('GET', '/api/v1/auth/me', { cookie: second.cookie })).status).toBe(401);
    } finally {
      await svc.stop();
      await svc2.stop();
      await op.close();
    }
  }, 60_000);
});

/**
 * Accounts of the program service over real HTTP: sessions, CSRF, service
 * tokens, roles and the audit of each. Every response is checked against
 * the OpenAPI document by the test client.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccountsPlugin } from '../../../plugins/accounts/index.js';
import { readCookie, SESSION_ABSOLUTE_MS, SESSION_IDLE_MS, setCookieHeader } from '../../../core/auth/sessions.js';
import { openProgramsDatabase, startTestProgramService, type TestProgramService } from '../../fixtures/programs.js';
import { login, TEST_ACCOUNTS, TEST_PROGRAMS_ADMIN_PASSWORD, type Session } from '../../fixtures/programs-accounts.js';

const ADMIN_PASSWORD = TEST_PROGRAMS_ADMIN_PASSWORD;

async function auditActions(svc: TestProgramService): Promise<{ action: string; principal_name: string; on_behalf_of: string | null; auth_method: string; details: string | null }[]> {
  const db = await openProgramsDatabase(svc.dataDir);
  try {
    return await db.all('SELECT action, principal_name, on_behalf_of, auth_method, details FROM audit_log ORDER BY seq');
  } finally {
    await db.close();
  }
}

describe('accounts', () => {
  let svc: TestProgramService;
  const clock = { now: Date.UTC(2026, 10, 24, 8, 0, 0) };
  let admin: Session;

  beforeAll(async () => {
    svc = await startTestProgramService({ plugins: [TEST_ACCOUNTS], env: { PROGRAMS_ADMIN_PASSWORD: ADMIN_PASSWORD }, now: () => clock.now });
    admin = await login(svc, 'admin', ADMIN_PASSWORD);
  });
  afterAll(() => svc.stop());

  const createUser = async (username: string, role: string, password = `${username}-password-1`) => {
    const res = await svc.request('POST', '/api/v1/admin/users', { cookie: admin.cookie, headers: admin.headers, body: { username, password, role } });
    expect(res.status).toBe(201);
    return { id: res.body.id as string, password };
  };

  it('PV-10 PV-50 login takes username and password and sets an HttpOnly, SameSite session cookie', async () => {
    const res = await svc.request('POST', '/api/v1/auth/login', { body: { username: 'admin', password: ADMIN_PASSWORD } });
    expect(res.status).toBe(200);
    const cookie = res.headers.get('set-cookie') ?? '';
    expect(cookie).toMatch(/^pvs_session=ses_[0-9a-f]{16}\.[A-Za-z0-9_-]{43}; /);
    expect(cookie).toContain('HttpOnly');
    expect(cookie).toContain('SameSite=Strict');
    expect(cookie).toContain('Path=/');
    expect(cookie).not.toContain('Secure');
    expect(res.body.user).toMatchObject({ username: 'admin', role: 'admin' });
    expect(typeof res.body.csrfToken).toBe('string');
    const wrong = await svc.request('POST', '/api/v1/auth/login', { body: { username: 'admin', password: 'not-the-password' } });
    expect(wrong.status).toBe(401);
    const unknown = await svc.request('POST', '/api/v1/auth/login', { body: { username: 'nobody', password: 'not-the-password' } });
    expect(unknown.status).toBe(401);
    expect(unknown.body.detail).toBe(wrong.body.detail);
    expect(wrong.text).not.toContain('not-the-password');
  });

  it('PV-30 GET /auth/me says who the caller is and how; logout ends the session', async () => {
    const s = await login(svc, 'admin', ADMIN_PASSWORD);
    const me = await svc.request('GET', '/api/v1/auth/me', { cookie: s.cookie });
    expect(me.body).toMatchObject({ kind: 'user', name: 'admin', role: 'admin', authMethod: 'session', onBehalfOf: null, csrfToken: s.csrf, scopes: { libraries: '*' } });
    expect(me.body.permissions).toContain('users.manage');
    const out = await svc.request('POST', '/api/v1/auth/logout', { cookie: s.cookie, headers: s.headers });
    expect(out.status).toBe(204);
    expect(out.headers.get('set-cookie')).toMatch(/^pvs_session=; Max-Age=0/);
    const after = await svc.request('GET', '/api/v1/auth/me', { cookie: s.cookie });
    expect(after.status).toBe(401);
    const anonymous = await svc.request('GET', '/api/v1/auth/me');
    expect(anonymous.status).toBe(401);
  });

  it('PV-30 change-password ends the user\'s other sessions and keeps this one', async () => {
    const { password } = await createUser('carol', 'programmer');
    const first = await login(svc, 'carol', password);
    const second = await login(svc, 'carol', password);
    const wrong = await svc.request('POST', '/api/v1/auth/change-password', { cookie: first.cookie, headers: first.headers, body: { currentPassword: 'nope-nope-nope', newPassword: 'carol-new-password-2' } });
    expect(wrong.status).toBe(422);
    expect(wrong.body.errors[0].field).toBe('body.currentPassword');
    const short = await svc.request('POST', '/api/v1/auth/change-password', { cookie: first.cookie, headers: first.headers, body: { currentPassword: password, newPassword: 'short' } });
    expect(short.status).toBe(400);
    expect(short.body.errors[0].field).toBe('body.newPassword');
    const changed = await svc.request('POST', '/api/v1/auth/change-password', { cookie: first.cookie, headers: first.headers, body: { currentPassword: password, newPassword: 'carol-new-password-2' } });
    expect(changed.status).toBe(204);
    expect((await svc.request('GET', '/api/v1/auth/me', { cookie: first.cookie })).status).toBe(200);
    expect((await svc.request('GET', '/api/v1/auth/me', { cookie: second.cookie })).status).toBe(401);
    expect((await svc.request('POST', '/api/v1/auth/login', { body: { username: 'carol', password } })).status).toBe(401);
    await login(svc, 'carol', 'carol-new-password-2');
  });

  it('PV-50 CSRF: a cookie-authenticated unsafe request needs X-CSRF-Token and, when Origin is sent, this origin', async () => {
    const body = { username: 'dave', password: 'dave-password-1', role: 'operator' };
    const noToken = await svc.request('POST', '/api/v1/admin/users', { cookie: admin.cookie, body });
    expect(noToken.status).toBe(403);
    expect(noToken.body.type).toMatch(/\/csrf-check-failed$/);
    expect(noToken.body.errors[0].field).toBe('header.x-csrf-token');
    const otherOrigin = await svc.request('POST', '/api/v1/admin/users', { cookie: admin.cookie, headers: { ...admin.headers, origin: 'https://evil.example' }, body });
    expect(otherOrigin.status).toBe(403);
    expect(otherOrigin.body.errors[0].field).toBe('header.origin');
    const wrongToken = await svc.request('POST', '/api/v1/admin/users', { cookie: admin.cookie, headers: { 'x-csrf-token': 'x'.repeat(43) }, body });
    expect(wrongToken.status).toBe(403);
    const sameOrigin = await svc.request('POST', '/api/v1/admin/users', { cookie: admin.cookie, headers: { ...admin.headers, origin: svc.url }, body });
    expect(sameOrigin.status).toBe(201);
    // Safe methods need no token.
    expect((await svc.request('GET', '/api/v1/admin/users', { cookie: admin.cookie })).status).toBe(200);
  });

  it('PV-50 CSRF: Origin: null (an opaque origin: a sandboxed frame, a data: page) is refused for every unsafe method sent with the cookie', async () => {
    const headers = { ...admin.headers, origin: 'null' };
    const refused = [
      await svc.request('POST', '/api/v1/admin/users', { cookie: admin.cookie, headers, body: { username: 'nullorigin', password: 'nullorigin-password-1', role: 'operator' } }),
      await svc.request('POST', '/api/v1/auth/logout', { cookie: admin.cookie, headers }),
    ];
    for (const res of refused) {
      expect(res.status).toBe(403);
      expect(res.body.type).toMatch(/\/csrf-check-failed$/);
      expect(res.body.errors[0]).toMatchObject({ field: 'header.origin', message: expect.stringContaining('opaque origin') });
    }
    expect((await svc.request('GET', '/api/v1/admin/users', { cookie: admin.cookie, headers })).status).toBe(200);
    expect((await svc.request('GET', '/api/v1/auth/me', { cookie: admin.cookie })).status).toBe(200);
  });

  it('PV-16 PV-51 a service token has the form <prefix>_<id>_<secret>, is shown once, stored hashed and sent as Bearer', async () => {
    const created = await svc.request('POST', '/api/v1/admin/service-tokens', { cookie: admin.cookie, headers: admin.headers, body: { name: 'MES line 2', role: 'integration' } });
    expect(created.status).toBe(201);
    const token = created.body.token as string;
    expect(token).toMatch(/^pvs_[0-9a-f]{12}_[A-Za-z0-9_-]{43}$/);
    expect(created.body.id).toBe(`tok_${token.split('_')[1]}`);
    const me = await svc.request('GET', '/api/v1/auth/me', { token });
    expect(me.body).toMatchObject({ kind: 'serviceToken', name: 'MES line 2', role: 'integration', authMethod: 'serviceToken' });
    expect(me.body.csrfToken).toBeUndefined();
    const list = await svc.request('GET', '/api/v1/admin/service-tokens', { cookie: admin.cookie });
    const listed = list.body.items.find((t: { id: string }) => t.id === created.body.id);
    expect(listed.lastUsedAt).not.toBeNull();
    // The secret is everything after `<prefix>_<id>_`; base64url may itself contain '_'.
    expect(list.text).not.toContain(token.split('_').slice(2).join('_'));
    const db = await openProgramsDatabase(svc.dataDir);
    try {
      const rows = await db.all<{ secret_hash: string }>('SELECT secret_hash FROM accounts_tokens');
      const dump = JSON.stringify(await db.all('SELECT * FROM accounts_tokens'));
      expect(rows.length).toBeGreaterThan(0);
      expect(dump).not.toContain(token.split('_').slice(2).join('_'));
    } finally {
      await db.close();
    }
    // Bearer requests need no CSRF token; a tampered secret is 401.
    expect((await svc.request('GET', '/api/v1/auth/me', { token: `${token.slice(0, -1)}${token.endsWith('A') ? 'B' : 'A'}` })).status).toBe(401);
    expect((await svc.request('GET', '/api/v1/auth/me', { headers: { authorization: 'Basic abc' } })).status).toBe(401);
  });

  it('a service token\'s name is trimmed like every name; a name of only blanks is refused naming name', async () => {
    const padded = await svc.request('POST', '/api/v1/admin/service-tokens', { cookie: admin.cookie, headers: admin.headers, body: { name: '  cell 4 probe  ', role: 'auditor' } });
    expect(padded.status).toBe(201);
    expect(padded.body.name).toBe('cell 4 probe');
    const me = await svc.request('GET', '/api/v1/auth/me', { token: padded.body.token as string });
    expect(me.body.name).toBe('cell 4 probe');
    const blank = await svc.request('POST', '/api/v1/admin/service-tokens', { cookie: admin.cookie, headers: admin.headers, body: { name: '   ', role: 'auditor' } });
    expect(blank.status).toBe(400);
    expect(blank.body.errors[0].field).toBe('body.name');
  });

  it('PV-51 a revoked or expired token is refused with 401', async () => {
    const expiring = await svc.request('POST', '/api/v1/admin/service-tokens', {
      cookie: admin.cookie, headers: admin.headers, body: { name: 'short-lived', role: 'auditor', expiresAt: new Date(clock.now + 60_000).toISOString() },
    });
    expect((await svc.request('GET', '/api/v1/auth/me', { token: expiring.body.token })).status).toBe(200);
    clock.now += 61_000;
    expect((await svc.request('GET', '/api/v1/auth/me', { token: expiring.body.token })).status).toBe(401);
    const revoked = await svc.request('POST', '/api/v1/admin/service-tokens', { cookie: admin.cookie, headers: admin.headers, body: { name: 'to revoke', role: 'auditor' } });
    const del = await svc.request('DELETE', `/api/v1/admin/service-tokens/${revoked.body.id}`, { cookie: admin.cookie, headers: admin.headers });
    expect(del.status).toBe(204);
    expect((await svc.request('GET', '/api/v1/auth/me', { token: revoked.body.token })).status).toBe(401);
    const past = await svc.request('POST', '/api/v1/admin/service-tokens', { cookie: admin.cookie, headers: admin.headers, body: { name: 'past', role: 'auditor', expiresAt: '2001-01-01T00:00:00Z' } });
    expect(past.status).toBe(422);
  });

  it('PV-52 PV-53 a token requiring an operator is refused a high-risk operation without X-On-Behalf-Of, and the operator is audited', async () => {
    const strict = await svc.request('POST', '/api/v1/admin/service-tokens', { cookie: admin.cookie, headers: admin.headers, body: { name: 'strict admin bot', role: 'admin', requiresOperator: true } });
    const victim = await svc.request('POST', '/api/v1/admin/service-tokens', { cookie: admin.cookie, headers: admin.headers, body: { name: 'victim', role: 'auditor' } });
    const refused = await svc.request('DELETE', `/api/v1/admin/service-tokens/${victim.body.id}`, { token: strict.body.token });
    expect(refused.status).toBe(403);
    expect(refused.body.type).toMatch(/\/operator-required$/);
    expect((await svc.request('GET', '/api/v1/auth/me', { token: victim.body.token })).status).toBe(200);
    // Not high-risk: allowed without an operator.
    expect((await svc.request('GET', '/api/v1/admin/users', { token: strict.body.token })).status).toBe(200);
    const bad = await svc.request('DELETE', `/api/v1/admin/service-tokens/${victim.body.id}`, { token: strict.body.token, headers: { 'x-on-behalf-of': '!!bad' } });
    expect(bad.status).toBe(400);
    const allowed = await svc.request('DELETE', `/api/v1/admin/service-tokens/${victim.body.id}`, { token: strict.body.token, headers: { 'x-on-behalf-of': 'Jane Operator' } });
    expect(allowed.status).toBe(204);
    const audit = await auditActions(svc);
    const revoke = audit.filter((r) => r.action === 'token.revoke').at(-1);
    expect(revoke).toMatchObject({ principal_name: 'strict admin bot', on_behalf_of: 'Jane Operator', auth_method: 'serviceToken' });
  });

  it('PV-53 PV-54 refusals are audited (an invalid session, a role refusal, a missing operator), at most once a minute per source or caller and operation', async () => {
    const before = (await auditActions(svc)).length;
    for (let i = 0; i < 3; i++) expect((await svc.request('GET', '/api/v1/auth/me', { cookie: `pvs_session=ses_0123456789abcdef.${'A'.repeat(43)}` })).status).toBe(401);
    const reader = await svc.request('POST', '/api/v1/admin/service-tokens', { cookie: admin.cookie, headers: admin.headers, body: { name: 'refused reader', role: 'operator', requiresOperator: true } });
    for (let i = 0; i < 3; i++) expect((await svc.request('GET', '/api/v1/admin/users', { token: reader.body.token })).status).toBe(403);
    const strict = await svc.request('POST', '/api/v1/admin/service-tokens', { cookie: admin.cookie, headers: admin.headers, body: { name: 'strict bot 2', role: 'admin', requiresOperator: true } });
    for (let i = 0; i < 2; i++) expect((await svc.request('DELETE', `/api/v1/admin/service-tokens/${reader.body.id}`, { token: strict.body.token })).status).toBe(403);
    const added = (await auditActions(svc)).slice(before);
    expect(added.filter((r) => r.action === 'session.invalid')).toHaveLength(1);
    expect(added.filter((r) => r.action === 'access.refused')).toEqual([expect.objectContaining({ principal_name: 'refused reader', auth_method: 'serviceToken' })]);
    expect(added.filter((r) => r.action === 'operator.missing')).toEqual([expect.objectContaining({ principal_name: 'strict bot 2' })]);
    expect(JSON.parse(added.find((r) => r.action === 'operator.missing')?.details ?? '{}')).toMatchObject({ operation: 'DELETE /admin/service-tokens/{id}' });
    clock.now += 61_000;
    expect((await svc.request('GET', '/api/v1/admin/users', { token: reader.body.token })).status).toBe(403);
    expect((await auditActions(svc)).slice(before).filter((r) => r.action === 'access.refused')).toHaveLength(2);
  });

  it('PV-52 a malformed X-On-Behalf-Of is a 400 naming the header', async () => {
    const res = await svc.request('GET', '/api/v1/admin/users', { cookie: admin.cookie, headers: { 'x-on-behalf-of': 'x'.repeat(300) } });
    expect(res.status).toBe(400);
    expect(res.body.errors[0].field).toBe('header.x-on-behalf-of');
    expect(res.text.length).toBeLessThan(1500);
  });

  it('PV-54 a role beyond its permissions gets 403', async () => {
    const { password } = await createUser('erin', 'programmer');
    const erin = await login(svc, 'erin', password);
    const res = await svc.request('GET', '/api/v1/admin/users', { cookie: erin.cookie });
    expect(res.status).toBe(403);
    expect(res.body).toMatchObject({ requiredPermission: 'users.manage', role: 'programmer' });
    const token = await svc.request('POST', '/api/v1/admin/service-tokens', { cookie: admin.cookie, headers: admin.headers, body: { name: 'reader', role: 'operator' } });
    expect((await svc.request('POST', '/api/v1/admin/service-tokens', { token: token.body.token, body: { name: 'x', role: 'admin' } })).status).toBe(403);
  });

  it('PV-50 sessions end after the idle and the absolute lifetime; disabling a user ends theirs', async () => {
    const { id, password } = await createUser('frank', 'approver');
    const idle = await login(svc, 'frank', password);
    clock.now += SESSION_IDLE_MS + 1000;
    expect((await svc.request('GET', '/api/v1/auth/me', { cookie: idle.cookie })).status).toBe(401);
    admin = await login(svc, 'admin', ADMIN_PASSWORD);
    const active = await login(svc, 'frank', password);
    const step = SESSION_IDLE_MS / 2;
    for (let t = 0; t < SESSION_ABSOLUTE_MS - step; t += step) {
      clock.now += step;
      expect((await svc.request('GET', '/api/v1/auth/me', { cookie: active.cookie })).status).toBe(200);
    }
    clock.now += step;
    expect((await svc.request('GET', '/api/v1/auth/me', { cookie: active.cookie })).status).toBe(401);
    admin = await login(svc, 'admin', ADMIN_PASSWORD);
    const again = await login(svc, 'frank', password);
    const disabled = await svc.request('PATCH', `/api/v1/admin/users/${id}`, { cookie: admin.cookie, headers: admin.headers, body: { disabled: true } });
    expect(disabled.body.disabled).toBe(true);
    expect((await svc.request('GET', '/api/v1/auth/me', { cookie: again.cookie })).status).toBe(401);
    expect((await svc.request('POST', '/api/v1/auth/login', { body: { username: 'frank', password } })).status).toBe(401);
  });

  it('PV-10 throttles repeated failed logins with 429 and Retry-After; each failure is audited without the password', async () => {
    for (let i = 0; i < 5; i++) expect((await svc.request('POST', '/api/v1/auth/login', { body: { username: 'ghost', password: `guess-${i}-secret` } })).status).toBe(401);
    const locked = await svc.request('POST', '/api/v1/auth/login', { body: { username: 'ghost', password: 'guess-x-secret' } });
    expect(locked.status).toBe(429);
    expect(Number(locked.headers.get('retry-after'))).toBeGreaterThan(0);
    const audit = await auditActions(svc);
    const failures = audit.filter((r) => r.action === 'login.failed' && r.principal_name === 'ghost');
    expect(failures).toHaveLength(5);
    expect(JSON.stringify(audit)).not.toMatch(/guess-\d-secret|admin-password-123/);
  });

  it('PV-10 PV-30 wrong current passwords on change-password count as failed sign-ins: 429 with Retry-After, even for the right one, and each is audited', async () => {
    const { password } = await createUser('gwen', 'programmer');
    const s = await login(svc, 'gwen', password);
    for (let i = 0; i < 5; i++) {
      const wrong = await svc.request('POST', '/api/v1/auth/change-password', { cookie: s.cookie, headers: s.headers, body: { currentPassword: `guess-${i}-secret`, newPassword: 'gwen-new-password-2' } });
      expect(wrong.status).toBe(422);
    }
    const locked = await svc.request('POST', '/api/v1/auth/change-password', { cookie: s.cookie, headers: s.headers, body: { currentPassword: password, newPassword: 'gwen-new-password-2' } });
    expect(locked.status).toBe(429);
    expect(Number(locked.headers.get('retry-after'))).toBeGreaterThan(0);
    // The same count refuses a sign-in of that user from that address.
    expect((await svc.request('POST', '/api/v1/auth/login', { body: { username: 'gwen', password } })).status).toBe(429);
    const audit = await auditActions(svc);
    expect(audit.filter((r) => r.action === 'password.change.failed' && r.principal_name === 'gwen')).toHaveLength(5);
    expect(audit.some((r) => r.action === 'password.change' && r.principal_name === 'gwen')).toBe(false);
    expect(JSON.stringify(audit)).not.toMatch(/guess-\d-secret/);
    // Once the wait is over, the right password changes it.
    clock.now += 31_000;
    const changed = await svc.request('POST', '/api/v1/auth/change-password', { cookie: s.cookie, headers: s.headers, body: { currentPassword: password, newPassword: 'gwen-new-password-2' } });
    expect(changed.status).toBe(204);
  });

  it('PV-30 creating a user needs a unique name and a valid role; the audit records who created whom', async () => {
    await createUser('henry', 'auditor');
    const dup = await svc.request('POST', '/api/v1/admin/users', { cookie: admin.cookie, headers: admin.headers, body: { username: 'HENRY', password: 'henry-password-1', role: 'auditor' } });
    expect(dup.status).toBe(409);
    const badRole = await svc.request('POST', '/api/v1/admin/users', { cookie: admin.cookie, headers: admin.headers, body: { username: 'ivy', password: 'ivy-password-12', role: 'wizard' } });
    expect(badRole.status).toBe(400);
    expect(badRole.body.errors[0]).toMatchObject({ field: 'body.role', accepted: 'admin, programmer, approver, operator, auditor, integration' });
    const audit = await auditActions(svc);
    const created = audit.find((r) => r.action === 'user.create' && r.details?.includes('henry'));
    expect(created).toMatchObject({ principal_name: 'admin', auth_method: 'session' });
    expect(created?.details).not.toContain('henry-password');
  });
});

describe('the first administrator', () => {
  it('PV-10 gets a generated password shown once at start when PROGRAMS_ADMIN_PASSWORD is not set', async () => {
    const svc = await startTestProgramService({ plugins: [TEST_ACCOUNTS], env: {} });
    try {
      const line = svc.role.context.announcements.find((l) => l.includes("'admin', password"));
      const password = /password (\S+)/.exec(line ?? '')?.[1];
      expect(password).toMatch(/^[A-Za-z0-9]{20}$/);
      await login(svc, 'admin', password as string);
    } finally {
      await svc.stop();
    }
  });

  it('PV-10 refuses to start with a PROGRAMS_ADMIN_PASSWORD shorter than the minimum, naming the variable', async () => {
    await expect(startTestProgramService({ plugins: [TEST_ACCOUNTS], env: { PROGRAMS_ADMIN_PASSWORD: 'short' } })).rejects.toThrow(/PROGRAMS_ADMIN_PASSWORD must have at least 10 characters/);
  });

  it('PV-10 is hashed with scrypt at the production cost when no cost is given, and is rehashed at login when weaker', async () => {
    const weak = await startTestProgramService({ plugins: [TEST_ACCOUNTS], env: { PROGRAMS_ADMIN_PASSWORD: ADMIN_PASSWORD } });
    const dataDir = weak.dataDir;
    await weak.role.stop();
    const strong = await startTestProgramService({ plugins: [createAccountsPlugin({ passwordCost: { N: 2048, r: 8, p: 1 } })], dataDir });
    try {
      await login(strong, 'admin', ADMIN_PASSWORD);
      const db = await openProgramsDatabase(dataDir);
      try {
        const row = await db.get<{ password_hash: string }>("SELECT password_hash FROM accounts_users WHERE username = 'admin'");
        expect(row?.password_hash).toMatch(/^scrypt\$2048\$8\$1\$/);
      } finally {
        await db.close();
      }
    } finally {
      await strong.stop();
      await weak.stop().catch(() => undefined);
    }
  });
});

describe('the session cookie over TLS', () => {
  it('PV-50 takes the __Host- prefix and Secure, keeps HttpOnly and SameSite, and is read back under its prefixed name only', () => {
    const set = setCookieHeader(true, 'ses_0123456789abcdef.secret');
    expect(set).toMatch(/^__Host-pvs_session=ses_0123456789abcdef\.secret; /);
    expect(set.split('; ')).toEqual(expect.arrayContaining(['Secure', 'HttpOnly', 'SameSite=Strict', 'Path=/']));
    expect(set).not.toMatch(/Domain=/i);
    expect(readCookie('pvs_session=plain; __Host-pvs_session=tls', '__Host-pvs_session')).toBe('tls');
    expect(readCookie('pvs_session=plain', '__Host-pvs_session')).toBeUndefined();
    expect(setCookieHeader(true, null)).toMatch(/^__Host-pvs_session=; Max-Age=0; .*Secure/);
  });
});

describe('behind a TLS proxy', () => {
  it('PV-50 a login that arrived over HTTPS through a trusted proxy sets the __Host- cookie with Secure, and that cookie signs later requests in', async () => {
    const svc = await startTestProgramService({ plugins: [TEST_ACCOUNTS], env: { PROGRAMS_ADMIN_PASSWORD: ADMIN_PASSWORD }, trustProxy: ['127.0.0.1'] });
    try {
      const https = { 'x-forwarded-proto': 'https' };
      const res = await svc.request('POST', '/api/v1/auth/login', { body: { username: 'admin', password: ADMIN_PASSWORD }, headers: https });
      const set = res.headers.get('set-cookie') ?? '';
      expect(set).toMatch(/^__Host-pvs_session=/);
      expect(set.split('; ')).toContain('Secure');
      const cookie = set.split(';')[0] as string;
      expect((await svc.request('GET', '/api/v1/auth/me', { cookie, headers: https })).status).toBe(200);
      // The same cookie sent over plain HTTP is not read: a Secure cookie never travels without TLS.
      expect((await svc.request('GET', '/api/v1/auth/me', { cookie })).status).toBe(401);
      const plain = await svc.request('POST', '/api/v1/auth/login', { body: { username: 'admin', password: ADMIN_PASSWORD } });
      expect(plain.headers.get('set-cookie')).toMatch(/^pvs_session=/);
    } finally {
      await svc.stop();
    }
  });
});

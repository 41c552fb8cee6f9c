/**
 * A disabled user's service tokens: disabling a user ends its sessions and
 * revokes the tokens it owns (those it made and those its tokens made);
 * enabling it again revives none of them. Over real HTTP, checked against
 * the OpenAPI document.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SqlDatabase } from '../../../core/store/sql-database.js';
import { openProgramsDatabase, startTestProgramService, type TestProgramService } from '../../fixtures/programs.js';
import { login, TEST_ACCOUNTS, TEST_PROGRAMS_ADMIN_PASSWORD, userSession, type Session } from '../../fixtures/programs-accounts.js';

async function withDatabase<T>(svc: TestProgramService, job: (db: SqlDatabase) => Promise<T>): Promise<T> {
  const db = await openProgramsDatabase(svc.dataDir);
  try {
    return await job(db);
  } finally {
    await db.close();
  }
}

describe('a disabled user\'s service tokens', () => {
  let svc: TestProgramService;
  let root: Session;

  beforeAll(async () => {
    svc = await startTestProgramService({ plugins: [TEST_ACCOUNTS], env: { PROGRAMS_ADMIN_PASSWORD: TEST_PROGRAMS_ADMIN_PASSWORD } });
    root = await login(svc, 'admin', TEST_PROGRAMS_ADMIN_PASSWORD);
  });
  afterAll(() => svc.stop());

  const me = async (token: string) => (await svc.request('GET', '/api/v1/auth/me', { token })).status;
  const setDisabled = (id: string, disabled: boolean) => svc.request('PATCH', `/api/v1/admin/users/${id}`, { cookie: root.cookie, headers: root.headers, body: { disabled } });
  const makeToken = async (as: { cookie?: string; headers?: Record<string, string>; token?: string }, name: string, role = 'auditor') => {
    const res = await svc.request('POST', '/api/v1/admin/service-tokens', { ...as, body: { name, role } });
    expect(res.status).toBe(201);
    return res.body as { id: string; token: string; ownerUserId: string | null };
  };

  it('disabling a user revokes the tokens it owns, also those its tokens made; enabling it again leaves them revoked', async () => {
    const owner = await userSession(svc, root, 'leaving.admin', 'admin');
    const own = await makeToken({ cookie: owner.cookie, headers: owner.headers }, 'made by leaving.admin', 'admin');
    const grandchild = await makeToken({ token: own.token }, 'made by its token');
    const other = await makeToken({ cookie: root.cookie, headers: root.headers }, 'made by admin');
    expect([own.ownerUserId, grandchild.ownerUserId]).toEqual([owner.id, owner.id]);
    expect([await me(own.token), await me(grandchild.token), await me(other.token)]).toEqual([200, 200, 200]);

    expect((await setDisabled(owner.id, true)).status).toBe(200);
    expect([await me(own.token), await me(grandchild.token), await me(other.token)]).toEqual([401, 401, 200]);
    expect((await svc.request('GET', '/api/v1/auth/me', { cookie: owner.cookie })).status).toBe(401);
    const listed = (await svc.request('GET', '/api/v1/admin/service-tokens?limit=1000', { cookie: root.cookie })).body.items as { id: string; revokedAt: string | null }[];
    expect(listed.filter((t) => t.revokedAt !== null).map((t) => t.id).sort()).toEqual([own.id, grandchild.id].sort());
    const audit = await withDatabase(svc, (db) => db.get<{ details: string }>("SELECT details FROM audit_log WHERE action = 'user.update' AND entity_id = ? ORDER BY seq DESC", [owner.id]));
    expect(JSON.parse(audit?.details ?? '{}')).toMatchObject({ disabled: true, tokensRevoked: 2, revokedTokenIds: [own.id, grandchild.id].sort() });

    expect((await setDisabled(owner.id, false)).status).toBe(200);
    expect([await me(own.token), await me(grandchild.token)]).toEqual([401, 401]);
    const back = await login(svc, 'leaving.admin', owner.password);
    const fresh = await makeToken({ cookie: back.cookie, headers: back.headers }, 'issued again');
    expect(await me(fresh.token)).toBe(200);
  });

  it('a token whose owner is disabled is refused even where its revocation is missing', async () => {
    const owner = await userSession(svc, root, 'disabled.elsewhere', 'admin');
    const token = await makeToken({ cookie: owner.cookie, headers: owner.headers }, 'owner disabled behind the service');
    expect(await me(token.token)).toBe(200);
    // As another process writing the flag alone would leave it: the owner disabled, the token not revoked.
    await withDatabase(svc, (db) => db.write((tx) => tx.run('UPDATE accounts_users SET disabled = 1 WHERE id = ?', [owner.id])));
    expect(await me(token.token)).toBe(401);
  });
});

describe('a database from before tokens had owners', () => {
  it('gives each token made by a user that user as owner, and revokes the tokens of users already disabled', async () => {
    const first = await startTestProgramService({ plugins: [TEST_ACCOUNTS], env: { PROGRAMS_ADMIN_PASSWORD: TEST_PROGRAMS_ADMIN_PASSWORD } });
    const dataDir = first.dataDir;
    let second: TestProgramService | undefined;
    try {
      const root = await login(first, 'admin', TEST_PROGRAMS_ADMIN_PASSWORD);
      const kept = await userSession(first, root, 'still.here', 'admin');
      const gone = await userSession(first, root, 'long.gone', 'admin');
      const token = async (s: Session, name: string) => (await first.request('POST', '/api/v1/admin/service-tokens', { cookie: s.cookie, headers: s.headers, body: { name, role: 'auditor' } })).body as { id: string; token: string };
      const keptToken = await token(kept, 'kept token');
      const goneToken = await token(gone, 'gone token');
      await first.role.stop();
      // Back to the schema before owners: no owner column, the user disabled while its token stayed valid.
      const db = await openProgramsDatabase(dataDir);
      try {
        await db.write(async (tx) => {
          await tx.run('DROP INDEX accounts_tokens_owner');
          await tx.run('ALTER TABLE accounts_tokens DROP COLUMN owner_user_id');
          await tx.run("DELETE FROM schema_migrations WHERE plugin = 'accounts' AND version = 2");
          await tx.run('UPDATE accounts_users SET disabled = 1 WHERE username = ?', ['long.gone']);
        });
      } finally {
        await db.close();
      }
      second = await startTestProgramService({ plugins: [TEST_ACCOUNTS], dataDir });
      const admin = await login(second, 'admin', TEST_PROGRAMS_ADMIN_PASSWORD);
      const listed = (await second.request('GET', '/api/v1/admin/service-tokens', { cookie: admin.cookie })).body.items as { id: string; ownerUserId: string | null; revokedAt: string | null }[];
      expect(listed.find((t) => t.id === keptToken.id)).toMatchObject({ ownerUserId: kept.id, revokedAt: null });
      expect(listed.find((t) => t.id === goneToken.id)).toMatchObject({ ownerUserId: gone.id, revokedAt: expect.any(String) });
      expect((await second.request('GET', '/api/v1/auth/me', { token: keptToken.token })).status).toBe(200);
      expect((await second.request('GET', '/api/v1/auth/me', { token: goneToken.token })).status).toBe(401);
      // Enabled again, the user's old token stays revoked.
      await second.request('PATCH', `/api/v1/admin/users/${gone.id}`, { cookie: admin.cookie, headers: admin.headers, body: { disabled: false } });
      expect((await second.request('GET', '/api/v1/auth/me', { token: goneToken.token })).status).toBe(401);
    } finally {
      await second?.stop();
      await first.stop().catch(() => undefined);
    }
  });
});

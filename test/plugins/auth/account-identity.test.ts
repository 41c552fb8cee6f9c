import { afterEach, describe, expect, it } from 'vitest';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decodeJwt } from 'jose';
import { startTestGateway, type TestGateway } from '../../fixtures/gateway.js';
import { Database } from '../../../core/store/database.js';
import { migrateGatewayStore as migrate } from '../../../core/roles/gateway/store/schema.js';
import { writeLegacySchema } from '../../fixtures/legacy-database.js';
import { UserStore } from '../../../plugins/auth/user-store.js';
import { GatewayError } from '../../../core/interfaces/errors.js';

let gw: TestGateway | undefined;
let db: Database | undefined;
afterEach(async () => {
  await gw?.stop();
  gw = undefined;
  await db?.close();
  db = undefined;
});

async function addAndLogin(g: TestGateway, username: string, isAdmin: boolean, authorizedApis: string[]): Promise<string> {
  const add = await g.request('POST', '/api/security/user/add', { username, password: `${username}-password-1`, isAdmin, authorizedApis });
  expect(add.status).toBe(200);
  const login = await g.request('POST', '/api/auth/login', { username, password: `${username}-password-1` }, { token: null });
  expect(login.status).toBe(200);
  return login.body.token as string;
}

async function deleteUser(g: TestGateway, username: string): Promise<void> {
  expect((await g.request('POST', '/api/security/user/delete', { username })).status).toBe(200);
}

const SEED = { securityControl: true, enableIpWhiteList: false, ipWhiteList: [] };

async function openStore(): Promise<UserStore> {
  db = await Database.open(join(mkdtempSync(join(tmpdir(), 'gw-users-')), 'gateway.db'));
  await migrate(db);
  return UserStore.open(db, SEED);
}

describe('tokens and keys are bound to the account, not to its name', () => {
  it('a deleted non-admin’s JWT stays refused after an administrator is created under the same name', async () => {
    gw = await startTestGateway();
    const old = await addAndLogin(gw, 'bob', false, ['/api/config/machines']);
    expect(decodeJwt(old).aid).toMatch(/^[0-9a-f]{32}$/);
    await deleteUser(gw, 'bob');
    const fresh = await addAndLogin(gw, 'bob', true, []);
    // Same name, same token version (1): only the account id tells the two apart.
    expect(decodeJwt(fresh).tv).toBe(decodeJwt(old).tv);
    expect(decodeJwt(fresh).aid).not.toBe(decodeJwt(old).aid);
    for (const path of ['/api/security/users', '/api/config/machines']) {
      const res = await gw.request('GET', path, undefined, { token: old });
      expect([res.status, res.body.errorCode]).toEqual([401, 4]);
    }
    expect((await gw.request('GET', '/api/security/users', undefined, { token: fresh })).status).toBe(200);
  });

  it('a deleted user’s JWT stays refused after a non-administrator is created under the same name', async () => {
    gw = await startTestGateway();
    const old = await addAndLogin(gw, 'carol', false, ['/api/config/machines']);
    await deleteUser(gw, 'carol');
    const fresh = await addAndLogin(gw, 'carol', false, ['/api/config/machines']);
    const res = await gw.request('GET', '/api/config/machines', undefined, { token: old });
    expect([res.status, res.body.errorCode]).toEqual([401, 4]);
    expect((await gw.request('GET', '/api/config/machines', undefined, { token: fresh })).status).toBe(200);
  });

  it('a deleted administrator’s JWT stays refused after the name is taken again, also across a restart', async () => {
    gw = await startTestGateway();
    const old = await addAndLogin(gw, 'root2', true, []);
    await deleteUser(gw, 'root2');
    await addAndLogin(gw, 'root2', true, []);
    const dir = gw.dataDir;
    await gw.stop();
    gw = await startTestGateway({}, dir);
    const res = await gw.request('GET', '/api/security/users', undefined, { token: old });
    expect([res.status, res.body.errorCode]).toEqual([401, 4]);
  });

  it('a deleted user’s secret key does not authenticate the user created again under the same name', async () => {
    gw = await startTestGateway();
    await addAndLogin(gw, 'line', false, ['/api/config/machines']);
    const created = await gw.request('POST', '/api/security/secret-key/create', { username: 'line' });
    const { key } = created.body.data as { key: string };
    expect((await gw.request('GET', '/api/config/machines', undefined, { token: key })).status).toBe(200);
    await deleteUser(gw, 'line');
    await addAndLogin(gw, 'line', false, ['/api/config/machines']);
    const res = await gw.request('GET', '/api/config/machines', undefined, { token: key });
    expect([res.status, res.body.errorCode]).toEqual([401, 4]);
  });

  it('a key or change prepared for a deleted account is refused rather than applied to the account now holding its name', async () => {
    const users = await openStore();
    const now = Date.now();
    const old = await users.createUser({ username: 'dave', passwordHash: 'x', isAdmin: true, authorizedApis: [], createdAt: now, updatedAt: now });
    await users.deleteUser('dave');
    const fresh = await users.createUser({ username: 'dave', passwordHash: 'y', isAdmin: false, authorizedApis: [], createdAt: now, updatedAt: now });
    expect(fresh.accountId).not.toBe(old.accountId);
    // As if a secret-key/create or user/update had read 'dave' before the delete and written after the re-creation.
    const key = { id: 'aaaaaaaaaaaa', accountId: old.accountId, username: 'dave', keyHash: 'h', label: '', createdAt: now, revokedAt: null, lastUsedAt: null };
    await expect(users.addKey(key)).rejects.toThrow(GatewayError);
    await expect(users.updateUser({ ...old, passwordHash: 'z' })).rejects.toThrow(/deleted meanwhile/);
    expect(users.findKey('aaaaaaaaaaaa')).toBeUndefined();
    const rows = await db!.all<{ is_admin: number; password_hash: string }>('SELECT is_admin, password_hash FROM users');
    expect(rows).toEqual([{ is_admin: 0, password_hash: 'y' }]);
  });

  it('the migration gives existing users distinct account ids and binds their keys to them', async () => {
    db = await Database.open(join(mkdtempSync(join(tmpdir(), 'gw-users-')), 'gateway.db'));
    // A database as the previous release left it: migrations up to 3, a user with a key.
    await writeLegacySchema(db, 3);
    await db.write(async (tx) => {
      for (const name of ['admin', 'eve']) {
        await tx.run("INSERT INTO users VALUES (?, 'h', 1, '[]', 1, 0, 0)", [name]);
      }
      await tx.run("INSERT INTO secret_keys (id, username, key_hash, label, created_at) VALUES ('bbbbbbbbbbbb', 'eve', 'k', '', 0)");
    });
    expect(await migrate(db)).toEqual([4]);
    const users = await db.all<{ username: string; account_id: string }>('SELECT username, account_id FROM users');
    expect(users.every((u) => /^[0-9a-f]{32}$/.test(u.account_id))).toBe(true);
    expect(new Set(users.map((u) => u.account_id)).size).toBe(2);
    const store = await UserStore.open(db, SEED);
    expect(store.findKey('bbbbbbbbbbbb')?.accountId).toBe(store.findUser('eve')?.accountId);
  });
});

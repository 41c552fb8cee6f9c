/**
 * Several program-service instances on one PostgreSQL database: the audit
 * chain stays one chain under concurrent appends (two pools as two
 * instances, and two services over HTTP), and sessions, service tokens and
 * their revocation hold whichever instance a request reaches, because
 * every request reads them from the database (nothing caches a token
 * check). Real PostgreSQL (test/fixtures/postgres.ts).
 */
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../core/roles/index.js';
import { programsRole } from '../../core/roles/programs/definition.js';
import { AuditChain, type AuditEntry } from '../../core/roles/programs/audit/chain.js';
import { PostgresDatabase } from '../../core/store/postgres-database.js';
import { auditApiPlugin } from '../../plugins/audit-api/index.js';
import { login, TEST_ACCOUNTS, TEST_PROGRAMS_ADMIN_PASSWORD, userSession } from '../fixtures/programs-accounts.js';
import { startTestProgramService, type TestProgramService } from '../fixtures/programs.js';
import { startTestPostgres, type TestPostgres } from '../fixtures/postgres.js';

/** How soon a change on one instance must hold on the other. */
const WITHIN_MS = 5_000;

let server: TestPostgres;
beforeAll(async () => {
  server = await startTestPostgres();
}, 60_000);
afterAll(() => server?.stop());

const entry = (instance: string, i: number): AuditEntry => ({
  principalName: `writer-${instance}`, onBehalfOf: null, authMethod: 'serviceToken', category: 'admin', action: 'test.append',
  entityType: 'test', entityId: `${instance}-${i}`, machine: null, details: { instance, i },
});

/** Polls `check` until it holds or `ms` passed; answers how long it took, or throws with the last value. */
async function within<T>(ms: number, read: () => Promise<T>, holds: (value: T) => boolean): Promise<number> {
  const start = Date.now();
  let last: T;
  do {
    last = await read();
    if (holds(last)) return Date.now() - start;
    await new Promise((resolve) => setTimeout(resolve, 100));
  } while (Date.now() - start < ms);
  throw new Error(`not within ${ms} ms: ${JSON.stringify(last)}`);
}

describe('the program service started with PROGRAMS_DATABASE_URL', () => {
  it('keeps its data on PostgreSQL, makes no programs.db, is ready, and its banner names the database without the password', async () => {
    const url = await server.createDatabase();
    const password = decodeURIComponent(new URL(url).password);
    const dataDir = mkdtempSync(join(tmpdir(), 'programs-pg-'));
    const env = { PROGRAMS_DATABASE_URL: url, PROGRAMS_ADMIN_PASSWORD: TEST_PROGRAMS_ADMIN_PASSWORD };
    const config = parseConfig({ logLevel: 'silent', dataDir, timeZone: 'UTC', programs: { host: '127.0.0.1', port: 0 } }, 'plant.json', env);
    const started = await programsRole.start({ config, file: 'plant.json', logger: pino({ level: 'silent' }), env, offers: {}, definitions: [] });
    try {
      const { host, port, pathname } = new URL(url);
      expect(started.banner).toContain(`  database:    PostgreSQL postgresql://${host.split(':')[0]}:${port}${pathname}`);
      expect(started.banner.join('\n')).not.toContain(password);
      expect(existsSync(join(dataDir, 'programs.db'))).toBe(false);
      const base = (started.consoleUrl ?? '').replace(/\/$/, '');
      expect((await fetch(`${base}/readyz`)).status).toBe(200);
      const login = await fetch(`${base}/api/v1/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'admin', password: TEST_PROGRAMS_ADMIN_PASSWORD }) });
      expect(login.status).toBe(200);
    } finally {
      await started.stop.stop();
    }
    const db = await PostgresDatabase.open(url, { max: 2 });
    try {
      expect(await db.get("SELECT username FROM accounts_users WHERE username = 'admin'")).toEqual({ username: 'admin' });
    } finally {
      await db.close();
    }
  });
});

describe('the audit chain with two instances on one PostgreSQL database', () => {
  it('PV-15 concurrent appends from two instances get consecutive seqs and chained hashes, and verify is intact on both', async () => {
    const url = await server.createDatabase();
    const [a, b] = await Promise.all([PostgresDatabase.open(url, { max: 4 }), PostgresDatabase.open(url, { max: 4 })]);
    try {
      // Both open (and create the schema) at once, as instances starting together do.
      const [chainA, chainB] = await Promise.all([AuditChain.open(a, { timeZone: 'UTC' }), AuditChain.open(b, { timeZone: 'UTC' })]);
      const writes: Promise<unknown>[] = [];
      for (let i = 0; i < 40; i++) {
        // One, two or three records a transaction, with a statement before them, as a change writes its row first.
        const many = (i % 3) + 1;
        for (const [name, db, chain] of [['a', a, chainA], ['b', b, chainB]] as const) {
          writes.push(db.write(async (tx) => {
            await tx.get('SELECT 1 AS one');
            return chain.appendMany(tx, Array.from({ length: many }, (_, k) => entry(name, i * 3 + k)));
          }, { transaction: true }));
        }
      }
      await Promise.all(writes);
      const total = 2 * [...Array(40).keys()].reduce((sum, i) => sum + (i % 3) + 1, 0);
      const rows = await a.all<{ seq: number; prev_hash: string; hash: string }>('SELECT seq, prev_hash, hash FROM audit_log ORDER BY seq');
      expect(rows.map((r) => r.seq)).toEqual(Array.from({ length: total }, (_, k) => k + 1));
      for (let k = 1; k < rows.length; k++) expect(rows[k]?.prev_hash).toBe(rows[k - 1]?.hash);
      // Both instances wrote in the interleaving.
      const writers = await a.all<{ principal_name: string; n: number }>('SELECT principal_name, COUNT(*) AS n FROM audit_log GROUP BY principal_name ORDER BY principal_name');
      expect(writers).toEqual([{ principal_name: 'writer-a', n: total / 2 }, { principal_name: 'writer-b', n: total / 2 }]);
      expect(await chainA.verify()).toEqual({ intact: true, checked: total, firstBrokenSeq: null });
      expect(await chainB.verify()).toEqual({ intact: true, checked: total, firstBrokenSeq: null });
      expect(await chainB.committedHead()).toEqual({ seq: total, hash: rows.at(-1)?.hash });
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });

  it('PV-15 on PostgreSQL the database refuses an update, a delete and an insert off the head, and verify names a changed record', async () => {
    const db = await PostgresDatabase.open(await server.createDatabase(), { max: 3 });
    try {
      const chain = await AuditChain.open(db, { timeZone: 'UTC' });
      await db.write((tx) => chain.appendMany(tx, [entry('a', 1), entry('a', 2), entry('a', 3)]), { transaction: true });
      await expect(db.write((tx) => tx.run("UPDATE audit_log SET action = 'x' WHERE seq = 1"))).rejects.toThrow('append-only');
      await expect(db.write((tx) => tx.run('DELETE FROM audit_log WHERE seq = 3'))).rejects.toThrow('append-only');
      await expect(db.write((tx) => tx.run("INSERT INTO audit_log (seq, ts, principal_name, auth_method, category, action, prev_hash, hash) VALUES (9, 0, 'm', 'x', 'x', 'x', 'h', 'h')")))
        .rejects.toThrow('audit chain head moved');
      expect(await chain.verify()).toEqual({ intact: true, checked: 3, firstBrokenSeq: null });
      // Someone with the database's owner rights can drop the guard: verify still names the change.
      await db.write(async (tx) => {
        await tx.run('ALTER TABLE audit_log DISABLE TRIGGER audit_log_append_only');
        await tx.run("UPDATE audit_log SET action = 'tampered' WHERE seq = 2");
      }, { transaction: true });
      expect(await chain.verify()).toEqual({ intact: false, checked: 1, firstBrokenSeq: 2 });
    } finally {
      await db.close();
    }
  });
});

describe('two program-service instances on one PostgreSQL database', { timeout: 60_000 }, () => {
  let one: TestProgramService;
  let two: TestProgramService;

  beforeAll(async () => {
    const databaseUrl = await server.createDatabase();
    const options = { plugins: [TEST_ACCOUNTS, auditApiPlugin], env: { PROGRAMS_ADMIN_PASSWORD: TEST_PROGRAMS_ADMIN_PASSWORD }, databaseUrl };
    // Started together: each applies the migrations and makes the first administrator once.
    [one, two] = await Promise.all([startTestProgramService(options), startTestProgramService(options)]);
  }, 60_000);
  afterAll(async () => {
    await one?.stop();
    await two?.stop();
  });

  it('a session made on one instance is accepted by the other, for reads and for changes with its CSRF token', async () => {
    const admin = await login(one, 'admin', TEST_PROGRAMS_ADMIN_PASSWORD);
    const me = await two.request('GET', '/api/v1/auth/me', { cookie: admin.cookie });
    expect(me.status).toBe(200);
    expect(me.body).toMatchObject({ kind: 'user', name: 'admin', authMethod: 'session' });
    const created = await two.request('POST', '/api/v1/admin/users', { cookie: admin.cookie, headers: admin.headers, body: { username: 'made-on-two', password: 'made-on-two-pass-1', role: 'operator' } });
    expect(created.status).toBe(201);
    // Signing out on the second ends the session on the first too.
    expect((await two.request('POST', '/api/v1/auth/logout', { cookie: admin.cookie, headers: admin.headers })).status).toBe(204);
    expect((await one.request('GET', '/api/v1/auth/me', { cookie: admin.cookie })).status).toBe(401);
  });

  it('a service token made on one instance works on the other; revoked on that one, the first refuses it within 5 s', async () => {
    const admin = await login(two, 'admin', TEST_PROGRAMS_ADMIN_PASSWORD);
    const created = await one.request('POST', '/api/v1/admin/service-tokens', { cookie: admin.cookie, headers: admin.headers, body: { name: 'mes', role: 'auditor' } });
    expect(created.status).toBe(201);
    const token = created.body.token as string;
    expect((await two.request('GET', '/api/v1/auth/me', { token })).status).toBe(200);
    expect((await one.request('GET', '/api/v1/auth/me', { token })).status).toBe(200);
    expect((await two.request('DELETE', `/api/v1/admin/service-tokens/${created.body.id}`, { cookie: admin.cookie, headers: admin.headers })).status).toBe(204);
    const took = await within(WITHIN_MS, async () => (await one.request('GET', '/api/v1/auth/me', { token })).status, (status) => status === 401);
    expect(took).toBeLessThan(WITHIN_MS);
  });

  it('a user disabled on one instance is refused by the other within 5 s, by session and by the tokens it owns', async () => {
    const admin = await login(one, 'admin', TEST_PROGRAMS_ADMIN_PASSWORD);
    const user = await userSession(two, admin, 'soon-disabled', 'admin');
    const created = await two.request('POST', '/api/v1/admin/service-tokens', { cookie: user.cookie, headers: user.headers, body: { name: 'owned', role: 'auditor' } });
    expect(created.status).toBe(201);
    expect((await one.request('GET', '/api/v1/auth/me', { cookie: user.cookie })).status).toBe(200);
    expect((await one.request('PATCH', `/api/v1/admin/users/${user.id}`, { cookie: admin.cookie, headers: admin.headers, body: { disabled: true } })).status).toBe(200);
    await within(WITHIN_MS, async () => (await two.request('GET', '/api/v1/auth/me', { cookie: user.cookie })).status, (status) => status === 401);
    await within(WITHIN_MS, async () => (await two.request('GET', '/api/v1/auth/me', { token: created.body.token })).status, (status) => status === 401);
  });

  it('PV-15 changes made concurrently on both instances are one chain: /audit/verify is intact on each, with every change recorded', async () => {
    const admin = await login(one, 'admin', TEST_PROGRAMS_ADMIN_PASSWORD);
    const before = (await one.request('GET', '/api/v1/audit/verify', { cookie: admin.cookie })).body.checked as number;
    const made = await Promise.all(Array.from({ length: 24 }, (_, i) => (i % 2 ? one : two).request('POST', '/api/v1/admin/users', {
      cookie: admin.cookie, headers: admin.headers, body: { username: `writer-${i}`, password: `writer-${i}-password`, role: 'operator' },
    })));
    expect(made.map((r) => r.status)).toEqual(Array(24).fill(201));
    for (const svc of [one, two]) {
      const verify = await svc.request('GET', '/api/v1/audit/verify', { cookie: admin.cookie });
      expect(verify.status).toBe(200);
      expect(verify.body).toMatchObject({ intact: true, firstBrokenSeq: null });
      expect(verify.body.checked).toBeGreaterThanOrEqual(before + 24);
    }
    const creates = await two.request('GET', '/api/v1/audit?action=user.create&limit=100', { cookie: admin.cookie });
    expect(creates.status).toBe(200);
    expect(creates.body.items.filter((r: { details: { username?: string } | null }) => r.details?.username?.startsWith('writer-')).length).toBe(24);
  });
});

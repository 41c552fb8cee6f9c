/**
 * Two program-service instances on one database (a SQLite file opened twice
 * in `npm test`, one PostgreSQL database in the peer suite) behind no
 * balancer: failed sign-ins spread over both count on both, so the lock-out
 * is the same whichever instance a request reaches, with the answers of a
 * single instance (429 `too-many-requests` with Retry-After).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LOGIN_THROTTLE_TABLE } from '../../../plugins/accounts/store.js';
import { openProgramsDatabase, startTestProgramService, type TestProgramService } from '../../fixtures/programs.js';
import { login, TEST_ACCOUNTS, TEST_PROGRAMS_ADMIN_PASSWORD } from '../../fixtures/programs-accounts.js';

describe('login throttling with two instances on one database', () => {
  const clock = { now: Date.UTC(2026, 10, 27, 8, 0, 0) };
  const env = { PROGRAMS_ADMIN_PASSWORD: TEST_PROGRAMS_ADMIN_PASSWORD };
  let a: TestProgramService;
  let b: TestProgramService;

  beforeAll(async () => {
    a = await startTestProgramService({ plugins: [TEST_ACCOUNTS], env, now: () => clock.now });
    b = await startTestProgramService({ plugins: [TEST_ACCOUNTS], env, now: () => clock.now, dataDir: a.dataDir });
  });
  afterAll(async () => {
    await b?.stop();
    await a?.stop();
  });

  const attempt = (svc: TestProgramService, username: string, password: string) =>
    svc.request('POST', '/api/v1/auth/login', { body: { username, password } });

  it('PV-10 failures spread over both instances lock the user out on both, with 429 and the same Retry-After', async () => {
    for (let i = 0; i < 5; i++) expect((await attempt(i % 2 === 0 ? a : b, 'admin', `wrong-guess-${i}`)).status).toBe(401);
    for (const svc of [a, b]) {
      const locked = await attempt(svc, 'admin', TEST_PROGRAMS_ADMIN_PASSWORD);
      expect(locked.status).toBe(429);
      expect(locked.body).toMatchObject({ status: 429 });
      expect(locked.headers.get('retry-after')).toBe('30');
    }
    // The lock ends for both at once; a success on one clears the count on the other.
    clock.now += 30_000;
    await login(b, 'admin', TEST_PROGRAMS_ADMIN_PASSWORD);
    for (let i = 0; i < 4; i++) expect((await attempt(i % 2 === 0 ? b : a, 'admin', `wrong-again-${i}`)).status).toBe(401);
    await login(a, 'admin', TEST_PROGRAMS_ADMIN_PASSWORD);
  });

  it('PV-10 an unknown user name is locked out across instances the same way, and no password is stored', async () => {
    for (let i = 0; i < 5; i++) expect((await attempt(i < 3 ? a : b, 'nobody', `secret-guess-${i}`)).status).toBe(401);
    expect((await attempt(a, 'nobody', 'secret-guess-x')).status).toBe(429);
    expect((await attempt(b, 'nobody', 'secret-guess-x')).status).toBe(429);
    const db = await openProgramsDatabase(a.dataDir);
    try {
      const rows = await db.all(`SELECT * FROM ${LOGIN_THROTTLE_TABLE} WHERE name = ?`, ['nobody']);
      expect(rows).toEqual([expect.objectContaining({ source: '127.0.0.1', name: 'nobody' })]);
      expect(Number(rows[0]?.failures)).toBe(5);
      expect(JSON.stringify(rows)).not.toContain('secret-guess');
    } finally {
      await db.close();
    }
  });
});

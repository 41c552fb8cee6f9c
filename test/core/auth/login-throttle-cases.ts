/**
 * The login throttle's database store on every engine: the same cases on
 * SQLite (test/core/auth/login-throttle-sql.test.ts) and on PostgreSQL
 * (test/peers/login-throttle-postgres.test.ts). "Two instances" are two
 * connections to one database, as two processes would open it.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { SqlLoginThrottle } from '../../../core/auth/login-throttle-sql.js';
import type { ThrottleOptions } from '../../../core/auth/login-throttle.js';
import { applyMigrations } from '../../../core/store/migrations.js';
import type { SqlDatabase } from '../../../core/store/sql-database.js';
import { LOGIN_THROTTLE_TABLE, MIGRATIONS } from '../../../plugins/accounts/store.js';
import type { EngineUnderTest } from '../../fixtures/database-engines.js';

const T0 = Date.UTC(2026, 10, 27, 8, 0, 0);
const MINUTE = 60_000;

export function loginThrottleStoreCases(engine: EngineUnderTest): void {
  describe(`login throttle in the database on ${engine.name}`, () => {
    const opened: SqlDatabase[] = [];
    afterEach(async () => {
      for (const db of opened.splice(0)) await db.close();
    });

    /** `count` throttles on one fresh database, each on its own connection (an instance each). */
    async function instances(count: number, options: ThrottleOptions = {}): Promise<{ throttles: SqlLoginThrottle[]; db: SqlDatabase }> {
      const database = await engine.fresh();
      const dbs: SqlDatabase[] = [];
      for (let i = 0; i < count; i++) {
        const db = await database.open();
        opened.push(db);
        dbs.push(db);
      }
      await applyMigrations(dbs[0] as SqlDatabase, 'accounts', MIGRATIONS);
      return { throttles: dbs.map((db) => new SqlLoginThrottle(db, LOGIN_THROTTLE_TABLE, options)), db: dbs[0] as SqlDatabase };
    }

    const failures = async (db: SqlDatabase, source: string, name: string) =>
      Number((await db.get<{ failures: number }>(`SELECT failures FROM ${LOGIN_THROTTLE_TABLE} WHERE source = ? AND name = ?`, [source, name]))?.failures ?? 0);

    it('gives 5 free attempts, then a delay that doubles up to 15 minutes; a success clears it', async () => {
      const { throttles: [t] } = await instances(1);
      const throttle = t as SqlLoginThrottle;
      for (let i = 0; i < 4; i++) await throttle.fail('10.0.0.1', 'ghost', T0);
      expect(await throttle.retryAfterSec('10.0.0.1', 'ghost', T0)).toBe(0);
      await throttle.fail('10.0.0.1', 'ghost', T0);
      expect(await throttle.retryAfterSec('10.0.0.1', 'ghost', T0)).toBe(30);
      expect(await throttle.retryAfterSec('10.0.0.2', 'ghost', T0)).toBe(0);
      await throttle.fail('10.0.0.1', 'ghost', T0 + 30_000);
      expect(await throttle.retryAfterSec('10.0.0.1', 'ghost', T0 + 30_000)).toBe(60);
      for (let i = 0; i < 10; i++) await throttle.fail('10.0.0.1', 'ghost', T0 + 31_000);
      expect(await throttle.retryAfterSec('10.0.0.1', 'ghost', T0 + 31_000)).toBe(15 * 60);
      await throttle.succeed('10.0.0.1', 'ghost');
      expect(await throttle.retryAfterSec('10.0.0.1', 'ghost', T0 + 31_000)).toBe(0);
      expect(await throttle.size()).toBe(0);
    });

    it('forgets a record once its window has passed and it is not locked; prune deletes only such rows', async () => {
      const { throttles: [t] } = await instances(1);
      const throttle = t as SqlLoginThrottle;
      for (let i = 0; i < 4; i++) await throttle.fail('10.0.0.1', 'old', T0);
      for (let i = 0; i < 5; i++) await throttle.fail('10.0.0.1', 'locked', T0 + 10 * MINUTE);
      await throttle.fail('10.0.0.1', 'recent', T0 + 14 * MINUTE);
      // Past the window of 'old': its next failure starts a new count.
      await throttle.fail('10.0.0.1', 'old', T0 + 16 * MINUTE);
      for (let i = 0; i < 3; i++) await throttle.fail('10.0.0.1', 'old', T0 + 16 * MINUTE);
      expect(await throttle.retryAfterSec('10.0.0.1', 'old', T0 + 16 * MINUTE)).toBe(0);
      // 'locked' is past its window at T0 + 26 min but still locked until T0 + 10.5 min: long over, so it goes; 'recent' stays.
      expect(await throttle.prune(T0 + 26 * MINUTE)).toBe(1);
      expect(await throttle.size()).toBe(2);
      expect(await throttle.prune(T0 + 32 * MINUTE)).toBe(2);
      expect(await throttle.size()).toBe(0);
    });

    it('failures on one instance count on the other: spread over two, they lock the name on both', async () => {
      const { throttles: [a, b] } = await instances(2);
      for (let i = 0; i < 5; i++) await (i % 2 === 0 ? a : b)?.fail('10.0.0.9', 'admin', T0 + i);
      expect(await a?.retryAfterSec('10.0.0.9', 'admin', T0 + 5)).toBe(30);
      expect(await b?.retryAfterSec('10.0.0.9', 'admin', T0 + 5)).toBe(30);
      await a?.succeed('10.0.0.9', 'admin');
      expect(await b?.retryAfterSec('10.0.0.9', 'admin', T0 + 5)).toBe(0);
    });

    it('two instances failing the same name at once never lose a count', async () => {
      const { throttles: [a, b], db } = await instances(2);
      const each = 25;
      await Promise.all([
        ...Array.from({ length: each }, (_, i) => a?.fail('10.0.0.7', 'victim', T0 + i)),
        ...Array.from({ length: each }, (_, i) => b?.fail('10.0.0.7', 'victim', T0 + i)),
      ]);
      expect(await failures(db, '10.0.0.7', 'victim')).toBe(2 * each);
      expect(await b?.retryAfterSec('10.0.0.7', 'victim', T0 + each)).toBeGreaterThan(0);
    });

    it('a flood of other names from one source neither clears a lock on a victim nor grows past the bounds', async () => {
      const { throttles: [a, b] } = await instances(2, { maxKeysPerSource: 5, maxKeys: 12 });
      for (let i = 0; i < 5; i++) await a?.fail('10.0.0.66', 'admin', T0);
      for (let i = 0; i < 40; i++) await (i % 2 === 0 ? a : b)?.fail(i < 20 ? '10.0.0.66' : `10.1.0.${i}`, `user${i}`, T0 + 1 + i);
      expect(await b?.retryAfterSec('10.0.0.66', 'admin', T0 + 100)).toBe(30);
      expect(await a?.size()).toBeLessThanOrEqual(12);
    });

    it('a source whose rows are all locked is refused new names until its first lock ends; other sources are not', async () => {
      const { throttles: [a, b] } = await instances(2, { maxKeysPerSource: 3, maxKeys: 100 });
      for (let n = 0; n < 3; n++) for (let i = 0; i < 5; i++) await a?.fail('10.0.0.66', `user${n}`, T0 + n);
      expect(await b?.retryAfterSec('10.0.0.66', 'fresh', T0 + 10)).toBe(30);
      await b?.fail('10.0.0.66', 'fresh', T0 + 10);
      expect(await a?.size()).toBe(3);
      expect(await b?.retryAfterSec('10.0.0.77', 'fresh', T0 + 10)).toBe(0);
      // The first lock ends at T0 + 30 s; that row then gives way to the new name, and the other locks hold.
      expect(await b?.retryAfterSec('10.0.0.66', 'fresh', T0 + 30_000)).toBe(0);
      await b?.fail('10.0.0.66', 'fresh', T0 + 30_000);
      expect(await a?.size()).toBe(3);
      expect(await a?.retryAfterSec('10.0.0.66', 'user2', T0 + 30_000)).toBeGreaterThan(0);
      expect(await a?.retryAfterSec('10.0.0.66', 'user0', T0 + 30_000)).toBe(0);
    });

    it('when every row is locked, new names are refused from every source rather than a lock forgotten', async () => {
      const { throttles: [a, b] } = await instances(2, { maxKeysPerSource: 10, maxKeys: 6 });
      for (let s = 0; s < 6; s++) for (let i = 0; i < 5; i++) await a?.fail(`10.0.${s}.1`, 'admin', T0);
      expect(await b?.retryAfterSec('10.9.9.9', 'admin', T0 + 1)).toBeGreaterThan(0);
      await b?.fail('10.9.9.9', 'admin', T0 + 1);
      expect(await a?.size()).toBe(6);
      for (let s = 0; s < 6; s++) expect(await b?.retryAfterSec(`10.0.${s}.1`, 'admin', T0 + 1)).toBeGreaterThan(0);
    });

    it('keys are stored bounded in length, and only the source and the name are stored', async () => {
      const { throttles: [a], db } = await instances(1);
      const name = 'n'.repeat(1000);
      const source = `2001:db8::${'f'.repeat(200)}`;
      for (let i = 0; i < 5; i++) await a?.fail(source, name, T0);
      const rows = await db.all<Record<string, unknown>>(`SELECT * FROM ${LOGIN_THROTTLE_TABLE}`);
      expect(rows).toHaveLength(1);
      expect(Object.keys(rows[0] ?? {}).sort()).toEqual(['blocked_until', 'failures', 'first_at', 'last_at', 'name', 'source']);
      expect(String(rows[0]?.name)).toHaveLength(128);
      expect(String(rows[0]?.source)).toHaveLength(64);
      expect(await a?.retryAfterSec(source, name, T0)).toBe(30);
    });
  });
}

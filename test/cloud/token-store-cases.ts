/**
 * The cloud's token registry on every database engine: the same cases on
 * SQLite (test/cloud/token-store.test.ts) and on PostgreSQL
 * (test/peers/cloud-token-store-postgres.test.ts), each with several
 * instances on one database as several cloud instances (or the CLI) would
 * open it: a token made on one counts on the others at once, one revoked or
 * rotated there is refused within the check's cache lifetime, and the
 * revocations are read by every instance in order, each once, none missed.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { AdminKeys, CLOUD_MIGRATIONS, GatewayTokens, VERIFIED_TTL_MS } from '../../core/roles/cloud/tokens.js';
import { applyMigrations, BASE_SCHEMA_OWNER } from '../../core/store/migrations.js';
import type { SqlDatabase } from '../../core/store/sql-database.js';
import type { EngineUnderTest } from '../fixtures/database-engines.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export function tokenStoreCases(engine: EngineUnderTest): void {
  describe(`the cloud's token registry on ${engine.name}`, () => {
    const opened: SqlDatabase[] = [];
    afterEach(async () => {
      for (const db of opened.splice(0)) await db.close();
    });
    /** `count` instances on one fresh database, each migrated as a starting cloud does (together). */
    const instances = async (count: number): Promise<{ db: SqlDatabase; tokens: GatewayTokens }[]> => {
      const fresh = await engine.fresh();
      const dbs = await Promise.all(Array.from({ length: count }, () => fresh.open()));
      opened.push(...dbs);
      await Promise.all(dbs.map((db) => applyMigrations(db, BASE_SCHEMA_OWNER, CLOUD_MIGRATIONS)));
      return Promise.all(dbs.map(async (db) => ({ db, tokens: await GatewayTokens.open(db) })));
    };

    it('a token made on one instance is accepted by another at once; revoked there, refused by the other within the check\'s cache lifetime', async () => {
      const [a, b] = await instances(2);
      const made = await a!.tokens.create('plant-a');
      expect(await b!.tokens.verify(made.token)).toBe(made.record.id);
      expect((await b!.tokens.list()).map((t) => t.name)).toEqual(['plant-a']);
      expect(await a!.tokens.revoke(made.record.id)).toBe(true);
      // b remembered the success; it holds for at most VERIFIED_TTL_MS.
      await sleep(VERIFIED_TTL_MS + 50);
      expect(await b!.tokens.verify(made.token)).toBeUndefined();
      expect(await b!.tokens.revoke(made.record.id)).toBe(false);
    });

    it('a token rotated on one instance: the other refuses the old one and takes the new one', async () => {
      const [a, b] = await instances(2);
      const old = await a!.tokens.create('plant-b');
      expect(await b!.tokens.verify(old.token)).toBe(old.record.id);
      const next = await a!.tokens.rotate(old.record.id);
      await sleep(VERIFIED_TTL_MS + 50);
      expect(await b!.tokens.verify(old.token)).toBeUndefined();
      expect(await b!.tokens.verify(next?.token)).toBe(next?.record.id);
      expect((await b!.tokens.list()).find((t) => t.id === old.record.id)).toMatchObject({ replacedBy: next?.record.id });
    });

    it('revocations on two instances at once are read by a third in order, each once and none missed; an instance leaves out its own', async () => {
      const [a, b, c] = await instances(3);
      const made = await Promise.all(Array.from({ length: 12 }, (_, i) => a!.tokens.create(`plant-${i}`)));
      const start = await c!.tokens.lastRevocation();
      expect(start).toBe(0);
      const seen: string[] = [];
      let last = start;
      const reading = (async () => {
        // c reads while the others revoke, as its poll does.
        for (let i = 0; i < 40 && seen.length < made.length; i++) {
          const round = await c!.tokens.revokedSince(last);
          seen.push(...round.ids);
          last = round.last;
          await sleep(5);
        }
      })();
      await Promise.all(made.map((m, i) => (i % 2 === 0 ? a! : b!).tokens.revoke(m.record.id)));
      await reading;
      const rest = await c!.tokens.revokedSince(last);
      seen.push(...rest.ids);
      expect([...seen].sort()).toEqual(made.map((m) => m.record.id).sort());
      expect(await c!.tokens.lastRevocation()).toBe(made.length);
      // a revoked half of them itself and announced them: it reads only b's.
      const byB = made.filter((_, i) => i % 2 === 1).map((m) => m.record.id).sort();
      expect((await a!.tokens.revokedSince(start)).ids.sort()).toEqual(byB);
    });

    it('a revocation read from the database ends a remembered check at once, without waiting for its lifetime', async () => {
      const [a, b] = await instances(2);
      const made = await a!.tokens.create('plant-c');
      expect(await b!.tokens.verify(made.token)).toBe(made.record.id);
      const from = await b!.tokens.lastRevocation();
      await a!.tokens.revoke(made.record.id);
      expect((await b!.tokens.revokedSince(from)).ids).toEqual([made.record.id]);
      expect(await b!.tokens.verify(made.token)).toBeUndefined();
    });

    it('admin keys made on one instance open the admin interface of another, and stop when revoked there', async () => {
      const fresh = await instances(2);
      const [a, b] = await Promise.all(fresh.map(({ db }) => AdminKeys.open(db)));
      const key = await a!.create('ops');
      expect(await b!.verify(key.token)).toBe(key.record.id);
      await a!.revoke(key.record.id);
      await sleep(VERIFIED_TTL_MS + 50);
      expect(await b!.verify(key.token)).toBeUndefined();
    });
  });
}

/**
 * The webhooks' store on every database engine: the same cases on SQLite
 * (test/plugins/webhooks/store.test.ts) and on PostgreSQL
 * (test/peers/webhooks-store-postgres.test.ts): the outbox written in the
 * change's transaction, due deliveries, attempts stored in one round, an
 * endpoint disabled, and the listings with their pages.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ALL_SCOPES, type Scopes } from '../../../core/rest/scopes.js';
import { applyMigrations } from '../../../core/store/migrations.js';
import type { SqlDatabase } from '../../../core/store/sql-database.js';
import { MIGRATIONS, WebhookRepository, type WebhookRecord } from '../../../plugins/webhooks/store.js';
import type { EngineUnderTest } from '../../fixtures/database-engines.js';

const T0 = Date.UTC(2026, 10, 26, 8, 0, 0);

const endpoint = (id: string, events: string[], enabled = true, scopes: Scopes = ALL_SCOPES): WebhookRecord => ({
  id, url: `https://hooks.example.com/${id}`, events, description: `endpoint ${id}`, sealedSecret: `sealed:${id}`, enabled, disabledReason: null, createdBy: 'admin', createdAt: T0, scopes,
});

/** Events about no library or machine, as the cases below write them (the scope rules are tested in scopes.test.ts). */
const about = <T extends { id: string; event: string; body: string }>(messages: T[]) => messages.map((m) => ({ ...m, subject: null }));

export function webhookStoreCases(engine: EngineUnderTest): void {
  describe(`webhooks store on ${engine.name}`, () => {
    const opened: SqlDatabase[] = [];
    afterEach(async () => {
      for (const db of opened.splice(0)) await db.close();
    });

    /** A migrated store with endpoints a (completed), b (completed and failed) and c (disabled, completed). */
    async function store(): Promise<{ db: SqlDatabase; repo: WebhookRepository; database: { open(): Promise<SqlDatabase> } }> {
      const database = await engine.fresh();
      const db = await database.open();
      opened.push(db);
      // The accounts' users table, which the plugin depends on and its second migration reads.
      await db.write((tx) => tx.run('CREATE TABLE accounts_users (username TEXT PRIMARY KEY, scopes TEXT NOT NULL)'));
      await applyMigrations(db, 'webhooks', MIGRATIONS);
      const repo = new WebhookRepository(db);
      await db.write(async (tx) => {
        await repo.insert(tx, endpoint('wh_a', ['deployment.completed']));
        await repo.insert(tx, endpoint('wh_b', ['deployment.completed', 'deployment.failed']));
        await repo.insert(tx, endpoint('wh_c', ['deployment.completed'], false));
      }, { transaction: true });
      return { db, repo, database };
    }

    let ids = 0;
    const nextId = () => `dlv_${String(++ids).padStart(4, '0')}`;

    it('keeps an endpoint as written and lists endpoints a page at a time', async () => {
      const { repo } = await store();
      expect(await repo.get('wh_b')).toEqual(endpoint('wh_b', ['deployment.completed', 'deployment.failed']));
      expect(await repo.get('wh_c')).toMatchObject({ enabled: false });
      expect((await repo.list(2, null, null)).map((w) => w.id)).toEqual(['wh_a', 'wh_b']);
      expect((await repo.list(2, 'wh_b', null)).map((w) => w.id)).toEqual(['wh_c']);
    });

    it('writes events and a delivery for each enabled subscriber in the change\'s transaction, and none when it rolls back', async () => {
      const { db, repo } = await store();
      const made = await db.write((tx) => repo.enqueue(tx, about([
        { id: 'msg_1', event: 'deployment.completed', body: '{"n":1}' },
        { id: 'msg_2', event: 'deployment.failed', body: '{"n":2}' },
        { id: 'msg_3', event: 'program.approved', body: '{"n":3}' },
      ]), nextId, T0, false), { transaction: true });
      expect(made).toBe(3); // msg_1 to a and b, msg_2 to b; c is disabled, nobody takes msg_3
      await expect(db.write(async (tx) => {
        await repo.enqueue(tx, about([{ id: 'msg_4', event: 'deployment.completed', body: '{}' }]), nextId, T0, false);
        throw new Error('the change failed');
      }, { transaction: true })).rejects.toThrow('the change failed');
      const all = await repo.deliveries({}, 50, null);
      expect(all.map((d) => [d.webhookId, d.messageId, d.event, d.status, d.attempts]).sort()).toEqual([
        ['wh_a', 'msg_1', 'deployment.completed', 'pending', 0],
        ['wh_b', 'msg_1', 'deployment.completed', 'pending', 0],
        ['wh_b', 'msg_2', 'deployment.failed', 'pending', 0],
      ]);
    });

    it('answers the due deliveries with what sending needs, and when the next one is due', async () => {
      const { db, repo } = await store();
      await db.write((tx) => repo.enqueue(tx, about([{ id: 'msg_1', event: 'deployment.failed', body: '{"why":"ünïcode ✓ 😀"}' }]), nextId, T0, false), { transaction: true });
      expect(await repo.nextDue()).toBe(T0);
      expect(await repo.due(T0 - 1, 10)).toEqual([]);
      const [due] = await repo.due(T0, 10);
      expect(due).toMatchObject({ webhookId: 'wh_b', url: 'https://hooks.example.com/wh_b', sealedSecret: 'sealed:wh_b', body: '{"why":"ünïcode ✓ 😀"}', messageAt: T0, nextAttemptAt: T0, createdAt: T0 });
    });

    it('claims due deliveries for one instance at a time: two instances claiming at once get each delivery once, due again only when the claim ends', async () => {
      const { db, repo, database } = await store();
      const messages = Array.from({ length: 12 }, (_, i) => ({ id: `msg_${i}`, event: 'deployment.completed', body: `{"n":${i}}` }));
      await db.write((tx) => repo.enqueue(tx, about(messages), nextId, T0, false), { transaction: true });
      // A second instance: its own connections to the same database.
      const other = await database.open();
      opened.push(other);
      const otherRepo = new WebhookRepository(other);
      const [mine, theirs] = await Promise.all([repo.claimDue(T0, 15, 60_000), otherRepo.claimDue(T0, 15, 60_000)]);
      const ids = [...mine, ...theirs].map((d) => d.id);
      expect(ids).toHaveLength(24); // wh_a and wh_b each take the 12 events
      expect(new Set(ids).size).toBe(24);
      expect(mine.length).toBeGreaterThan(0);
      expect(mine[0]).toMatchObject({ url: expect.stringMatching(/^https:\/\/hooks/), body: expect.stringMatching(/^\{"n":/), status: 'pending' });
      expect(await repo.claimDue(T0 + 59_999, 50, 60_000)).toEqual([]);
      expect(await repo.nextDue()).toBe(T0 + 60_000);
      // Nobody stored an outcome (its instance died): due again when the claim ends.
      expect(await otherRepo.claimDue(T0 + 60_000, 50, 60_000)).toHaveLength(24);
    });

    it('stores attempts that arrive together in one round: delivered, failed with its retry time, abandoned', async () => {
      const { db, repo } = await store();
      await db.write((tx) => repo.enqueue(tx, about([
        { id: 'msg_1', event: 'deployment.completed', body: '{}' },
        { id: 'msg_2', event: 'deployment.failed', body: '{}' },
      ]), nextId, T0, false), { transaction: true });
      const due = await repo.due(T0, 10);
      expect(due).toHaveLength(3);
      const [first, second, third] = due as [typeof due[0], typeof due[0], typeof due[0]];
      const at = T0 + 1500;
      await Promise.all([
        repo.recordAttempt(first.id, { status: 'delivered', statusCode: 204, error: null, nextAttemptAt: null, at }),
        repo.recordAttempt(second.id, { status: 'pending', statusCode: 503, error: 'the endpoint answered 503', nextAttemptAt: at + 2 ** 33, at }),
        repo.recordAttempt(third.id, { status: 'abandoned', statusCode: null, error: 'connection refused', nextAttemptAt: null, at }),
      ]);
      const byId = new Map((await repo.deliveries({}, 50, null)).map((d) => [d.id, d]));
      expect(byId.get(first.id)).toMatchObject({ status: 'delivered', attempts: 1, lastStatusCode: 204, lastError: null, deliveredAt: at, nextAttemptAt: null, updatedAt: at });
      expect(byId.get(second.id)).toMatchObject({ status: 'pending', attempts: 1, lastStatusCode: 503, lastError: 'the endpoint answered 503', deliveredAt: null, nextAttemptAt: at + 2 ** 33 });
      expect(byId.get(third.id)).toMatchObject({ status: 'abandoned', attempts: 1, lastStatusCode: null, lastError: 'connection refused', deliveredAt: null });
      expect(await repo.nextDue()).toBe(at + 2 ** 33);
    });

    it('disables an endpoint and abandons its pending deliveries only', async () => {
      const { db, repo } = await store();
      await db.write((tx) => repo.enqueue(tx, about([{ id: 'msg_1', event: 'deployment.completed', body: '{}' }]), nextId, T0, false), { transaction: true });
      await repo.disable('wh_a', 'answered 410 Gone', T0 + 10);
      expect(await repo.get('wh_a')).toMatchObject({ enabled: false, disabledReason: 'answered 410 Gone' });
      const rows = await repo.deliveries({ status: 'abandoned' }, 50, null);
      expect(rows.map((d) => [d.webhookId, d.nextAttemptAt, d.updatedAt])).toEqual([['wh_a', null, T0 + 10]]);
      expect((await repo.due(T0, 10)).map((d) => d.webhookId)).toEqual(['wh_b']);
    });

    it('lists deliveries newest first by filter, a page at a time', async () => {
      const { db, repo } = await store();
      for (let i = 0; i < 5; i++) {
        await db.write((tx) => repo.enqueue(tx, about([{ id: `msg_${i}`, event: i % 2 ? 'deployment.failed' : 'deployment.completed', body: '{}' }]), nextId, T0 + i, false), { transaction: true });
      }
      const failed = await repo.deliveries({ event: 'deployment.failed' }, 50, null);
      expect(failed.map((d) => d.messageId)).toEqual(['msg_3', 'msg_1']);
      const page1 = await repo.deliveries({ webhookId: 'wh_b' }, 3, null);
      const last = page1[2]!;
      const page2 = await repo.deliveries({ webhookId: 'wh_b' }, 3, { createdAt: last.createdAt, id: last.id });
      expect([...page1, ...page2].map((d) => d.messageId)).toEqual(['msg_4', 'msg_3', 'msg_2', 'msg_1', 'msg_0']);
    });

    it('lists only the endpoints and deliveries of the ids a scoped caller sees, the ids bound as one parameter', async () => {
      const { db, repo } = await store();
      await db.write((tx) => repo.insert(tx, endpoint('wh_d', ['deployment.completed'], true, { libraries: ['lib_1'], machineGroups: ['cell-1'] })), { transaction: true });
      expect(await repo.idsWithin({ libraries: ['lib_1', 'lib_2'], machineGroups: ['cell-1'] })).toEqual(['wh_d']);
      expect((await repo.list(10, null, ['wh_b', 'wh_d', 'wh_missing'])).map((w) => w.id)).toEqual(['wh_b', 'wh_d']);
      expect(await repo.list(10, null, [])).toEqual([]);
      await db.write((tx) => repo.enqueue(tx, [{ id: 'msg_1', event: 'deployment.completed', body: '{}', subject: { libraryId: 'lib_1' } }], nextId, T0, false), { transaction: true });
      expect((await repo.deliveries({ webhookIds: ['wh_a', 'wh_d'] }, 50, null)).map((d) => d.webhookId).sort()).toEqual(['wh_a', 'wh_d']);
      expect(await repo.deliveries({ webhookIds: [] }, 50, null)).toEqual([]);
    });
  });
}

/**
 * Webhook endpoints, the outbox of events and one delivery row per endpoint
 * and event. An event and its deliveries are written in the transaction of
 * the change that caused it, so a committed change always has its
 * deliveries, and a rolled-back one has none; an endpoint gets only the
 * events within its scopes (scopes.ts). Portable SQL, the same statements on
 * SQLite and PostgreSQL (docs/databases.md); a list of ids is one JSON
 * parameter read by the dialect's `textsOf`.
 */
import { parseScopes, type Scopes } from '../../core/rest/scopes.js';
import { WriteRounds } from '../../core/store/write-rounds.js';
import { numOrNull } from '../../core/store/row-values.js';
import type { SqlDatabase, WriteTx } from '../../core/store/sql-database.js';
import type { Migration } from '../../core/store/migrations.js';
import { endpointsWithin, machineGroupsFor, receives, type Subject } from './scopes.js';

export const MIGRATIONS: readonly Migration[] = [
  {
    id: 1,
    name: 'webhooks, outbox, deliveries',
    up: [
      `CREATE TABLE webhooks (
         id TEXT PRIMARY KEY,
         url TEXT NOT NULL,
         events TEXT NOT NULL,
         description TEXT NOT NULL,
         sealed_secret TEXT NOT NULL,
         enabled INTEGER NOT NULL,
         disabled_reason TEXT,
         created_by TEXT NOT NULL,
         created_at BIGINT NOT NULL
       )`,
      `CREATE TABLE webhook_messages (
         id TEXT PRIMARY KEY,
         event TEXT NOT NULL,
         body TEXT NOT NULL,
         created_at BIGINT NOT NULL
       )`,
      `CREATE TABLE webhook_deliveries (
         id TEXT PRIMARY KEY,
         webhook_id TEXT NOT NULL REFERENCES webhooks(id),
         message_id TEXT NOT NULL REFERENCES webhook_messages(id),
         status TEXT NOT NULL,
         attempts INTEGER NOT NULL,
         next_attempt_at BIGINT,
         last_status_code INTEGER,
         last_error TEXT,
         delivered_at BIGINT,
         created_at BIGINT NOT NULL,
         updated_at BIGINT NOT NULL
       )`,
      'CREATE INDEX webhook_deliveries_due ON webhook_deliveries(status, next_attempt_at)',
    ],
  },
  {
    id: 2,
    name: 'webhook scopes',
    up: [
      `ALTER TABLE webhooks ADD COLUMN scopes TEXT NOT NULL DEFAULT '{"libraries":"*","machineGroups":"*"}'`,
      // An endpoint made before endpoints had scopes takes those of the user who made it (by name; the accounts'
      // tables exist, the plugin depending on them): a scoped administrator's endpoint stops receiving beyond them.
      // One made by a service token (whose name need not be unique) keeps every library and group.
      'UPDATE webhooks SET scopes = (SELECT u.scopes FROM accounts_users u WHERE u.username = webhooks.created_by) WHERE created_by IN (SELECT username FROM accounts_users)',
    ],
  },
];

export interface WebhookRecord {
  id: string;
  url: string;
  events: string[];
  description: string;
  sealedSecret: string;
  enabled: boolean;
  disabledReason: string | null;
  createdBy: string;
  createdAt: number;
  /** Whose events the endpoint receives: its maker's scopes when it was made. */
  scopes: Scopes;
}

export type DeliveryStatus = 'pending' | 'delivered' | 'failed' | 'abandoned';

export interface DeliveryRecord {
  id: string;
  webhookId: string;
  messageId: string;
  event: string;
  status: DeliveryStatus;
  attempts: number;
  nextAttemptAt: number | null;
  lastStatusCode: number | null;
  lastError: string | null;
  deliveredAt: number | null;
  createdAt: number;
  updatedAt: number;
}

const webhookOf = (r: Record<string, unknown>): WebhookRecord => ({
  id: String(r.id), url: String(r.url), events: JSON.parse(String(r.events)) as string[], description: String(r.description), sealedSecret: String(r.sealed_secret),
  enabled: Number(r.enabled) === 1, disabledReason: r.disabled_reason === null ? null : String(r.disabled_reason), createdBy: String(r.created_by), createdAt: Number(r.created_at),
  scopes: parseScopes(String(r.scopes)),
});
const deliveryOf = (r: Record<string, unknown>): DeliveryRecord => ({
  id: String(r.id), webhookId: String(r.webhook_id), messageId: String(r.message_id), event: String(r.event), status: r.status as DeliveryStatus, attempts: Number(r.attempts),
  nextAttemptAt: numOrNull(r.next_attempt_at), lastStatusCode: numOrNull(r.last_status_code), lastError: r.last_error === null ? null : String(r.last_error), deliveredAt: numOrNull(r.delivered_at),
  createdAt: Number(r.created_at), updatedAt: Number(r.updated_at),
});
const DELIVERY_COLUMNS = 'd.id, d.webhook_id, d.message_id, m.event, d.status, d.attempts, d.next_attempt_at, d.last_status_code, d.last_error, d.delivered_at, d.created_at, d.updated_at';

/** A delivery to attempt, with what sending it needs. */
export type DueDelivery = DeliveryRecord & { url: string; sealedSecret: string; body: string; messageAt: number };

/** What one delivery attempt came to. */
export interface AttemptOutcome {
  status: DeliveryStatus;
  statusCode: number | null;
  error: string | null;
  nextAttemptAt: number | null;
  at: number;
}

/** Rows per multi-row INSERT (well under SQLite's limit of bound values). */
const ROWS_PER_INSERT = 200;
const ATTEMPT_ROW = '(?, ?, CAST(? AS INTEGER), ?, CAST(? AS BIGINT), CAST(? AS BIGINT), CAST(? AS BIGINT))';

export class WebhookRepository {
  constructor(private readonly db: SqlDatabase) {}

  async insert(tx: WriteTx, w: WebhookRecord): Promise<void> {
    await tx.run('INSERT INTO webhooks (id, url, events, description, sealed_secret, enabled, disabled_reason, created_by, created_at, scopes) VALUES (?, ?, ?, ?, ?, ?, NULL, ?, ?, ?)', [
      w.id, w.url, JSON.stringify(w.events), w.description, w.sealedSecret, w.enabled ? 1 : 0, w.createdBy, w.createdAt, JSON.stringify(w.scopes),
    ]);
  }

  async get(id: string): Promise<WebhookRecord | undefined> {
    const r = await this.db.get('SELECT * FROM webhooks WHERE id = ?', [id]);
    return r ? webhookOf(r) : undefined;
  }

  /** Endpoints by id after `afterId`; only those of `ids` when given (a scoped caller's). */
  async list(limit: number, afterId: string | null, ids: readonly string[] | null): Promise<WebhookRecord[]> {
    const only = ids === null ? '' : ` AND id IN (${this.db.dialect.textsOf})`;
    const params = [afterId ?? '', ...(ids === null ? [] : [JSON.stringify(ids)]), limit];
    return (await this.db.all(`SELECT * FROM webhooks WHERE id > ?${only} ORDER BY id LIMIT ?`, params)).map(webhookOf);
  }

  /** The ids of the endpoints whose scopes lie within `own` (endpoints are few: read whole). */
  async idsWithin(own: Scopes): Promise<string[]> {
    const rows = await this.db.all('SELECT id, scopes FROM webhooks');
    return endpointsWithin(rows.map((r) => ({ id: String(r.id), scopes: parseScopes(String(r.scopes)) })), own);
  }

  /**
   * Writes events, and a pending delivery of each for every enabled endpoint
   * that subscribed to it and whose scopes take in the event's subject,
   * inside the caller's transaction: a few statements however many events.
   * `fleet` says whether machine groups exist to be read. Answers the
   * deliveries made.
   */
  async enqueue(tx: WriteTx, messages: readonly { id: string; event: string; body: string; subject: Subject }[], deliveryIds: () => string, now: number, fleet: boolean): Promise<number> {
    if (messages.length === 0) return 0;
    const endpoints = (await tx.all('SELECT * FROM webhooks WHERE enabled = 1')).map(webhookOf);
    const groupsOf = await machineGroupsFor(tx, messages.map((m) => m.subject), endpoints, fleet);
    const wanted = messages
      .map((m) => ({ message: m, to: endpoints.filter((w) => w.events.includes(m.event) && receives(w.scopes, m.subject, groupsOf)) }))
      .filter((m) => m.to.length > 0);
    const deliveries = wanted.flatMap(({ message, to }) => to.map((w) => [deliveryIds(), w.id, message.id, now, now, now]));
    for (let i = 0; i < wanted.length; i += ROWS_PER_INSERT) {
      const part = wanted.slice(i, i + ROWS_PER_INSERT);
      await tx.run(`INSERT INTO webhook_messages (id, event, body, created_at) VALUES ${part.map(() => '(?, ?, ?, ?)').join(', ')}`, part.flatMap(({ message: m }) => [m.id, m.event, m.body, now]));
    }
    for (let i = 0; i < deliveries.length; i += ROWS_PER_INSERT) {
      const part = deliveries.slice(i, i + ROWS_PER_INSERT);
      await tx.run(
        `INSERT INTO webhook_deliveries (id, webhook_id, message_id, status, attempts, next_attempt_at, last_status_code, last_error, delivered_at, created_at, updated_at) VALUES ${part.map(() => "(?, ?, ?, 'pending', 0, ?, NULL, NULL, NULL, ?, ?)").join(', ')}`,
        part.flat(),
      );
    }
    return deliveries.length;
  }

  /** Pending deliveries due at `now`, oldest first, with what sending them needs. */
  async due(now: number, limit: number, reader: Pick<WriteTx, 'all'> = this.db, ids?: readonly string[]): Promise<DueDelivery[]> {
    const rows = await reader.all(
      `SELECT ${DELIVERY_COLUMNS}, w.url, w.sealed_secret, m.body, m.created_at AS message_at FROM webhook_deliveries d
         JOIN webhook_messages m ON m.id = d.message_id JOIN webhooks w ON w.id = d.webhook_id
        WHERE ${ids ? `d.id IN (${this.db.dialect.textsOf})` : "d.status = 'pending' AND d.next_attempt_at <= ? AND w.enabled = 1"} ORDER BY d.next_attempt_at, d.id LIMIT ?`,
      [ids ? JSON.stringify(ids) : now, limit],
    );
    return rows.map((r) => ({ ...deliveryOf(r), url: String(r.url), sealedSecret: String(r.sealed_secret), body: String(r.body), messageAt: Number(r.message_at) }));
  }

  /**
   * Claims the deliveries due at `now` for this instance: their next attempt
   * moves to `now + leaseMs`, in the transaction that selects them (`FOR
   * UPDATE SKIP LOCKED` on PostgreSQL, so another instance's claim skips
   * them). The attempt's outcome sets the next attempt; an instance that dies
   * before recording it leaves the delivery due again when the lease ends
   * (delivered at least once). Answers them as `due` does.
   */
  async claimDue(now: number, limit: number, leaseMs: number): Promise<DueDelivery[]> {
    return this.db.write(async (tx) => {
      // Only the deliveries' rows are locked (not their endpoint's, which every claim reads).
      const claimed = await tx.all<{ id: string }>(
        `SELECT d.id FROM webhook_deliveries d WHERE d.status = 'pending' AND d.next_attempt_at <= ?
           AND EXISTS (SELECT 1 FROM webhooks w WHERE w.id = d.webhook_id AND w.enabled = 1) ORDER BY d.next_attempt_at, d.id LIMIT ?${tx.dialect.claimRows}`,
        [now, limit],
      );
      if (claimed.length === 0) return [];
      const ids = claimed.map((r) => String(r.id));
      const due = await this.due(now, limit, tx, ids);
      await tx.run(`UPDATE webhook_deliveries SET next_attempt_at = ? WHERE id IN (${tx.dialect.textsOf})`, [now + leaseMs, JSON.stringify(ids)]);
      return due;
    }, { transaction: true });
  }

  /** The earliest time a pending delivery is due, or null. */
  async nextDue(): Promise<number | null> {
    const r = await this.db.get<{ t: number | null }>("SELECT MIN(d.next_attempt_at) AS t FROM webhook_deliveries d JOIN webhooks w ON w.id = d.webhook_id WHERE d.status = 'pending' AND w.enabled = 1");
    return numOrNull(r?.t);
  }

  /** Attempt outcomes that arrive together (a batch of deliveries answered at once) are stored in one transaction. */
  private readonly attempts = new WriteRounds<{ id: string; outcome: AttemptOutcome }>(async (jobs) => {
    await this.db.write(async (tx) => {
      for (let i = 0; i < jobs.length; i += ROWS_PER_INSERT) {
        const part = jobs.slice(i, i + ROWS_PER_INSERT);
        await tx.run(
          // A VALUES list fixes no types: PostgreSQL would read every parameter as text.
          `WITH v(id, status, last_status_code, last_error, next_attempt_at, delivered_at, updated_at) AS (VALUES ${part.map(() => ATTEMPT_ROW).join(', ')})
           UPDATE webhook_deliveries SET status = v.status, attempts = attempts + 1, last_status_code = v.last_status_code, last_error = v.last_error,
             next_attempt_at = v.next_attempt_at, delivered_at = v.delivered_at, updated_at = v.updated_at
           FROM v WHERE webhook_deliveries.id = v.id`,
          part.flatMap(({ item: { id, outcome: o } }) => [id, o.status, o.statusCode, o.error, o.nextAttemptAt, o.status === 'delivered' ? o.at : null, o.at]),
        );
      }
    }, { transaction: true });
    for (const job of jobs) job.resolve();
  });

  /** Records an attempt's outcome. */
  recordAttempt(id: string, outcome: AttemptOutcome): Promise<void> {
    return this.attempts.add({ id, outcome });
  }

  /** Disables an endpoint (it answered 410 Gone) and abandons its pending deliveries. */
  disable(id: string, reason: string, at: number): Promise<unknown> {
    return this.db.write(async (tx) => {
      await tx.run('UPDATE webhooks SET enabled = 0, disabled_reason = ? WHERE id = ?', [reason, id]);
      await tx.run("UPDATE webhook_deliveries SET status = 'abandoned', next_attempt_at = NULL, updated_at = ? WHERE webhook_id = ? AND status = 'pending'", [at, id]);
    }, { transaction: true });
  }

  /** Deliveries, newest first; `webhookIds` limits them to those endpoints (a scoped caller's). */
  async deliveries(filter: { webhookId?: string; status?: string; event?: string; webhookIds?: readonly string[] }, limit: number, before: { createdAt: number; id: string } | null): Promise<DeliveryRecord[]> {
    const where: string[] = [];
    const params: (string | number)[] = [];
    const within = filter.webhookIds === undefined ? undefined : JSON.stringify(filter.webhookIds);
    for (const [condition, value] of [
      ['d.webhook_id = ?', filter.webhookId], [`d.webhook_id IN (${this.db.dialect.textsOf})`, within], ['d.status = ?', filter.status], ['m.event = ?', filter.event],
    ] as const) {
      if (value === undefined) continue;
      where.push(condition);
      params.push(value);
    }
    if (before) {
      where.push('(d.created_at < ? OR (d.created_at = ? AND d.id < ?))');
      params.push(before.createdAt, before.createdAt, before.id);
    }
    const rows = await this.db.all(
      `SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries d JOIN webhook_messages m ON m.id = d.message_id${where.length ? ` WHERE ${where.join(' AND ')}` : ''} ORDER BY d.created_at DESC, d.id DESC LIMIT ?`,
      [...params, limit],
    );
    return rows.map(deliveryOf);
  }
}

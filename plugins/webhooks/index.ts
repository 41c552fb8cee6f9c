/**
 * Webhooks (Standard Webhooks): endpoints managed through /admin/webhooks
 * with a `whsec_` secret shown once and kept sealed; events written to an
 * outbox in the transaction of the change; at-least-once delivery with
 * `webhook-id`, `webhook-timestamp` and `webhook-signature` (v1, HMAC-SHA256
 * over `id.timestamp.body`), retried on a schedule with jitter; 410 disables
 * the endpoint; deliveries survive a restart; targets limited to public
 * addresses unless the plant allows its private networks (targets.ts); an
 * endpoint carries its maker's scopes and gets only the events within them
 * (scopes.ts). docs/programs-webhooks.md.
 */
import { createHmac, randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import { z } from 'zod';
import { definePlugin } from '../../core/runtime/plugin-host.js';
import { defineOperation, type AnyRestOperation, type RestPrincipal } from '../../core/rest/operation.js';
import { decodeCursor, pageAfter, pageOf, pageQueryShape } from '../../core/rest/paging.js';
import { ProblemError } from '../../core/rest/problem.js';
import { iso, isoOrNull } from '../../core/rest/fields.js';
import { newId } from '../../core/rest/ids.js';
import { auditActor, principalOf } from '../../core/rest/principal.js';
import { isUnscoped, scopesOf, type Scopes } from '../../core/rest/scopes.js';
import type { ProgramsContext } from '../../core/roles/programs/context.js';
import { WEBHOOKS_FIELDS, WEBHOOKS_PART, type ProgramsWebhookSettings } from './config.js';
import { CredentialBox, type SealedCredential } from '../../core/store/credential-box.js';
import type { WriteTx } from '../../core/store/database.js';
import { Poster, PostError } from './post.js';
import { MIGRATIONS, WebhookRepository, type DeliveryRecord, type WebhookRecord } from './store.js';
import { WEBHOOK_EVENTS, type WebhookEvent } from './events.js';
import { subjectOf } from './scopes.js';
import { SCHEMES_ACCEPTED, targetRefusal } from './targets.js';
import { registerWebhookMetrics } from './metrics.js';


/** Delays after the 1st, 2nd, … failed attempt; after the last, the delivery is `failed`. */
export const DEFAULT_RETRY_DELAYS_MS = [5_000, 30_000, 120_000, 600_000, 1_800_000, 3_600_000, 7_200_000, 14_400_000];
const REQUEST_TIMEOUT_MS = 10_000;
const POLL_MS = 1_000;
const BATCH = 20;
/**
 * How long a claimed delivery is this instance's: longer than an attempt
 * (REQUEST_TIMEOUT_MS) and the storing of its outcome. Another instance
 * attempts it again only when this one died before storing the outcome.
 */
const CLAIM_MS = 60_000;

/** What other plugins use to raise an event, inside their own transaction. */
export interface WebhookOutbox {
  enqueue(tx: WriteTx, event: WebhookEvent, data: Record<string, unknown>): Promise<void>;
  /** Raises several events at once, in order (a few statements however many). */
  enqueueMany(tx: WriteTx, events: readonly { event: WebhookEvent; data: Record<string, unknown> }[]): Promise<void>;
  /** Asks the sender to look for due deliveries now (call after the transaction committed). */
  kick(): void;
}

/** Which endpoints a caller sees: the audit shows a scoped caller the records of these only. */
export interface WebhookEndpoints {
  /** The ids of the endpoints whose scopes lie within `own`. */
  idsWithin(own: Scopes): Promise<string[]>;
}

declare module '../../core/roles/programs/context.js' {
  interface ProgramsServices {
    'webhooks.outbox': WebhookOutbox;
    'webhooks.endpoints': WebhookEndpoints;
  }
}

const webhookView = z.object({
  id: z.string(), url: z.string(), events: z.array(z.enum(WEBHOOK_EVENTS)), description: z.string(), enabled: z.boolean(), disabledReason: z.string().nullable(),
  createdBy: z.string(), createdAt: z.string(),
  scopes: z.object({ libraries: z.union([z.literal('*'), z.array(z.string())]), machineGroups: z.union([z.literal('*'), z.array(z.string())]) })
    .describe('The libraries and machine groups whose events the endpoint receives: its maker\'s scopes when it was made.'),
});
const deliveryView = z.object({
  id: z.string(), webhookId: z.string(), messageId: z.string().describe('The webhook-id header: the same for every attempt and endpoint of one event.'), event: z.string(),
  status: z.enum(['pending', 'delivered', 'failed', 'abandoned']), attempts: z.number().int(), nextAttemptAt: z.string().nullable(),
  lastStatusCode: z.number().int().nullable(), lastError: z.string().nullable(), deliveredAt: z.string().nullable(), createdAt: z.string(), updatedAt: z.string(),
});
const webhookOut = (w: WebhookRecord): z.infer<typeof webhookView> => ({
  id: w.id, url: w.url, events: w.events as WebhookEvent[], description: w.description, enabled: w.enabled, disabledReason: w.disabledReason, createdBy: w.createdBy, createdAt: iso(w.createdAt),
  scopes: { libraries: w.scopes.libraries === '*' ? '*' : [...w.scopes.libraries], machineGroups: w.scopes.machineGroups === '*' ? '*' : [...w.scopes.machineGroups] },
});
const deliveryOut = (d: DeliveryRecord): z.infer<typeof deliveryView> => ({
  id: d.id, webhookId: d.webhookId, messageId: d.messageId, event: d.event, status: d.status, attempts: d.attempts, nextAttemptAt: isoOrNull(d.nextAttemptAt),
  lastStatusCode: d.lastStatusCode, lastError: d.lastError, deliveredAt: isoOrNull(d.deliveredAt), createdAt: iso(d.createdAt), updatedAt: iso(d.updatedAt),
});
/** The endpoints a caller sees: every one for a caller of every library and group (null: no limit), else those within its scopes. */
const visibleTo = async (repo: WebhookRepository, p: RestPrincipal | null): Promise<string[] | null> => {
  const scopes = scopesOf(principalOf(p));
  return isUnscoped(scopes) ? null : repo.idsWithin(scopes);
};

/** The Standard Webhooks signature of one attempt: `v1,<base64 HMAC-SHA256(key, id.timestamp.body)>`, the key being the secret after `whsec_`. */
export function sign(secret: string, id: string, timestampSec: number, body: string): string {
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  return `v1,${createHmac('sha256', key).update(`${id}.${timestampSec}.${body}`).digest('base64')}`;
}

class Sender {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;
  private readonly poster: Poster;

  constructor(
    private readonly ctx: ProgramsContext,
    private readonly repo: WebhookRepository,
    private readonly box: CredentialBox,
    private readonly retryDelaysMs: readonly number[],
    private readonly logger: Logger,
    settings: ProgramsWebhookSettings,
  ) {
    this.poster = new Poster(settings.allowPrivateNetworks);
  }

  start(): void {
    this.schedule(0);
  }

  kick(): void {
    if (!this.stopped) this.schedule(0);
  }

  private schedule(ms: number): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.pass(), ms);
    this.timer.unref();
  }

  private async pass(): Promise<void> {
    if (this.running || this.stopped) return;
    this.running = (async () => {
      try {
        for (;;) {
          const due = await this.repo.claimDue(this.ctx.now(), BATCH, CLAIM_MS);
          if (due.length === 0 || this.stopped) break;
          await Promise.all(due.map((d) => this.attempt(d)));
        }
      } catch (err) {
        this.logger.warn({ err: (err as Error).message }, 'webhook pass failed');
      }
    })();
    await this.running;
    this.running = undefined;
    if (this.stopped) return;
    const next = await this.repo.nextDue().catch(() => null);
    this.schedule(next === null ? POLL_MS * 10 : Math.max(0, Math.min(next - this.ctx.now(), POLL_MS * 10)));
  }

  /** Signing secrets opened once per endpoint (and again if its sealed form changes). */
  private readonly secrets = new Map<string, { sealed: string; secret: string }>();

  private secretOf(webhookId: string, sealed: string): string {
    const known = this.secrets.get(webhookId);
    if (known?.sealed === sealed) return known.secret;
    const secret = this.box.open(`webhook:${webhookId}`, 'secret', JSON.parse(sealed) as SealedCredential);
    this.secrets.set(webhookId, { sealed, secret });
    return secret;
  }

  private async attempt(d: Awaited<ReturnType<WebhookRepository['due']>>[number]): Promise<void> {
    const now = this.ctx.now();
    const timestamp = Math.floor(now / 1000);
    let statusCode: number | null = null;
    let error: string | null = null;
    try {
      const secret = this.secretOf(d.webhookId, d.sealedSecret);
      statusCode = await this.poster.post(
        d.url,
        { 'content-type': 'application/json', 'webhook-id': d.messageId, 'webhook-timestamp': String(timestamp), 'webhook-signature': sign(secret, d.messageId, timestamp, d.body), 'user-agent': 'program-version-service' },
        d.body,
        REQUEST_TIMEOUT_MS,
      );
    } catch (err) {
      const e = err as PostError;
      const said = e.code === 'TIMEOUT' ? `no answer within ${REQUEST_TIMEOUT_MS} ms` : e.code === 'TARGET_REFUSED' ? e.message : e instanceof PostError && e.code !== 'ERROR' ? e.code : String(e.message);
      error = said.slice(0, 300);
    }
    const at = this.ctx.now();
    if (statusCode !== null && statusCode >= 200 && statusCode < 300) {
      await this.repo.recordAttempt(d.id, { status: 'delivered', statusCode, error: null, nextAttemptAt: null, at });
      return;
    }
    if (statusCode === 410) {
      await this.repo.recordAttempt(d.id, { status: 'abandoned', statusCode, error: 'the endpoint answered 410 Gone: it is disabled', nextAttemptAt: null, at });
      await this.repo.disable(d.webhookId, `answered 410 Gone at ${iso(at)}`, at);
      return;
    }
    const delay = this.retryDelaysMs[d.attempts];
    const failedFor = error ?? `HTTP ${statusCode}`;
    await this.repo.recordAttempt(d.id, {
      status: delay === undefined ? 'failed' : 'pending', statusCode, error: failedFor,
      nextAttemptAt: delay === undefined ? null : at + Math.round(delay * (0.8 + Math.random() * 0.4)), at,
    });
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.running;
    this.poster.close();
  }
}

function operations(ctx: ProgramsContext, repo: WebhookRepository, box: CredentialBox, settings: ProgramsWebhookSettings): AnyRestOperation[] {
  const ops = [
    defineOperation({
      operationId: 'createWebhook', method: 'POST', path: '/admin/webhooks', summary: 'Add a webhook endpoint; its signing secret is shown once', tags: ['admin'], permission: 'webhooks.manage',
      body: z.object({
        url: z.string().max(2048).regex(/^https?:\/\/[^\s]+$/, SCHEMES_ACCEPTED).refine((url) => targetRefusal(url, true)?.scheme !== true, SCHEMES_ACCEPTED)
          .describe('Where events are POSTed. A literal IP address must be public unless programs.webhooks.allowPrivateNetworks is set; a host name is judged by what it resolves to at each delivery.'),
        events: z.array(z.enum(WEBHOOK_EVENTS)).min(1).max(WEBHOOK_EVENTS.length),
        description: z.string().max(500).default(''),
      }).strict(),
      responses: { 201: { description: 'Created. `secret` (whsec_…) is shown only in this answer; verify signatures with it.', schema: webhookView.extend({ secret: z.string() }) } },
      handler: async ({ body }, { principal }) => {
        const p = principalOf(principal);
        const refused = targetRefusal(body.url, settings.allowPrivateNetworks);
        if (refused) {
          throw new ProblemError(refused.scheme ? 'invalid-request' : 'unacceptable', `url: ${refused.reason}`, {
            errors: [{ field: 'body.url', message: refused.reason, accepted: refused.scheme ? SCHEMES_ACCEPTED : 'a host name, or a public IP address' }],
          });
        }
        const id = newId('whk');
        const secret = `whsec_${randomBytes(24).toString('base64')}`;
        const record: WebhookRecord = {
          id, url: body.url, events: [...new Set(body.events)], description: body.description, sealedSecret: JSON.stringify(box.seal(`webhook:${id}`, 'secret', secret)),
          enabled: true, disabledReason: null, createdBy: p.name, createdAt: ctx.now(), scopes: scopesOf(p),
        };
        await ctx.db.write(async (tx) => {
          await repo.insert(tx, record);
          await ctx.audit.append(tx, { ...auditActor(p), category: 'admin', action: 'webhook.create', entityType: 'webhook', entityId: id, details: { url: record.url, events: record.events } });
        }, { transaction: true });
        return { status: 201, body: { ...webhookOut(record), secret }, headers: { location: `/api/v1/admin/webhooks/${id}` } };
      },
    }),
    defineOperation({
      operationId: 'listWebhooks', method: 'GET', path: '/admin/webhooks', summary: 'Webhook endpoints whose scopes lie within yours (never their secrets)', tags: ['admin'], permission: 'webhooks.manage',
      query: z.object({ ...pageQueryShape }),
      responses: { 200: { description: 'A page of endpoints, by id.', schema: pageOf(webhookView) } },
      handler: async ({ query }, { principal }) => {
        const after = query.cursor ? String(decodeCursor(query.cursor, { id: 'string' }).id) : null;
        const rows = await repo.list(query.limit + 1, after, await visibleTo(repo, principal));
        const page = pageAfter(rows, query.limit, (last) => ({ id: last.id }));
        return { status: 200, body: { items: page.items.map(webhookOut), nextCursor: page.nextCursor } };
      },
    }),
    defineOperation({
      operationId: 'listWebhookDeliveries', method: 'GET', path: '/admin/webhooks/deliveries', summary: 'Delivery history of the endpoints you see, newest first', tags: ['admin'], permission: 'webhooks.manage',
      query: z.object({
        ...pageQueryShape, webhookId: z.string().regex(/^whk_[0-9a-f]{16}$/, 'a webhook id').optional(),
        status: z.enum(['pending', 'delivered', 'failed', 'abandoned']).optional(), event: z.enum(WEBHOOK_EVENTS).optional(),
      }),
      responses: { 200: { description: 'A page of deliveries.', schema: pageOf(deliveryView) } },
      handler: async ({ query }, { principal }) => {
        const cursor = query.cursor ? decodeCursor(query.cursor, { createdAt: 'number', id: 'string' }) : null;
        const within = await visibleTo(repo, principal);
        const rows = await repo.deliveries(
          {
            ...(query.webhookId ? { webhookId: query.webhookId } : {}), ...(query.status ? { status: query.status } : {}), ...(query.event ? { event: query.event } : {}),
            ...(within ? { webhookIds: within } : {}),
          },
          query.limit + 1, cursor ? { createdAt: Number(cursor.createdAt), id: String(cursor.id) } : null,
        );
        const page = pageAfter(rows, query.limit, (last) => ({ createdAt: last.createdAt, id: last.id }));
        return { status: 200, body: { items: page.items.map(deliveryOut), nextCursor: page.nextCursor } };
      },
    }),
  ];
  return ops as AnyRestOperation[];
}

export function createWebhooksPlugin(options: { retryDelaysMs?: readonly number[] } = {}) {
  return definePlugin<ProgramsContext, typeof WEBHOOKS_FIELDS>({
    name: 'webhooks',
    // The endpoints of an earlier version take their makers' scopes from the accounts' users (migration 2).
    dependsOn: ['accounts'],
    migrations: MIGRATIONS,
    config: WEBHOOKS_PART,
    register(ctx) {
      const repo = new WebhookRepository(ctx.db);
      registerWebhookMetrics(ctx.metrics, ctx.db, ctx.now);
      const box = CredentialBox.open(ctx.dataDir);
      const sender = new Sender(ctx, repo, box, options.retryDelaysMs ?? DEFAULT_RETRY_DELAYS_MS, ctx.logger, ctx.settings.webhooks);
      for (const op of operations(ctx, repo, box, ctx.settings.webhooks)) ctx.rest.define(op);
      const enqueueMany = async (tx: WriteTx, events: readonly { event: WebhookEvent; data: Record<string, unknown> }[]) => {
        const now = ctx.now();
        const messages = events.map(({ event, data }) => ({ id: newId('msg'), event, body: JSON.stringify({ type: event, timestamp: iso(now), data }), subject: subjectOf(event, data) }));
        await repo.enqueue(tx, messages, () => newId('dlv'), now, ctx.services.find('gateway-machines') !== undefined);
      };
      ctx.services.provide('webhooks.outbox', {
        async enqueue(tx, event, data) {
          await enqueueMany(tx, [{ event, data }]);
        },
        enqueueMany,
        kick: () => sender.kick(),
      });
      ctx.services.provide('webhooks.endpoints', { idsWithin: (own) => repo.idsWithin(own) });
      // Deliveries left pending by an earlier run go out now.
      sender.start();
      return { stop: () => sender.stop() };
    },
  });
}

export const webhooksPlugin = createWebhooksPlugin();

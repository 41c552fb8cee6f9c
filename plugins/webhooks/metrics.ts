/**
 * The webhooks' metrics, read from their tables at scrape time:
 *
 * - `programs_webhook_outbox_deliveries`: deliveries not yet made (pending,
 *   to enabled and disabled webhooks alike);
 * - `programs_webhook_deliveries{outcome}`: deliveries kept, by status
 *   (`pending`, `delivered`, `failed`, `abandoned`);
 * - `programs_webhook_delivery_latency_seconds` (histogram): from a
 *   message's delivery being queued to its receiver's accepting answer, for
 *   each delivery made since the service started.
 */
import type { RoleMetrics } from '../../core/telemetry/metrics.js';
import type { SqlDatabase } from '../../core/store/sql-database.js';

const LATENCY_BUCKETS = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 3600];

export function registerWebhookMetrics(metrics: RoleMetrics, db: SqlDatabase, now: () => number): void {
  metrics.gauge({
    name: 'programs_webhook_outbox_deliveries', help: 'Webhook deliveries waiting to be made.',
    async collect() {
      const row = await db.get<{ n: number }>("SELECT COUNT(*) AS n FROM webhook_deliveries WHERE status = 'pending'");
      this.set(Number(row?.n ?? 0));
    },
  });
  metrics.gauge({
    name: 'programs_webhook_deliveries', help: 'Webhook deliveries kept, by outcome.', labelNames: ['outcome'],
    async collect() {
      const rows = await db.all<{ status: string; n: number }>('SELECT status, COUNT(*) AS n FROM webhook_deliveries GROUP BY status');
      this.reset();
      for (const outcome of ['pending', 'delivered', 'failed', 'abandoned']) this.set({ outcome }, 0);
      for (const r of rows) this.set({ outcome: String(r.status) }, Number(r.n));
    },
  });
  let seenUntil = now();
  metrics.histogram({
    name: 'programs_webhook_delivery_latency_seconds', help: 'Time from a delivery being queued to its receiver accepting it.', buckets: LATENCY_BUCKETS,
    async collect() {
      const rows = await db.all<{ created_at: number; delivered_at: number }>("SELECT created_at, delivered_at FROM webhook_deliveries WHERE status = 'delivered' AND delivered_at > ? ORDER BY delivered_at", [seenUntil]);
      for (const r of rows) {
        this.observe(Math.max(0, Number(r.delivered_at) - Number(r.created_at)) / 1000);
        seenUntil = Math.max(seenUntil, Number(r.delivered_at));
      }
    },
  });
}

/** The audit's metrics, read at scrape time: `programs_audit_records`, the records in the chain (its head's sequence number, not a count over the table). */
import type { RoleMetrics } from '../../core/telemetry/metrics.js';
import type { SqlDatabase } from '../../core/store/sql-database.js';

export function registerAuditMetrics(metrics: RoleMetrics, db: SqlDatabase): void {
  metrics.gauge({
    name: 'programs_audit_records', help: 'Records in the audit chain.',
    async collect() {
      const row = await db.get<{ seq: number }>('SELECT seq FROM audit_head WHERE id = 1');
      this.set(Number(row?.seq ?? 0));
    },
  });
}

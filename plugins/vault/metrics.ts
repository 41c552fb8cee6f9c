/** The vault's metrics, read at scrape time: `programs_approvals_pending`, versions waiting for approvers. */
import type { RoleMetrics } from '../../core/telemetry/metrics.js';
import type { SqlDatabase } from '../../core/store/sql-database.js';

export function registerVaultMetrics(metrics: RoleMetrics, db: SqlDatabase): void {
  metrics.gauge({
    name: 'programs_approvals_pending', help: 'Approval requests waiting for a decision.',
    async collect() {
      const row = await db.get<{ n: number }>("SELECT COUNT(*) AS n FROM vault_approvals WHERE state = 'pending'");
      this.set(Number(row?.n ?? 0));
    },
  });
}

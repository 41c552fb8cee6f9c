/** The mirror's metrics, read at scrape time: `programs_drift_open`, files on machines that differ from what was released and are not yet decided. */
import type { RoleMetrics } from '../../core/telemetry/metrics.js';
import type { SqlDatabase } from '../../core/store/sql-database.js';

export function registerMirrorMetrics(metrics: RoleMetrics, db: SqlDatabase): void {
  metrics.gauge({
    name: 'programs_drift_open', help: 'Open drift: files on machines that differ from their release, not yet decided.',
    async collect() {
      const row = await db.get<{ n: number }>("SELECT COUNT(*) AS n FROM mirror_drift WHERE status = 'open'");
      this.set(Number(row?.n ?? 0));
    },
  });
}

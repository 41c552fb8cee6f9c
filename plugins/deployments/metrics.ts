/**
 * The program service's deployment metrics, read from the deployments'
 * tables and the runner at scrape time (nothing is counted on the
 * deployments' own path):
 *
 * - `programs_deployments{status,purpose}`: deployments by status and purpose;
 * - `programs_deployments_waiting_for_slot`: transfers waiting for one of
 *   their gateway's transfer slots now;
 * - `programs_trials_active`: trials deploying, running or pulling back;
 * - `programs_deployment_transfer_seconds` and
 *   `programs_deployment_verification_seconds` (histograms): from each
 *   deployment finished since the service started, the time from
 *   Transferring to Verifying and from Verifying to what followed, read from
 *   its timeline.
 */
import type { RoleMetrics } from '../../core/telemetry/metrics.js';
import type { SqlDatabase } from '../../core/store/sql-database.js';
import type { TimelineEntry } from './records.js';

const DURATION_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 900];

/** The seconds between each `from` entry of a timeline and the entry after it. */
export function phaseSeconds(timeline: readonly TimelineEntry[], from: TimelineEntry['status']): number[] {
  const out: number[] = [];
  timeline.forEach((entry, i) => {
    const next = timeline[i + 1];
    if (entry.status === from && next) out.push(Math.max(0, next.at - entry.at) / 1000);
  });
  return out;
}

export function registerDeploymentMetrics(metrics: RoleMetrics, db: SqlDatabase, waitingForSlot: (deploymentId: string) => boolean, now: () => number): void {
  metrics.gauge({
    name: 'programs_deployments', help: 'Deployments by status and purpose.', labelNames: ['status', 'purpose'],
    async collect() {
      const rows = await db.all<{ status: string; purpose: string; n: number }>('SELECT status, purpose, COUNT(*) AS n FROM deploy_deployments GROUP BY status, purpose');
      this.reset();
      for (const r of rows) this.set({ status: r.status, purpose: r.purpose }, Number(r.n));
    },
  });
  metrics.gauge({
    name: 'programs_deployments_waiting_for_slot', help: 'Deployments whose transfer waits for one of its gateway\'s transfer slots.',
    async collect() {
      const rows = await db.all<{ id: string }>("SELECT id FROM deploy_deployments WHERE status = 'Transferring'");
      this.set(rows.filter((r) => waitingForSlot(String(r.id))).length);
    },
  });
  metrics.gauge({
    name: 'programs_trials_active', help: 'Trials deploying, running or pulling back.',
    async collect() {
      const row = await db.get<{ n: number }>("SELECT COUNT(*) AS n FROM deploy_trials WHERE status IN ('Deploying', 'Active', 'PullingBack')");
      this.set(Number(row?.n ?? 0));
    },
  });
  // Deployments finished after this moment are observed once each, at the first scrape after they finish.
  let seenUntil = now();
  const transfer = metrics.histogram({ name: 'programs_deployment_transfer_seconds', help: 'Time from a deployment\'s Transferring to its Verifying, per transfer.', buckets: DURATION_BUCKETS, collect: () => refresh() });
  const verification = metrics.histogram({ name: 'programs_deployment_verification_seconds', help: 'Time a deployment spent Verifying (the read-back), per verification.', buckets: DURATION_BUCKETS, collect: () => refresh() });
  const observeFinished = async () => {
    const rows = await db.all<{ timeline: string; finished_at: number }>('SELECT timeline, finished_at FROM deploy_deployments WHERE finished_at > ? ORDER BY finished_at', [seenUntil]);
    for (const r of rows) {
      const timeline = JSON.parse(String(r.timeline)) as TimelineEntry[];
      for (const s of phaseSeconds(timeline, 'Transferring')) transfer.observe(s);
      for (const s of phaseSeconds(timeline, 'Verifying')) verification.observe(s);
      seenUntil = Math.max(seenUntil, Number(r.finished_at));
    }
  };
  // Both histograms collect at once (the registry asks every metric together): one read serves them.
  let reading: Promise<void> | undefined;
  const refresh = (): Promise<void> => (reading ??= observeFinished().finally(() => (reading = undefined)));
}

/**
 * The northbound targets on the gateway's /metrics, by target name (a
 * name comes from the configuration, so series are bounded): read from the
 * targets' status at scrape time, one status read per scrape, except the
 * publish lag, observed as each live row is acknowledged.
 *
 * - `gateway_northbound_connected{target}`: 1 while connected
 * - `gateway_northbound_cursor{target}`: the acknowledged history sequence number
 * - `gateway_northbound_backlog_rows{target}`, `gateway_northbound_backlog_seconds{target}`: what is still to publish and the age of its oldest row
 * - `gateway_northbound_lost_rows{target}`, `gateway_northbound_oversize_rows{target}`: rows retention removed first, rows too large for the broker (over the target's life)
 * - `gateway_northbound_in_flight{target}`: messages not yet acknowledged
 * - `gateway_northbound_published_messages_total{target}`: messages acknowledged since the start
 * - `gateway_northbound_publish_lag_seconds{target}`: a live row's time to the broker's acknowledgement (histogram)
 */
import type { RoleMetrics } from '../../core/telemetry/metrics.js';
import type { NorthboundStatus, NorthboundTargetStatus } from '../../core/roles/gateway/northbound-status.js';

/** Lag buckets: 10 ms to 2 min. */
const LAG_BUCKETS = [0.01, 0.025, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1, 1.25, 1.5, 2, 3, 5, 10, 30, 60, 120];

type Figure = (t: NorthboundTargetStatus) => number;

const GAUGES: readonly [name: string, help: string, figure: Figure][] = [
  ['gateway_northbound_connected', 'Northbound targets connected to their broker (1) or not (0).', (t) => (t.state === 'connected' ? 1 : 0)],
  ['gateway_northbound_cursor', 'The history sequence number through which the broker acknowledged every row, by target.', (t) => t.cursor],
  ['gateway_northbound_backlog_rows', 'Committed history rows a target has still to publish (by sequence number).', (t) => t.backlogRows],
  ['gateway_northbound_backlog_seconds', 'Age of the oldest history row a target has still to publish.', (t) => t.backlogSeconds],
  ['gateway_northbound_lost_rows', 'Rows a target could not publish because retention removed them first, over the target\'s life.', (t) => t.lostRows],
  ['gateway_northbound_oversize_rows', 'Messages a target skipped as larger than its broker\'s maximum packet size, over the target\'s life.', (t) => t.oversizeRows],
  ['gateway_northbound_in_flight', 'Messages a target handed to its broker and not yet acknowledged.', (t) => t.inFlight],
];

/** Registers the gauges (reading `statuses` once per scrape) and answers the lag observer of a target. */
export function northboundMetrics(metrics: RoleMetrics, statuses: () => Promise<NorthboundStatus>): (target: string) => (seconds: number) => void {
  let scrape: Promise<NorthboundStatus> | undefined;
  // Every gauge's collect of one scrape shares one status read; the next scrape reads again.
  const once = () => {
    scrape ??= statuses().finally(() => setTimeout(() => (scrape = undefined), 100).unref());
    return scrape;
  };
  for (const [name, help, figure] of GAUGES) {
    metrics.gauge({
      name,
      help,
      labelNames: ['target'],
      async collect() {
        this.reset();
        for (const t of (await once()).targets) this.set({ target: t.name }, figure(t));
      },
    });
  }
  metrics.counter({
    name: 'gateway_northbound_published_messages_total',
    help: 'Messages a target\'s broker acknowledged since the gateway started.',
    labelNames: ['target'],
    async collect() {
      this.reset();
      for (const t of (await once()).targets) this.inc({ target: t.name }, t.published);
    },
  });
  const lag = metrics.histogram({ name: 'gateway_northbound_publish_lag_seconds', help: 'Time from a live history row\'s time to its broker\'s acknowledgement, by target.', labelNames: ['target'], buckets: LAG_BUCKETS });
  return (target) => (seconds) => lag.observe({ target }, seconds);
}

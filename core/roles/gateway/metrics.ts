/**
 * The gateway's own metrics on its role's registry (docs/operations.md,
 * "Metrics"). What the fleet and the history writer already count is read
 * at scrape time (`collect`); only what has no count of its own is observed
 * as it happens: each sample's lag (one histogram observation a sample) and
 * each history flush's duration.
 *
 * - `gateway_machines{state}`: machines by derived state (running, idle, …);
 * - `gateway_machine_connections{state}`: machines by connection health;
 * - `gateway_machine_driver_errors{protocol,cause}`: machines whose driver
 *   reports an error now, by driver scheme and error name;
 * - `gateway_samples_total{task}` and `gateway_sample_lag_seconds{task}`
 *   (histogram): samples taken, and how late each was against its schedule;
 * - `gateway_history_queue_rows`: rows waiting for or in a flush;
 * - `gateway_history_rows_written_total`, `gateway_history_flush_seconds`
 *   (histogram): rows committed, and each flush's write time.
 */
import type { RoleMetrics } from '../../telemetry/metrics.js';
import { CONNECTION_STATES, DERIVED_STATES } from './fleet/derive-state.js';
import type { Fleet } from './fleet/fleet.js';
import type { HistoryWriterStats } from './history/writer.js';
import type { MachineTaskClass } from './machine-config.js';

/** Sample lag: 1 ms to 30 s. */
const LAG_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
/** A flush's write: 1 ms to 10 s. */
const FLUSH_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10];

export interface GatewayMetrics {
  /** Counts a sample and observes its lag; passes it on to `next` (a benchmark's own observer). */
  sampleObserver(next?: (task: MachineTaskClass, lagMs: number) => void): (task: MachineTaskClass, lagMs: number) => void;
  /** Observes one committed flush. */
  observeFlush(seconds: number): void;
  /** Reads the fleet's and the writer's counts at each scrape from now on. */
  collectFrom(sources: { fleet: Fleet; history: { stats: HistoryWriterStats } }): void;
}

export function gatewayMetrics(metrics: RoleMetrics): GatewayMetrics {
  const samples = metrics.counter({ name: 'gateway_samples_total', help: 'Samples taken from the machines, by task class.', labelNames: ['task'] });
  const lag = metrics.histogram({ name: 'gateway_sample_lag_seconds', help: 'How late a sample was taken against its schedule, by task class.', labelNames: ['task'], buckets: LAG_BUCKETS });
  const flushes = metrics.histogram({ name: 'gateway_history_flush_seconds', help: 'Time to commit one batch of history rows.', buckets: FLUSH_BUCKETS });
  let sources: { fleet: Fleet; history: { stats: HistoryWriterStats } } | undefined;

  /** A gauge of machines by one state of their snapshot, every known state present (0 when none). */
  const machinesBy = (name: string, help: string, states: readonly string[], stateOf: (snapshot: ReturnType<Fleet['snapshot']>) => string) =>
    metrics.gauge({
      name, help, labelNames: ['state'],
      collect() {
        this.reset();
        if (!sources) return;
        const counts = new Map<string, number>(states.map((s) => [s, 0]));
        for (const id of sources.fleet.ids()) {
          const state = stateOf(sources.fleet.snapshot(id));
          counts.set(state, (counts.get(state) ?? 0) + 1);
        }
        for (const [state, n] of counts) this.set({ state }, n);
      },
    });
  machinesBy('gateway_machines', 'Machines by derived state.', DERIVED_STATES, (s) => s.derived.state);
  machinesBy('gateway_machine_connections', 'Machines by the health of their driver\'s connection.', CONNECTION_STATES, (s) => s.connection.state);
  metrics.gauge({
    name: 'gateway_machine_driver_errors', help: 'Machines whose driver reports an error now, by driver scheme and error name.', labelNames: ['protocol', 'cause'],
    collect() {
      this.reset();
      if (!sources) return;
      for (const id of sources.fleet.ids()) {
        const { config, connection } = sources.fleet.snapshot(id);
        if (connection.error) this.inc({ protocol: config.driver, cause: connection.error.errorName });
      }
    },
  });
  metrics.gauge({
    name: 'gateway_history_queue_rows', help: 'History rows waiting for a flush or in one.',
    collect() {
      this.set(sources ? sources.history.stats.pending + sources.history.stats.inFlight : 0);
    },
  });
  let written = 0;
  metrics.counter({
    name: 'gateway_history_rows_written_total', help: 'History rows committed to the database.',
    collect() {
      const now = sources?.history.stats.rowsWritten ?? 0;
      if (now > written) this.inc(now - written);
      written = now;
    },
  });

  return {
    sampleObserver: (next) => (task, lagMs) => {
      samples.inc({ task });
      lag.observe({ task }, Math.max(0, lagMs) / 1000);
      next?.(task, lagMs);
    },
    observeFlush: (seconds) => flushes.observe(seconds),
    collectFrom: (given) => {
      sources = given;
    },
  };
}

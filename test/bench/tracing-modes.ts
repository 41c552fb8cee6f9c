/**
 * Tracing modes a benchmark alternates in one run: off, and on at sampling
 * 1.0 and 0.1 (parent-based ratio), exporting over OTLP/HTTP protobuf to a
 * receiver in this process that reads and drops what it is sent, so the
 * export's cost is paid as in production. Start it before the servers
 * measured, so their HTTP span hooks are installed; in `off` those hooks
 * remain and return at once (an upper bound of what tracing costs while off:
 * a process without any OTEL variable does not install them at all).
 */
import { createServer } from 'node:http';
import { startSdk, type StartedSdk } from '../../core/telemetry/sdk.js';
import { setTracingBackend } from '../../core/telemetry/tracing.js';
import type { LoadResult } from './mcp-load.js';
import { percentile, printTable } from './stats.js';

export const TRACING_MODES = ['off', 'ratio 1.0', 'ratio 0.1'] as const;
export type TracingMode = (typeof TRACING_MODES)[number];

export interface TracingModes {
  use(mode: TracingMode): void;
  /** Spans received by the OTLP receiver (export requests). */
  exports(): number;
  stop(): Promise<void>;
}

export async function startTracingModes(roles: readonly string[]): Promise<TracingModes> {
  let received = 0;
  const sink = createServer((req, res) => {
    req.on('data', () => undefined);
    req.on('end', () => {
      received++;
      res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
    });
  });
  await new Promise<void>((r) => sink.listen(0, '127.0.0.1', r));
  const port = (sink.address() as { port: number }).port;
  const settings = (ratio: number) => ({
    tracesUrl: `http://127.0.0.1:${port}/v1/traces`,
    protocol: 'http/protobuf' as const,
    headers: {},
    serviceNames: Object.fromEntries(roles.map((r) => [r, `cncgw-${r}`])),
    sampler: 'parentbased_traceidratio' as const,
    samplerArg: ratio,
    resourceAttributes: {},
  });
  const tenth: StartedSdk = await startSdk(settings(0.1));
  const full: StartedSdk = await startSdk(settings(1));
  return {
    use: (mode) => setTracingBackend(mode === 'off' ? undefined : mode === 'ratio 1.0' ? full.backend : tenth.backend),
    exports: () => received,
    async stop() {
      await tenth.shutdown();
      await full.shutdown();
      await new Promise<void>((r) => sink.close(() => r()));
    },
  };
}

/** Calls of one kind in one mode, over all rounds. */
export interface ModeTotal {
  latencies: number[];
  calls: number;
  seconds: number;
}

/** Per mode: list_machines throughput at the run's concurrency, get_fleet_status latency one call at a time. */
export type ModeTotals = Record<TracingMode, { list: ModeTotal; fleet: ModeTotal }>;

export function modeTotals(): ModeTotals {
  const fresh = () => ({ latencies: [] as number[], calls: 0, seconds: 0 });
  return Object.fromEntries(TRACING_MODES.map((m) => [m, { list: fresh(), fleet: fresh() }])) as ModeTotals;
}

/** Adds one load run of `n` calls to a total. */
export function addRun(total: ModeTotal, run: LoadResult, n: number): void {
  total.latencies.push(...run.latencies);
  total.calls += n;
  total.seconds += n / run.perSec;
}

/** Prints each tracing mode's figures and their ratio to tracing off, with the targets, then the figures as JSON. */
export function reportTracing(title: string, by: ModeTotals): void {
  const perSec = (t: ModeTotal) => t.calls / t.seconds;
  const off = { list: perSec(by.off.list), p95: percentile(by.off.fleet.latencies, 95) };
  const rows: [string, string, string][] = [];
  for (const mode of TRACING_MODES) {
    const list = perSec(by[mode].list);
    const p95 = percentile(by[mode].fleet.latencies, 95);
    const target = mode === 'ratio 0.1' ? 'within 10 %' : mode === 'ratio 1.0' ? 'within 25 %' : '';
    rows.push([`${mode}: list_machines calls/s (of off)`, `${list.toFixed(0)} (${((list / off.list) * 100).toFixed(0)} %)`, target]);
    rows.push([`${mode}: get_fleet_status p95 ms (of off)`, `${p95.toFixed(1)} (${((p95 / off.p95) * 100).toFixed(0)} %)`, target]);
  }
  printTable(title, rows);
  process.stdout.write(`${JSON.stringify(Object.fromEntries(TRACING_MODES.map((m) => [m, { listMachinesPerSec: perSec(by[m].list), fleetStatusP95Ms: percentile(by[m].fleet.latencies, 95) }])))}\n`);
}

/**
 * Northbound benchmark, against a local Mosquitto (Debian's `mosquitto`,
 * MQTT 5), with the simulated bench fleet (1,000 machines, status every
 * second):
 *
 * 1. Live: the fleet alone, then with one UNS target, then with one
 *    Sparkplug target, each measured over the same stretch after a warm-up:
 *    the CPU northbound adds (% of one core, against the fleet alone) and
 *    the publish lag (a row's time to its broker's acknowledgement, p50 and
 *    p99 from the gateway's own histogram) against the writer's flush
 *    interval.
 * 2. Backlog: 30 minutes of that fleet's rows (at the rate measured live,
 *    written into the history before the start, as an outage would leave
 *    them) forwarded while the fleet keeps sampling: the rows published per
 *    second while draining against the live rate, and the time to catch up.
 *
 *   npm run bench -- northbound [--machines 1000] [--seconds 60] [--warmup 10] [--backlog-minutes 30] [--flush-ms 750] [--formats uns,sparkplug]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { pino } from 'pino';
import { parseConfig } from '../../core/roles/index.js';
import { Gateway } from '../../core/roles/gateway/gateway.js';
import type { NorthboundTargetStatus } from '../../core/roles/gateway/northbound-status.js';
import { DRIVERS } from '../../drivers/registry.js';
import { GATEWAY_PLUGINS } from '../../core/roles/gateway/compose.js';
import { startMosquitto, type MosquittoController } from '../peers/mosquitto.js';
import { benchMachines } from './bench-fleet.js';
import { option, printTable, textOption } from './stats.js';

const METRICS_TOKEN = 'northbound-benchmark-metrics-token';

type Format = 'uns' | 'sparkplug';

interface Run {
  dataDir: string;
  machines: Record<string, unknown>[];
  flushMs: number;
  broker: MosquittoController;
  target?: { format: Format; enabled?: boolean };
}

async function startGateway(run: Run): Promise<Gateway> {
  const config = parseConfig({
    dataDir: run.dataDir, timeZone: 'UTC', logLevel: 'warn', metricsToken: METRICS_TOKEN,
    gateway: { name: 'bench-gw' },
    history: { flushIntervalMs: run.flushMs },
    machines: run.machines,
    ...(run.target ? { northbound: { targets: [{ name: 'bench', brokerUrl: run.broker.url, format: run.target.format, enabled: run.target.enabled ?? true, ...(run.target.format === 'sparkplug' ? { topicRoot: 'Bench' } : {}) }] } } : {}),
  });
  return Gateway.create({ config, drivers: DRIVERS, plugins: GATEWAY_PLUGINS, logger: pino({ level: 'warn' }) });
}

async function target(gw: Gateway): Promise<NorthboundTargetStatus> {
  const status = await gw.context.services.get('northbound').status();
  return status.targets[0] as NorthboundTargetStatus;
}

type Buckets = { le: number; count: number }[];

/** The publish lag histogram's cumulative buckets now, from the gateway's /metrics. */
async function lagBuckets(gw: Gateway): Promise<Buckets> {
  const text = (await gw.http.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).body;
  return [...text.matchAll(/^gateway_northbound_publish_lag_seconds_bucket\{le="([^"]+)",target="bench"\} (\d+)/gm)].map((m) => ({ le: m[1] === '+Inf' ? Infinity : Number(m[1]), count: Number(m[2]) }));
}

/** The lag's percentile over what was observed between two readings of the histogram (linear within a bucket). */
function lagPercentile(before: Buckets, after: Buckets, p: number): number {
  const buckets = after.map((b, i) => ({ le: b.le, count: b.count - (before[i]?.count ?? 0) }));
  const total = buckets.at(-1)?.count ?? 0;
  if (total === 0) return NaN;
  const rank = (p / 100) * total;
  let lower = { le: 0, count: 0 };
  for (const b of buckets) {
    if (b.count >= rank) return b.le === Infinity ? lower.le : lower.le + ((b.le - lower.le) * (rank - lower.count)) / Math.max(1, b.count - lower.count);
    lower = b;
  }
  return NaN;
}

interface LiveFigures {
  label: string;
  cpuPercentOfOneCore: number;
  historyRowsPerSec: number;
  publishedPerSec: number;
  lagP50Ms: number;
  lagP99Ms: number;
  backlogRowsAtEnd: number;
}

/** Runs the fleet (with a target when given) and measures it over `seconds` after `warmup`. */
async function live(run: Omit<Run, 'dataDir'>, seconds: number, warmup: number, label: string): Promise<LiveFigures> {
  const dataDir = mkdtempSync(join(tmpdir(), `nb-bench-${label}-`));
  const gw = await startGateway({ ...run, dataDir });
  try {
    process.stdout.write(`${label}: ${run.machines.length} machines; warming up ${warmup}s, measuring ${seconds}s\n`);
    await sleep(warmup * 1000);
    const stats = gw.context.history.stats;
    const rows0 = stats.rowsWritten + stats.pending + stats.inFlight;
    const published0 = run.target ? (await target(gw)).published : 0;
    const lag0 = run.target ? await lagBuckets(gw) : [];
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    await sleep(seconds * 1000);
    const cpu = process.cpuUsage(cpu0);
    const wallMs = performance.now() - t0;
    const rows = stats.rowsWritten + stats.pending + stats.inFlight - rows0;
    const end = run.target ? await target(gw) : undefined;
    const lag1 = run.target ? await lagBuckets(gw) : [];
    return {
      label,
      cpuPercentOfOneCore: ((cpu.user + cpu.system) / 1000 / wallMs) * 100,
      historyRowsPerSec: rows / (wallMs / 1000),
      publishedPerSec: end ? (end.published - published0) / (wallMs / 1000) : 0,
      lagP50Ms: end ? lagPercentile(lag0, lag1, 50) * 1000 : NaN,
      lagP99Ms: end ? lagPercentile(lag0, lag1, 99) * 1000 : NaN,
      backlogRowsAtEnd: end?.backlogRows ?? 0,
    };
  } finally {
    await gw.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** Rows of one machine as the fleet records them, for the written backlog: a status change with its State row, and a part now and then. */
function backlogRow(i: number, machines: number, ts: number): { machineID: string; cls: string; ts: number; data: unknown } {
  const machineID = `B${String(i % machines).padStart(4, '0')}`;
  const kind = Math.floor(i / machines) % 4;
  if (kind === 1) return { machineID, cls: 'State', ts, data: { state: 'running', reason: 'running: executing (adjustedStatus=RUNNING, mode=AUTO, alarmLevel=none)', connection: 'online' } };
  if (kind === 3) return { machineID, cls: 'Count', ts, data: { delta: 1, partCount: i % 500, partsTotal: i, lastCycleTime: 54.2, program: 'O1055' } };
  return { machineID, cls: 'CNCStatus', ts, data: { cncStatus: 'STRT', adjustedStatus: kind ? 'RUNNING' : 'STOPPED', alarmStatus: false, alarmLevel: 'none', mode: 'AUTO', programStatus: 'running', emergency: false, program: 'O1055', time: ts } };
}

interface DrainFigures {
  format: Format;
  backlogRows: number;
  liveRowsPerSec: number;
  drainSeconds: number;
  publishedRowsPerSec: number;
  ratioToLive: number;
  lostRows: number;
}

/** Writes `minutes` of the fleet's rows into a new history, then starts the fleet with a target that has all of it still to publish. */
async function drain(run: Omit<Run, 'dataDir' | 'target'>, format: Format, minutes: number, rowsPerSec: number): Promise<DrainFigures> {
  const dataDir = mkdtempSync(join(tmpdir(), `nb-bench-drain-${format}-`));
  try {
    // A first start with the target off makes its cursor at the (empty) history's start; the backlog is written after it.
    const first = await startGateway({ ...run, dataDir, machines: [], target: { format, enabled: false } });
    const backlog = Math.round(minutes * 60 * rowsPerSec);
    const since = Date.now() - minutes * 60_000;
    for (let i = 0; i < backlog; i++) first.context.history.push(backlogRow(i, run.machines.length, since + Math.floor((i / backlog) * minutes * 60_000)));
    await first.context.history.flush();
    await first.stop();
    process.stdout.write(`drain ${format}: ${backlog} rows written (${minutes} min at ${rowsPerSec.toFixed(0)} rows/s); starting the fleet with the target\n`);
    const gw = await startGateway({ ...run, dataDir, target: { format } });
    try {
      const t0 = performance.now();
      const stats = gw.context.history.stats;
      const rows0 = stats.rowsWritten + stats.pending + stats.inFlight;
      let t = await target(gw);
      while (t.cursor < backlog || t.backlogRows > rowsPerSec * 2) {
        await sleep(500);
        t = await target(gw);
        if (performance.now() - t0 > 30 * 60_000) throw new Error(`the backlog was not drained in 30 minutes: ${JSON.stringify(t)}`);
      }
      const seconds = (performance.now() - t0) / 1000;
      const liveRows = stats.rowsWritten + stats.pending + stats.inFlight - rows0;
      // The backlog drained net of the live rows that kept coming: an hour's outage caught up in 12 minutes is 5 times the live rate.
      return { format, backlogRows: backlog, liveRowsPerSec: liveRows / seconds, drainSeconds: seconds, publishedRowsPerSec: t.cursor / seconds, ratioToLive: backlog / seconds / rowsPerSec, lostRows: t.lostRows };
    } finally {
      await gw.stop();
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}

export async function run(args: string[]): Promise<void> {
  const machines = benchMachines(option(args, 'machines', 1000));
  const seconds = option(args, 'seconds', 60);
  const warmup = option(args, 'warmup', 10);
  const minutes = option(args, 'backlog-minutes', 30);
  const flushMs = option(args, 'flush-ms', 750);
  const formats = (textOption(args, 'formats') ?? 'uns,sparkplug').split(',') as Format[];
  const broker = await startMosquitto();
  try {
    const base = { machines, flushMs, broker };
    const fleet = await live(base, seconds, warmup, 'fleet alone');
    const withTarget: LiveFigures[] = [];
    for (const format of formats) withTarget.push(await live({ ...base, target: { format } }, seconds, warmup, `fleet + ${format}`));
    const drains: DrainFigures[] = [];
    for (const format of formats) drains.push(await drain(base, format, minutes, fleet.historyRowsPerSec));
    printTable(`northbound benchmark (${machines.length} machines at 1 Hz, flush ${flushMs} ms, ${seconds} s each, Node ${process.version}, Mosquitto)`, [
      ['fleet alone: CPU, % of one core', fleet.cpuPercentOfOneCore.toFixed(1), ''],
      ['fleet alone: history rows/s', fleet.historyRowsPerSec.toFixed(0), ''],
      ...withTarget.flatMap((w): [string, string, string][] => [
        [`${w.label}: CPU added, % of one core`, (w.cpuPercentOfOneCore - fleet.cpuPercentOfOneCore).toFixed(1), '<= 15'],
        [`${w.label}: publish lag p50 / p99, ms`, `${w.lagP50Ms.toFixed(0)} / ${w.lagP99Ms.toFixed(0)}`, 'p99 <= 1000'],
        [`${w.label}: messages acknowledged/s`, w.publishedPerSec.toFixed(0), ''],
        [`${w.label}: backlog at the end, rows`, String(w.backlogRowsAtEnd), ''],
      ]),
      ...drains.flatMap((d): [string, string, string][] => [
        [`drain ${d.format}: ${minutes} min backlog, rows`, String(d.backlogRows), ''],
        [`drain ${d.format}: rows published/s (live ${d.liveRowsPerSec.toFixed(0)}/s)`, d.publishedRowsPerSec.toFixed(0), ''],
        [`drain ${d.format}: backlog drained / live rate`, d.ratioToLive.toFixed(1), '>= 5'],
        [`drain ${d.format}: caught up after, s`, d.drainSeconds.toFixed(0), ''],
      ]),
    ]);
    process.stdout.write(`${JSON.stringify({ fleet, withTarget, drains })}\n`);
  } finally {
    await broker.stop();
  }
}

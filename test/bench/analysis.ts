/**
 * Analysis benchmark: one machine with 30 days of synthetic history (a State
 * change every 30 s on average, a CNCStatus row with each, a Count row per
 * part, alarms with their AlarmLog and AlarmHistory rows, a Heartbeat every
 * 60 s, three gateway-down gaps) written through the HistoryWriter of a real
 * gateway on a temp database. Then /api/analysis/machine runs through the
 * interface registry: oee, overall and alarm over 30 days, and over 1 day
 * with interval=3600, and 10,000 history rows oldest and newest first. Reports p50/p95 latency per case and the lag of a 10 ms
 * timer measured while they run (how long the event loop was held up). Settled days are kept between
 * analyses (plugins/analysis/machine-tallies.ts); "no day kept" makes them stale before every run, as a
 * late row would, so it measures a first analysis that reads all 30 days.
 *
 *   npm run bench -- analysis [--days 30] [--runs 20] [--stateSec 30] [--only <case name part>]
 *
 */
import type { InterfaceEntry } from '../../core/interfaces/registry.js';
import { ANALYSIS } from '../../core/roles/gateway/contract/analysis.js';
import { HISTORY } from '../../core/roles/gateway/contract/history.js';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { parseConfig } from '../../core/roles/index.js';
import { Gateway } from '../../core/roles/gateway/gateway.js';
import type { HistoryWriter } from '../../core/roles/gateway/history/writer.js';
import { DRIVERS } from '../../drivers/registry.js';
import { GATEWAY_PLUGINS } from '../../core/roles/gateway/compose.js';
import { option, percentile, printTable, textOption } from './stats.js';

const MACHINE_ID = 'BENCH1';
const DAY_MS = 86_400_000;
const HEARTBEAT_SEC = 60;
const STATES = ['running', 'idle', 'setup', 'alarm', 'offline', 'noData'] as const;
const STATE_WEIGHTS = [50, 20, 10, 8, 7, 5];
const PROGRAMS = ['O1001', 'O1002', 'O2040', 'O3300'];
const ALARM_CODES = Array.from({ length: 12 }, (_, i) => `EX${1000 + i * 7}`);

/** A small deterministic generator, so every run writes the same history. */
function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

interface Filled {
  rows: Record<string, number>;
  fromMs: number;
  toMs: number;
}

/** Writes `days` of history ending at `toMs` through the gateway's HistoryWriter. */
async function fill(writer: HistoryWriter, days: number, toMs: number, stateSec: number): Promise<Filled> {
  const rnd = random(7);
  const fromMs = toMs - days * DAY_MS;
  // Three 20-minute stretches when the gateway was down: no row at all.
  const gaps = [0.2, 0.5, 0.8].map((f) => ({ startMs: fromMs + Math.round(days * DAY_MS * f), endMs: fromMs + Math.round(days * DAY_MS * f) + 20 * 60_000 }));
  const down = (t: number) => gaps.some((g) => t >= g.startMs && t < g.endMs);
  const rows: Record<string, number> = {};
  const push = (cls: string, ts: number, data: unknown) => {
    if (down(ts)) return;
    writer.push({ machineID: MACHINE_ID, cls, ts, data });
    rows[cls] = (rows[cls] ?? 0) + 1;
  };
  const pick = (current: string): (typeof STATES)[number] => {
    for (;;) {
      let r = rnd() * 100;
      const i = STATE_WEIGHTS.findIndex((w) => (r -= w) < 0);
      const s = STATES[i < 0 ? 0 : i]!;
      if (s !== current) return s;
    }
  };
  let state: string = 'idle';
  let t = fromMs;
  let nextHeartbeat = fromMs;
  let partsTotal = 0;
  let cycleDone = 0;
  let cycleTime = 45;
  let alarm: { code: string; since: number } | null = null;
  let pushed = 0;
  while (t < toMs) {
    const next = Math.min(toMs, t + Math.round(-Math.log(1 - rnd()) * stateSec * 1000) + 100);
    for (; nextHeartbeat < next; nextHeartbeat += HEARTBEAT_SEC * 1000) push('Heartbeat', nextHeartbeat, { state, connection: 'online', statusStale: false });
    if (state === 'running') {
      for (let at = t + (cycleTime - cycleDone) * 1000; at < next; at += cycleTime * 1000) {
        partsTotal++;
        const program = PROGRAMS[Math.floor(at / (4 * 3_600_000)) % PROGRAMS.length]!;
        push('Count', Math.round(at), { delta: 1, partCount: partsTotal % 500, partsTotal, lastCycleTime: cycleTime, program });
        cycleDone = 0;
        cycleTime = 40 + rnd() * 10;
      }
      cycleDone = Math.min(cycleTime, cycleDone + (next - t) / 1000);
    }
    t = next;
    if (alarm) {
      const base = { code: alarm.code, message: `Alarm ${alarm.code}`, level: 'alarm' };
      push('AlarmLog', t, { event: 'end', ...base, since: alarm.since });
      push('AlarmHistory', t, { ...base, start: alarm.since, end: t, durationSec: (t - alarm.since) / 1000 });
      alarm = null;
    }
    state = pick(state);
    push('State', t, { state, reason: `${state}: synthetic benchmark history (adjustedStatus=STOPPED, mode=AUTO, alarmLevel=none)`, connection: 'online' });
    push('CNCStatus', t, { cncStatus: 'STRT', adjustedStatus: state === 'running' ? 'RUNNING' : 'STOPPED', alarmStatus: state === 'alarm', alarmLevel: state === 'alarm' ? 'alarm' : 'none', mode: state === 'setup' ? 'JOG' : 'AUTO', programStatus: 'none', emergency: false, program: PROGRAMS[0], time: t });
    if (state === 'alarm') {
      alarm = { code: ALARM_CODES[Math.floor(rnd() * ALARM_CODES.length)]!, since: t };
      push('AlarmLog', t, { event: 'start', code: alarm.code, message: `Alarm ${alarm.code}`, level: 'alarm', since: t });
    }
    // The writer buffers; flushing now and then keeps the buffer bounded.
    if (++pushed % 5000 === 0) await writer.flush();
  }
  await writer.flush();
  return { rows, fromMs, toMs };
}

/** Measures how late a 10 ms timer fires while `work` runs. */
async function withTimerLag<T>(work: () => Promise<T>, lags: number[]): Promise<T> {
  let last = performance.now();
  const timer = setInterval(() => {
    const now = performance.now();
    lags.push(Math.max(0, now - last - 10));
    last = now;
  }, 10);
  try {
    return await work();
  } finally {
    clearInterval(timer);
  }
}

interface Case {
  name: string;
  /** Interface to call; analysis by default. */
  entry?: InterfaceEntry;
  input: Record<string, unknown>;
  /** Before each run, make every kept day of the machine stale, as a late row would: the figure of a first analysis. */
  cold?: boolean;
}

/** The bench gateway's config: one simulated machine whose live tasks are off but the heartbeat. */
function benchConfig(dataDir: string) {
  return parseConfig({
    dataDir,
    timeZone: 'UTC',
    logLevel: 'warn',
    mtconnect: { host: '127.0.0.1', port: 0 },
    security: { securityControl: false },
    history: { heartbeatSec: HEARTBEAT_SEC },
    machines: [
      {
        machineID: MACHINE_ID,
        name: 'Analysis bench',
        driver: 'simulator',
        idealCycleTimeSec: 40,
        // Only the heartbeat runs live, so the actor adds next to no work or rows during the measurement.
        tasks: Object.fromEntries(['CNCStatus', 'Count', 'Cycle', 'TimeData', 'ToolLife', 'OEE'].map((c) => [c, { enabled: false }])),
      },
    ],
  });
}

/** The calls measured over the filled history, from `fromMs` to `toMs`. */
function benchCases(days: number, fromMs: number, toMs: number): Case[] {
  const start = Math.floor(fromMs / 1000) + 1;
  const end = Math.floor(toMs / 1000);
  const dayStart = end - 86_400;
  return [
    { name: 'query_history, 10000 State rows', entry: HISTORY.machine, input: { machineID: MACHINE_ID, type: 'State', start, end, limit: 10_000 } },
    {
      name: 'query_history newestFirst, 10000 State rows',
      entry: HISTORY.query,
      input: { machineIDs: MACHINE_ID, classes: 'State', start, end, order: 'desc', limit: 10_000 },
    },
    ...(['oee', 'overall', 'alarm'] as const).map((kind) => ({ name: `${kind}, ${days} days`, input: { kind, machineID: MACHINE_ID, start, end } })),
    { name: `overall, ${days} days, no day kept`, input: { kind: 'overall', machineID: MACHINE_ID, start, end }, cold: true },
    ...(['oee', 'overall', 'alarm'] as const).map((kind) => ({
      name: `${kind}, 1 day, interval=3600`,
      input: { kind, machineID: MACHINE_ID, start: dayStart, end, interval: 3600 },
    })),
  ];
}

interface CaseResult {
  name: string;
  p50: number;
  p95: number;
  max: number;
  cpuP50: number;
  lagP95: number;
  lagMax: number;
}

/** Runs one case `runs` times after two warm-up runs: wall time, CPU time and the timer lag (pushed to `lags`) of each. */
async function measure(gateway: Gateway, c: Case, runs: number, lags: number[]): Promise<CaseResult> {
  const principal = { username: 'bench', isAdmin: true, method: 'internal' as const };
  const times: number[] = [];
  const cpu: number[] = [];
  const ownLags: number[] = [];
  for (let i = 0; i < runs + 2; i++) {
    if (c.cold) gateway.context.history.revisions.bump(MACHINE_ID);
    const began = performance.now();
    const cpuBefore = process.cpuUsage();
    const result = await withTimerLag(() => gateway.context.interfaces.call<InterfaceEntry>(c.entry ?? ANALYSIS.machine, c.input, { principal }), i < 2 ? [] : ownLags);
    if (!result.ok) throw new Error(`${c.name}: ${result.error.message}`);
    const used = process.cpuUsage(cpuBefore);
    if (i >= 2) {
      times.push(performance.now() - began);
      // Every thread of the process: the main thread and sqlite3's workers. Unlike wall time, it does not grow when other processes compete for the CPU.
      cpu.push((used.user + used.system) / 1000);
    }
  }
  lags.push(...ownLags);
  return {
    name: c.name,
    p50: percentile(times, 50),
    p95: percentile(times, 95),
    max: Math.max(...times),
    cpuP50: percentile(cpu, 50),
    // A run shorter than 10 ms sees no tick at all: no lag.
    lagP95: ownLags.length ? percentile(ownLags, 95) : 0,
    lagMax: Math.max(0, ...ownLags),
  };
}

/** Prints the tables and the JSON line of the results. */
function report(days: number, runs: number, filled: { rows: Record<string, number> }, total: number, results: readonly CaseResult[], allLags: readonly number[]): void {
  const target = (name: string) => (name === `overall, ${days} days` && days === 30 ? 'p95 <= 200' : name.startsWith('query_history') ? 'p95 <= 100' : '');
  printTable(
    `analysis benchmark (${days} days, ${total} history rows, ${runs} runs per case, Node ${process.version})`,
    results.flatMap((r): [string, string, string][] => [
      [`${r.name}: p50 / p95 / max, ms`, `${r.p50.toFixed(1)} / ${r.p95.toFixed(1)} / ${r.max.toFixed(1)}`, target(r.name)],
      [`${r.name}: CPU p50, ms`, r.cpuP50.toFixed(1), ''],
      [`${r.name}: 10 ms timer lag p95 / max, ms`, `${r.lagP95.toFixed(1)} / ${r.lagMax.toFixed(1)}`, ''],
    ]),
  );
  process.stdout.write(`machine: ${cpus().length} CPUs, load average ${loadavg().map((l) => l.toFixed(2)).join(' ')} at the end\n`);
  printTable('10 ms timer lag over every measured run', [
    ['p50, ms', percentile(allLags, 50).toFixed(1), ''],
    ['p95, ms', percentile(allLags, 95).toFixed(1), ''],
    ['p99, ms', percentile(allLags, 99).toFixed(1), ''],
    ['max, ms', Math.max(0, ...allLags).toFixed(1), ''],
  ]);
  process.stdout.write(`${JSON.stringify({ days, rows: filled.rows, results, lag: { p50: percentile(allLags, 50), p95: percentile(allLags, 95), max: Math.max(0, ...allLags) } })}\n`);
}

export async function run(args: string[]): Promise<void> {
  const days = option(args, 'days', 30);
  const runs = option(args, 'runs', 20);
  const stateSec = option(args, 'stateSec', 30);
  const dataDir = mkdtempSync(join(tmpdir(), 'gw-bench-analysis-'));
  const gateway = await Gateway.create({ config: benchConfig(dataDir), drivers: DRIVERS, plugins: GATEWAY_PLUGINS, logger: pino({ level: 'warn' }) });
  try {
    const toMs = Math.floor(Date.now() / 1000) * 1000;
    const t0 = performance.now();
    const filled = await fill(gateway.context.history, days, toMs, stateSec);
    const fillSec = (performance.now() - t0) / 1000;
    const total = Object.values(filled.rows).reduce((a, b) => a + b, 0);
    process.stdout.write(`analysis: ${total} rows over ${days} days written in ${fillSec.toFixed(1)} s (${(total / fillSec).toFixed(0)} rows/s): ${JSON.stringify(filled.rows)}\n`);
    process.stdout.write(`database: ${(statSync(join(dataDir, 'gateway.db')).size / 1024 / 1024).toFixed(1)} MB\n`);
    const cases = benchCases(days, filled.fromMs, toMs);
    const only = textOption(args, 'only');
    const results: CaseResult[] = [];
    const allLags: number[] = [];
    for (const c of only ? cases.filter((k) => k.name.includes(only)) : cases) results.push(await measure(gateway, c, runs, allLags));
    report(days, runs, filled, total, results, allLags);
  } finally {
    await gateway.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

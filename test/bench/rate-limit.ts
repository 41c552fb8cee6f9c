/**
 * Rate-limit benchmark (core/http/rate-limit.ts): the latency another client sees
 * while one source address floods a read route with `--clients` concurrent
 * connections, with the default limits and without limits, beside a
 * baseline without a flood. The load runs in a child process.
 *
 * The route answers a list of `--rows` machines (300 by default), built and
 * serialised per request, as a fleet read is.
 *
 *   npm run bench -- rate-limit [--clients 16] [--seconds 10] [--rows 300]
 */
import { fork } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { pino } from 'pino';
import { createHttpApp } from '../../core/http/http-server.js';
import { DEFAULT_RATE_LIMITS } from '../../core/http/rate-limit.js';
import { RoleRuntime } from '../../core/runtime/runtime.js';
import type { LoadJob, LoadResult } from './rate-limit-load.js';
import { option, percentile, printTable } from './stats.js';

function load(job: LoadJob): Promise<LoadResult> {
  const child = fork(fileURLToPath(new URL('./rate-limit-load.ts', import.meta.url)), [], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  return new Promise((resolve, reject) => {
    child.once('message', (result: LoadResult & { error?: string }) => {
      child.disconnect();
      if (result.error) reject(new Error(result.error));
      else resolve(result);
    });
    child.send(job);
  });
}

async function server(dataDir: string, limited: boolean, rows: number): Promise<{ url: string; stop: () => Promise<void> }> {
  const logger = pino({ level: 'silent' });
  const runtime = await RoleRuntime.open({ role: 'bench', dataDir, databaseFile: `bench-${limited}.db`, logger, now: Date.now, metricsToken: 'benchmark-metrics-token', ...(limited ? { rateLimits: DEFAULT_RATE_LIMITS } : {}) });
  const app = createHttpApp(logger, ['127.0.0.1']);
  // A read of some substance, as a fleet list is: `rows` machines, serialised per request.
  app.get('/things', async () => ({ errorCode: 0, errorMsg: 'OK', data: Array.from({ length: rows }, (_, i) => ({ machineID: `M${i}`, state: 'RUNNING', feed: i % 120, program: `O${1000 + i}` })) }));
  await runtime.startPlugins([], {}, app);
  await app.ready();
  return { url: `${await runtime.listen('127.0.0.1', 0)}/things`, stop: () => runtime.stop() };
}

const ms = (v: number) => `${v.toFixed(1)} ms`;

export async function run(args: string[]): Promise<void> {
  const clients = option(args, 'clients', 16);
  const seconds = option(args, 'seconds', 10);
  const machines = option(args, 'rows', 300);
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-limits-'));
  try {
    const rows: [string, string, string][] = [];
    const figures: Record<string, unknown> = {};
    for (const [name, limited, flooding] of [['baseline, no flood', true, 0], ['flood, default limits', true, clients], ['flood, no limits', false, clients]] as const) {
      const s = await server(dataDir, limited, machines);
      const result = await load({ url: s.url, clients: flooding, seconds });
      await s.stop();
      const floodTotal = Object.values(result.flood).reduce((a, b) => a + b, 0);
      rows.push([`${name}: other client p50 / p99`, `${ms(percentile(result.probeMs, 50))} / ${ms(percentile(result.probeMs, 99))}`, `statuses ${JSON.stringify(result.probeStatuses)}`]);
      if (flooding) rows.push([`${name}: flood`, `${Math.round(floodTotal / seconds)} req/s`, `statuses ${JSON.stringify(result.flood)}`]);
      figures[name] = { p50: percentile(result.probeMs, 50), p99: percentile(result.probeMs, 99), probe: result.probeStatuses, flood: result.flood };
    }
    printTable(`one address flooding GET (${machines} rows an answer) with ${clients} connections for ${seconds} s; another client every 10 ms`, rows);
    process.stdout.write(`${JSON.stringify(figures)}\n`);
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}

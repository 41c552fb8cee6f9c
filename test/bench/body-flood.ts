/**
 * Body-flood benchmark: GET /api/health latency (p50/p95/max) while
 * anonymous clients post 8 MB JSON bodies (nested millions deep, or millions
 * of elements wide) to a POST interface and to /mcp, against a gateway with
 * security control on and a simulated fleet sampling. Target: /api/health
 * stays under 50 ms, because an anonymous body is refused before it is read.
 * First a baseline without the flood, then the flood.
 *
 *   npm run bench -- body-flood [--clients 4] [--seconds 10] [--machines 50] [--mb 8]
 */
import { fork, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { pino } from 'pino';
import { parseConfig } from '../../core/roles/index.js';
import { Gateway } from '../../core/roles/gateway/gateway.js';
import { DRIVERS } from '../../drivers/registry.js';
import { GATEWAY_PLUGINS } from '../../core/roles/gateway/compose.js';
import { benchMachines } from './bench-fleet.js';
import type { FloodJob, FloodResult } from './body-flood-load.js';
import { option, percentile, printTable } from './stats.js';

/** /api/health latency target under the flood, ms. */
const TARGET_MS = 50;

function runInChild(job: FloodJob): Promise<FloodResult> {
  const child: ChildProcess = fork(fileURLToPath(new URL('./body-flood-load.ts', import.meta.url)), [], {
    execArgv: ['--import', 'tsx'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  return new Promise((resolve, reject) => {
    child.once('message', (result: FloodResult) => {
      child.disconnect();
      if (result.error) reject(new Error(result.error));
      else resolve(result);
    });
    child.once('error', reject);
    child.send(job);
  });
}

const ms = (v: number): string => `${v.toFixed(1)} ms`;

export async function run(args: string[]): Promise<void> {
  const clients = option(args, 'clients', 4);
  const seconds = option(args, 'seconds', 10);
  const machines = option(args, 'machines', 50);
  // Just under 8 MiB, so that a gateway with an 8 MiB global limit reads the bodies whole (the case measured before).
  const bodyBytes = Math.floor(option(args, 'mb', 8) * 1024 * 1024) - 4096;
  const dataDir = mkdtempSync(join(tmpdir(), 'gw-bench-flood-'));
  const config = parseConfig({ gateway: { dataDir, timeZone: 'UTC' }, logLevel: 'warn', mtconnect: { host: '127.0.0.1', port: 0 }, machines: benchMachines(machines) });
  const gateway = await Gateway.create({ config, drivers: DRIVERS, plugins: GATEWAY_PLUGINS, logger: pino({ level: 'warn' }), env: { GATEWAY_ADMIN_PASSWORD: 'bench-admin-password' } });
  const base = await gateway.listen({ host: '127.0.0.1', port: 0 });
  try {
    const idle = await runInChild({ base, clients: 0, seconds: Math.min(3, seconds), probeEveryMs: 20, bodyBytes });
    const [probe, load] = await Promise.all([
      runInChild({ base, clients: 0, seconds, probeEveryMs: 20, bodyBytes }),
      runInChild({ base, clients, seconds, bodyBytes }),
    ]);
    const flood: FloodResult = { latencies: probe.latencies, posted: load.posted, statuses: load.statuses };
    const row = (name: string, r: FloodResult): [string, string, string][] => [
      [`${name} /api/health p50`, ms(percentile(r.latencies, 50)), ''],
      [`${name} /api/health p95`, ms(percentile(r.latencies, 95)), name === 'flood' ? `< ${TARGET_MS} ms` : ''],
      [`${name} /api/health max`, ms(Math.max(...r.latencies)), name === 'flood' ? `< ${TARGET_MS} ms` : ''],
      [`${name} probes`, String(r.latencies.length), ''],
    ];
    printTable(`body flood: ${clients} anonymous clients posting ${(bodyBytes / 1024 / 1024).toFixed(2)} MiB bodies for ${seconds} s, ${machines} machines sampling`, [
      ...row('idle', idle),
      ...row('flood', flood),
      ['bodies posted', String(flood.posted), ''],
      ['answers', Object.entries(flood.statuses).map(([k, v]) => `${k}×${v}`).join(' '), '401, or the connection closed (EPIPE) once refused'],
    ]);
    const json = {
      clients,
      seconds,
      bodyBytes,
      idle: { p50: percentile(idle.latencies, 50), p95: percentile(idle.latencies, 95), max: Math.max(...idle.latencies) },
      flood: { p50: percentile(flood.latencies, 50), p95: percentile(flood.latencies, 95), max: Math.max(...flood.latencies), posted: flood.posted, statuses: flood.statuses },
    };
    process.stdout.write(`${JSON.stringify(json)}\n`);
  } finally {
    await gateway.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** The simulated fleet the benchmarks run (mixed machine types and vendors, 1 s status sampling), and how a running fleet is measured. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { pino } from 'pino';
import { parseConfig } from '../../core/roles/index.js';
import { Gateway } from '../../core/roles/gateway/gateway.js';
import { DRIVERS } from '../../drivers/registry.js';
import { GATEWAY_PLUGINS } from '../../core/roles/gateway/compose.js';
import { percentile, settled, type SettledMemory } from './stats.js';

const MACHINE_TYPES = ['lathe', 'mill', 'machiningCenter', 'turnMill', 'grinder'] as const;
const SYSTEMS = ['FANUC', 'SIEMENS', 'HEIDENHAIN', 'MAZAK', 'OKUMA'] as const;

/** Machine configs B0000…, each with its own seed; `timeScale` speeds the simulated shop floor up. */
export function benchMachines(count: number, timeScale = 10): Record<string, unknown>[] {
  return Array.from({ length: count }, (_, i) => {
    const machineType = MACHINE_TYPES[i % MACHINE_TYPES.length];
    const system = SYSTEMS[i % SYSTEMS.length];
    return {
      machineID: `B${String(i).padStart(4, '0')}`,
      name: `Bench ${i}`,
      machineType,
      system,
      driver: 'simulator',
      driverOptions: { seed: i, machineType, system, timeScale },
      tasks: { CNCStatus: { enabled: true, intervalMs: 1000 } },
    };
  });
}

/** What a fleet costs while it runs: measured after a warm-up, over `seconds`. */
export interface FleetMeasurement {
  seconds: number;
  cpuPercentOfOneCore: number;
  /** Highest RSS sampled while measuring. */
  peakRssMB: number;
  lagP50Ms: number;
  lagP99Ms: number;
  statusSamples: number;
  statusSamplesPerSec: number;
  historyRowsPerSec: number;
  /** Machines by derived state, and how many were online, at the end. */
  statesAtEnd: Record<string, number>;
  online: number;
  /** The process's memory after full collections at the end of the measuring, the gateway still running. */
  memoryAtEnd: SettledMemory;
}

/** Starts a gateway on `machines` (SQLite in a temporary directory), measures it, and stops it. */
export async function measureFleet(
  machines: Record<string, unknown>[],
  options: { seconds: number; warmup: number; label: string; scrapeSeconds?: number },
): Promise<FleetMeasurement> {
  const dataDir = mkdtempSync(join(tmpdir(), `gw-bench-${options.label}-`));
  const config = parseConfig({ gateway: { dataDir, timeZone: 'UTC' }, logLevel: 'warn', mtconnect: { host: '127.0.0.1', port: 0 }, machines });
  let measuring = false;
  const lags: number[] = [];
  const gateway = await Gateway.create({
    config,
    drivers: DRIVERS,
    plugins: GATEWAY_PLUGINS,
    logger: pino({ level: 'warn' }),
    onSampleLag: (task, lag) => {
      if (measuring && task === 'CNCStatus') lags.push(lag);
    },
  });
  let scraper: NodeJS.Timeout | undefined;
  try {
    // Prometheus' part, when asked: GET /metrics with the token every scrapeSeconds.
    if (options.scrapeSeconds) {
      const url = `${await gateway.listen({ host: '127.0.0.1', port: 0 })}/metrics`;
      const headers = { authorization: `Bearer ${process.env.METRICS_TOKEN ?? ''}` };
      scraper = setInterval(() => void fetch(url, { headers }).then((r) => r.text()), options.scrapeSeconds * 1000);
    }
    process.stdout.write(`${options.label}: ${machines.length} machines started; warming up ${options.warmup}s, measuring ${options.seconds}s\n`);
    await sleep(options.warmup * 1000);
    const stats = gateway.context.history.stats;
    const rows0 = stats.rowsWritten + stats.pending;
    let peakRss = process.memoryUsage().rss;
    const rssTimer = setInterval(() => {
      peakRss = Math.max(peakRss, process.memoryUsage().rss);
    }, 250);
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    measuring = true;
    const progress = setInterval(() => {
      process.stdout.write(`  ${((performance.now() - t0) / 1000).toFixed(0)}s / ${options.seconds}s, ${lags.length} status samples\n`);
    }, 10_000);
    await sleep(options.seconds * 1000);
    measuring = false;
    const wallMs = performance.now() - t0;
    const cpu = process.cpuUsage(cpu0);
    clearInterval(rssTimer);
    clearInterval(progress);
    const rows = stats.rowsWritten + stats.pending - rows0;
    const statesAtEnd: Record<string, number> = {};
    let online = 0;
    for (const id of gateway.fleet.ids()) {
      const view = gateway.fleet.snapshot(id);
      statesAtEnd[view.derived.state] = (statesAtEnd[view.derived.state] ?? 0) + 1;
      if (view.connection.state === 'online') online++;
    }
    const memoryAtEnd = await settled();
    return {
      seconds: wallMs / 1000,
      cpuPercentOfOneCore: ((cpu.user + cpu.system) / 1000 / wallMs) * 100,
      peakRssMB: peakRss / 1024 / 1024,
      lagP50Ms: percentile(lags, 50),
      lagP99Ms: percentile(lags, 99),
      statusSamples: lags.length,
      statusSamplesPerSec: lags.length / (wallMs / 1000),
      historyRowsPerSec: rows / (wallMs / 1000),
      statesAtEnd,
      online,
      memoryAtEnd,
    };
  } finally {
    clearInterval(scraper);
    await gateway.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

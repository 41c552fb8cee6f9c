/**
 * Fleet benchmark: 1,000 simulated machines with 1 s status sampling (the
 * other tasks at their default intervals) in one gateway process.
 * Reports CPU (% of one core), peak RSS, sample lag p50/p99 (due → cached),
 * history rows/s, and the history writer's throughput against a raw sqlite3
 * multi-row insert loop run in this same process, as a ratio.
 *
 * With `--scrape N`, /metrics is fetched every N seconds as Prometheus
 * would (the token from METRICS_TOKEN, set for the run when unset).
 *
 *   npm run bench -- fleet [--machines 1000] [--seconds 60] [--warmup 5] [--rows 200000] [--scrape 5]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Database, type SqlValue } from '../../core/store/database.js';
import { HistoryWriter } from '../../core/roles/gateway/history/writer.js';
import { migrateGatewayStore } from '../../core/roles/gateway/store/schema.js';
import { option, printTable } from './stats.js';
import { benchMachines, measureFleet } from './bench-fleet.js';

function syntheticRow(i: number): [string, string, number, string] {
  return [`B${i % 1000}`, i % 5 === 0 ? 'Heartbeat' : 'CNCStatus', 1_800_000_000_000 + i, JSON.stringify({ i, state: 'running', reason: 'bench' })];
}

async function freshDb(): Promise<{ db: Database; dir: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'gw-bench-writer-'));
  const db = await Database.open(join(dir, 'gateway.db'));
  await migrateGatewayStore(db);
  return { db, dir };
}

/** Rows/s through HistoryWriter: push everything, then wait for the last commit. */
async function writerRate(rows: number): Promise<number> {
  const { db, dir } = await freshDb();
  const writer = await HistoryWriter.open(db);
  const t0 = performance.now();
  for (let i = 0; i < rows; i++) {
    const [machineID, cls, ts, data] = syntheticRow(i);
    writer.push({ machineID, cls, ts, data: JSON.parse(data) as unknown });
  }
  await writer.close();
  const rate = rows / ((performance.now() - t0) / 1000);
  await db.close();
  rmSync(dir, { recursive: true, force: true });
  return rate;
}

/** Rows/s of a plain loop: 500-row INSERT … VALUES statements, each batch in its own transaction. */
async function rawRate(rows: number): Promise<number> {
  const { db, dir } = await freshDb();
  const batch = 500;
  const sql = `INSERT INTO history (seq, machine_id, class, ts, data) VALUES ${new Array(batch).fill('(?,?,?,?,?)').join(',')}`;
  const t0 = performance.now();
  for (let start = 0; start < rows; start += batch) {
    const params: SqlValue[] = [];
    for (let i = start; i < start + batch; i++) params.push(i + 1, ...syntheticRow(i));
    await db.write((tx) => tx.run(sql, params), { transaction: true });
  }
  const rate = rows / ((performance.now() - t0) / 1000);
  await db.close();
  rmSync(dir, { recursive: true, force: true });
  return rate;
}

export async function run(args: string[]): Promise<void> {
  const machines = option(args, 'machines', 1000);
  const seconds = option(args, 'seconds', 60);
  const warmup = option(args, 'warmup', 5);
  const rows = option(args, 'rows', 200_000);
  const scrapeSeconds = option(args, 'scrape', 0);
  if (scrapeSeconds) process.env.METRICS_TOKEN ??= 'fleet-benchmark-metrics-token';
  const measured = await measureFleet(benchMachines(machines), { seconds, warmup, label: 'fleet', scrapeSeconds });
  // The peak of the whole process so far, start-up included, not only of the measured stretch.
  const fleet = { machines, ...measured, peakRssMB: Math.max(measured.peakRssMB, (process.resourceUsage().maxRSS * 1024) / 1024 / 1024) };
  process.stdout.write(`writer: ${rows} rows through HistoryWriter and through a raw multi-row loop (x2, alternating)\n`);
  const writer: number[] = [];
  const raw: number[] = [];
  for (let i = 0; i < 2; i++) {
    raw.push(await rawRate(rows));
    writer.push(await writerRate(rows));
  }
  const writerBest = Math.max(...writer);
  const rawBest = Math.max(...raw);
  const result = { ...fleet, writerRowsPerSec: writerBest, rawRowsPerSec: rawBest, writerRatio: writerBest / rawBest };
  printTable(`fleet benchmark (${machines} machines, ${fleet.seconds.toFixed(1)} s, ${scrapeSeconds ? `/metrics every ${scrapeSeconds} s` : 'no scrapes'}, Node ${process.version})`, [
    ['CPU, % of one core', result.cpuPercentOfOneCore.toFixed(1), '<= 50'],
    ['peak RSS, MB', result.peakRssMB.toFixed(0), '<= 400'],
    ['sample lag p50, ms', result.lagP50Ms.toFixed(1), ''],
    ['sample lag p99, ms', result.lagP99Ms.toFixed(1), '<= 100'],
    ['status samples', String(result.statusSamples), ''],
    ['history rows/s', result.historyRowsPerSec.toFixed(0), ''],
    ['writer rows/s', result.writerRowsPerSec.toFixed(0), ''],
    ['raw loop rows/s', result.rawRowsPerSec.toFixed(0), ''],
    ['writer / raw', result.writerRatio.toFixed(2), '>= 0.5'],
  ]);
  process.stdout.write(`${JSON.stringify(result)}\n`);
}

/**
 * Backup and restore benchmark (core/backup/backup.ts), on a temp data directory:
 * a gateway database (the real schema) filled with `--rows` history rows
 * (default 2,000,000: 1,000 machines' status at 1 s for 33 minutes, about
 * the history of a day of all task classes at 1,000 machines' default
 * intervals ÷ 2) and a program service database; then a backup while the
 * gateway's history goes on being written at `--rate` rows/s (default
 * 1,000, a 1,000-machine fleet) in 750 ms batches as the history writer does;
 * then a restore into a fresh directory. Prints the sizes, the times, the
 * rows written during the backup and the lag of a 10 ms timer meanwhile.
 *
 *   npm run bench -- backup [--rows 2000000] [--rate 1000]
 */
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { backupDataDirectory, restoreDataDirectory } from '../../core/backup/backup.js';
import { KEPT_FILES } from '../../core/roles/index.js';
import { RoleRuntime } from '../../core/runtime/runtime.js';
import { GATEWAY_MIGRATIONS } from '../../core/roles/gateway/store/schema.js';
import { option, percentile, printTable } from './stats.js';

const CHUNK = 50_000;

export async function run(args: string[]): Promise<void> {
  const rows = option(args, 'rows', 2_000_000);
  const rate = option(args, 'rate', 1000);
  const root = mkdtempSync(join(tmpdir(), 'bench-backup-'));
  const dataDir = join(root, 'data');
  const logger = pino({ level: 'silent' });
  const runtime = await RoleRuntime.open({ role: 'gateway', dataDir, databaseFile: 'gateway.db', logger, now: Date.now, baseMigrations: GATEWAY_MIGRATIONS });
  const programs = await RoleRuntime.open({ role: 'programs', dataDir, databaseFile: 'programs.db', logger, now: Date.now });
  try {
    const fillStart = performance.now();
    const t0 = Date.now() - rows;
    const data = JSON.stringify({ runState: 'RUNNING', mode: 'MEM', feed: 100, spindle: 8000, program: 'O1234', alarms: [] });
    for (let done = 0; done < rows; done += CHUNK) {
      const n = Math.min(CHUNK, rows - done);
      await runtime.db.write((tx) => tx.run(
        `WITH RECURSIVE c(x) AS (SELECT 0 UNION ALL SELECT x + 1 FROM c WHERE x < ${n - 1})
         INSERT INTO history (machine_id, class, ts, data) SELECT printf('M%04d', (x + ${done}) % 1000), 'CNCStatus', ${t0} + x + ${done}, ? FROM c`, [data]), { transaction: true });
    }
    await programs.db.write((tx) => tx.run('CREATE TABLE IF NOT EXISTS filler (id INTEGER PRIMARY KEY, body BLOB)'));
    await programs.db.write((tx) => tx.run('WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 20000) INSERT INTO filler (body) SELECT randomblob(1000) FROM c'));
    const fillMs = performance.now() - fillStart;
    const gatewayBytes = statSync(join(dataDir, 'gateway.db')).size + statSync(join(dataDir, 'gateway.db-wal')).size;

    // The fleet's history goes on: `rate` rows per second in 750 ms batches.
    let writing = true;
    let written = 0;
    const perBatch = Math.max(1, Math.round((rate * 750) / 1000));
    const writer = (async () => {
      while (writing) {
        const started = performance.now();
        await runtime.db.write(async (tx) => {
          for (let i = 0; i < perBatch; i += 500) {
            const k = Math.min(500, perBatch - i);
            await tx.run(`INSERT INTO history (machine_id, class, ts, data) VALUES ${Array(k).fill('(?, \'CNCStatus\', ?, ?)').join(',')}`, Array.from({ length: k }, (_, j) => [`M${String((written + i + j) % 1000).padStart(4, '0')}`, Date.now(), data]).flat());
          }
        }, { transaction: true });
        written += perBatch;
        await new Promise((r) => setTimeout(r, Math.max(0, 750 - (performance.now() - started))));
      }
    })();
    const lags: number[] = [];
    let last = performance.now();
    const timer = setInterval(() => {
      const now = performance.now();
      lags.push(now - last - 10);
      last = now;
    }, 10);
    const before = written;
    const backupStart = performance.now();
    const manifest = await backupDataDirectory(dataDir, join(root, 'backup'), KEPT_FILES);
    const backupMs = performance.now() - backupStart;
    const during = written - before;
    clearInterval(timer);
    writing = false;
    await writer;
    const restoreStart = performance.now();
    await restoreDataDirectory(join(root, 'backup'), join(root, 'restored'), KEPT_FILES);
    const restoreMs = performance.now() - restoreStart;
    const backupBytes = manifest.files.reduce((sum, f) => sum + f.bytes, 0);
    const mb = (b: number) => `${(b / 1024 / 1024).toFixed(1)} MB`;
    printTable(`backup of ${rows.toLocaleString('en')} history rows while ${rate} rows/s are written`, [
      ['fill', `${(fillMs / 1000).toFixed(1)} s`, ''],
      ['gateway.db (+ wal) before', mb(gatewayBytes), ''],
      ['backup size (all files)', mb(backupBytes), ''],
      ['backup time', `${(backupMs / 1000).toFixed(2)} s`, ''],
      ['backup throughput', `${(backupBytes / 1024 / 1024 / (backupMs / 1000)).toFixed(0)} MB/s`, ''],
      ['history rows written during the backup', String(during), 'the writes go on'],
      ['10 ms timer lag p50 / p99 / max', `${percentile(lags, 50).toFixed(1)} / ${percentile(lags, 99).toFixed(1)} / ${Math.max(...lags).toFixed(1)} ms`, ''],
      ['restore time (check + copy)', `${(restoreMs / 1000).toFixed(2)} s`, ''],
    ]);
    process.stdout.write(`${JSON.stringify({ rows, rate, fillMs, gatewayBytes, backupBytes, backupMs, during, restoreMs, lagP99: percentile(lags, 99) })}\n`);
  } finally {
    await programs.stop();
    await runtime.stop();
    rmSync(root, { recursive: true, force: true });
  }
}

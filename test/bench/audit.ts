/**
 * Audit chain benchmark, on a temp database file:
 *  - fill: `--records` records (default 1,000,000) through appendMany, 1,000
 *    per transaction (the bulk append rate);
 *  - changes: an UPDATE of a small row in another table plus its audit
 *    record, each change in its own write transaction as a request would do
 *    it, with 1 and several concurrent requests (Database.write serialises
 *    them), beside the same change without an audit record;
 *  - verify over the whole chain (target >= 200,000 records/s), with the
 *    lag of a 10 ms timer while it runs;
 *  - canonical text of one record: the canonicalize library against the
 *    chain's own builder.
 *
 *   npm run bench -- audit [--records 1000000] [--changes 3000] [--concurrency 1,8,32] [--runs 3]
 */
import canonicalize from 'canonicalize';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { AuditChain, type AuditEntry } from '../../core/roles/programs/audit/chain.js';
import { canonicalText, type HashedFields } from '../../core/roles/programs/audit/record.js';
import { Database } from '../../core/store/database.js';
import { option, percentile, printTable, textOption } from './stats.js';

const ITEMS = 1000;

function entryFor(i: number): AuditEntry {
  return {
    principalName: i % 5 === 0 ? 'alice' : 'mes-token',
    onBehalfOf: i % 5 === 0 ? null : 'operator-bob',
    authMethod: i % 5 === 0 ? 'session' : 'serviceToken',
    category: i % 3 === 0 ? 'deployment' : 'vault',
    action: i % 3 === 0 ? 'deploy' : 'update',
    entityType: i % 3 === 0 ? 'deployment' : 'version',
    entityId: String(i % ITEMS),
    machine: i % 3 === 0 ? `MC-${i % 40}` : null,
    details: { value: i, notes: 'nightly batch, fixture 12' },
  };
}

/** Measures how late a 10 ms timer fires while `work` runs; returns the worst lag in ms. */
async function withTimerLag<T>(work: () => Promise<T>): Promise<{ result: T; lagMaxMs: number }> {
  let last = performance.now();
  let lagMaxMs = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    lagMaxMs = Math.max(lagMaxMs, now - last - 10);
    last = now;
  }, 10);
  try {
    return { result: await work(), lagMaxMs };
  } finally {
    clearInterval(timer);
  }
}

interface ChangeFigures {
  perSec: number;
  p50Ms: number;
  p99Ms: number;
}

/** `total` changes spread over `concurrency` request loops; each change is one write transaction. */
async function changes(db: Database, chain: AuditChain | null, total: number, concurrency: number, clock: { now: number }): Promise<ChangeFigures> {
  const latencies: number[] = [];
  let next = 0;
  const loop = async () => {
    while (next < total) {
      const i = next++;
      const began = performance.now();
      await db.write(
        async (tx) => {
          clock.now++;
          await tx.run('UPDATE bench_item SET value = value + 1, updated_at = ? WHERE id = ?', [clock.now, i % ITEMS]);
          if (chain) await chain.append(tx, entryFor(i));
        },
        { transaction: true },
      );
      latencies.push(performance.now() - began);
    }
  };
  const t0 = performance.now();
  await Promise.all(Array.from({ length: concurrency }, loop));
  const sec = (performance.now() - t0) / 1000;
  return { perSec: total / sec, p50Ms: percentile(latencies, 50), p99Ms: percentile(latencies, 99) };
}

function canonicalRates(samples: number): { library: number; builder: number } {
  const records: HashedFields[] = Array.from({ length: 1000 }, (_, i) => {
    const e = entryFor(i);
    return {
      seq: i + 1,
      time: new Date(1_790_000_000_000 + i).toISOString(),
      principalName: e.principalName,
      onBehalfOf: e.onBehalfOf ?? null,
      authMethod: e.authMethod,
      category: e.category,
      action: e.action,
      entityType: e.entityType ?? null,
      entityId: e.entityId ?? null,
      machine: e.machine ?? null,
      details: canonicalize(e.details) ?? null,
      prevHash: 'a'.repeat(64),
    };
  });
  const rate = (f: (r: HashedFields) => string | undefined) => {
    let bytes = 0;
    const t0 = performance.now();
    for (let i = 0; i < samples; i++) bytes += f(records[i % records.length] as HashedFields)?.length ?? 0;
    if (bytes === 0) throw new Error('nothing canonicalised');
    return samples / ((performance.now() - t0) / 1000);
  };
  rate(canonicalize);
  rate(canonicalText);
  return { library: rate(canonicalize), builder: rate(canonicalText) };
}

export async function run(args: string[]): Promise<void> {
  const records = option(args, 'records', 1_000_000);
  const total = option(args, 'changes', 3000);
  const runs = option(args, 'runs', 3);
  const levels = (textOption(args, 'concurrency') ?? '1,8,32').split(',').map(Number);
  const dir = mkdtempSync(join(tmpdir(), 'gw-bench-audit-'));
  const file = join(dir, 'service.db');
  const db = await Database.open(file);
  const clock = { now: Date.UTC(2026, 0, 1) };
  const rows: [string, string, string][] = [];
  const json: Record<string, unknown> = { records, changes: total, cpus: cpus().length, loadavg: loadavg()[0] };
  try {
    const chain = await AuditChain.open(db, { timeZone: 'UTC', clock: () => clock.now });
    process.stdout.write(`audit: ${cpus().length} CPUs, load average ${loadavg()[0]?.toFixed(1)} at start\n`);

    const t0 = performance.now();
    for (let i = 0; i < records; i += 1000) {
      const batch = Array.from({ length: Math.min(1000, records - i) }, (_, k) => entryFor(i + k));
      clock.now += 7;
      await db.write((tx) => chain.appendMany(tx, batch), { transaction: true });
    }
    const fillPerSec = records / ((performance.now() - t0) / 1000);
    const sizeMb = statSync(file).size / 1024 / 1024;
    rows.push(['bulk append (appendMany, 1000 per tx)', `${fillPerSec.toFixed(0)} records/s`, '-']);
    Object.assign(json, { fillPerSec, sizeMb });
    process.stdout.write(`filled ${records} records in ${(records / fillPerSec).toFixed(1)} s, database ${sizeMb.toFixed(0)} MB\n`);

    await db.write((tx) => tx.run('CREATE TABLE bench_item (id INTEGER PRIMARY KEY, value INTEGER NOT NULL, updated_at INTEGER NOT NULL)'));
    await db.write((tx) => tx.run(`WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < ${ITEMS - 1}) INSERT INTO bench_item SELECT i, 0, 0 FROM n`));
    const changeFigures: Record<string, ChangeFigures> = {};
    for (const c of levels) {
      const plain = await changes(db, null, total, c, clock);
      const audited = await changes(db, chain, total, c, clock);
      changeFigures[`plain_c${c}`] = plain;
      changeFigures[`audited_c${c}`] = audited;
      rows.push([`change + audit record, ${c} concurrent`, `${audited.perSec.toFixed(0)}/s p50 ${audited.p50Ms.toFixed(2)} p99 ${audited.p99Ms.toFixed(2)} ms`, '>= 1,000/s']);
      rows.push([`change alone, ${c} concurrent`, `${plain.perSec.toFixed(0)}/s p50 ${plain.p50Ms.toFixed(2)} p99 ${plain.p99Ms.toFixed(2)} ms`, '-']);
    }
    json.changes = changeFigures;

    const chainLength = (await chain.committedHead()).seq;
    const verifies: { perSec: number; cpuPerSec: number; lagMaxMs: number }[] = [];
    for (let r = 0; r < runs; r++) {
      const cpu0 = process.cpuUsage();
      const began = performance.now();
      const { result, lagMaxMs } = await withTimerLag(() => chain.verify());
      const sec = (performance.now() - began) / 1000;
      const cpu = process.cpuUsage(cpu0);
      if (!result.intact || result.checked !== chainLength) throw new Error(`verify: ${JSON.stringify(result)}`);
      verifies.push({ perSec: chainLength / sec, cpuPerSec: chainLength / ((cpu.user + cpu.system) / 1e6), lagMaxMs });
    }
    const byRate = [...verifies].sort((a, b) => a.perSec - b.perSec);
    const median = byRate[Math.floor(byRate.length / 2)]!;
    rows.push([`verify ${chainLength} records, median of ${runs}`, `${median.perSec.toFixed(0)} records/s`, '>= 200,000/s']);
    rows.push(['verify, best run', `${byRate[byRate.length - 1]!.perSec.toFixed(0)} records/s`, '>= 200,000/s']);
    rows.push(['verify per CPU second (all threads)', `${median.cpuPerSec.toFixed(0)} records`, '-']);
    rows.push(['timer lag during verify, max', `${Math.max(...verifies.map((v) => v.lagMaxMs)).toFixed(1)} ms`, '-']);
    json.verify = verifies;

    const canonical = canonicalRates(300_000);
    rows.push(['canonical text, canonicalize library', `${canonical.library.toFixed(0)} records/s`, '-']);
    rows.push(['canonical text, chain builder', `${canonical.builder.toFixed(0)} records/s`, '-']);
    json.canonical = canonical;

    printTable(`audit chain (load average ${loadavg()[0]?.toFixed(1)} at end, ${cpus().length} CPUs)`, rows);
    process.stdout.write(`${JSON.stringify(json)}\n`);
  } finally {
    await db.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

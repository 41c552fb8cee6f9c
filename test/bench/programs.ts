/**
 * The program service's benchmark, in one process:
 *  1. NC diff of two 100,000-block programs with 1% of the blocks changed,
 *     p50/p95, against the system's `diff -u` on the same files (target p95
 *     <= 300 ms) — the programs-diff benchmark;
 *  2. audit: verify over 1,000,000 records (target >= 200,000 records/s) and
 *     changes per second with their audit record in the same transaction
 *     (target >= 1,000/s) — the audit benchmark;
 *  3. a 1 MiB version upload (POST /programs/{id}/versions, base64 JSON) and
 *     its content download (GET /versions/{id}/content), through a real
 *     program service listening on 127.0.0.1 with a service token: p50/p95
 *     (target upload p95 <= 60 ms).
 *
 *   npm run bench -- programs [--uploads 60] [--skip-diff] [--skip-audit] [--records 1000000]
 */
import { NO_RATE_LIMITS } from '../../core/http/rate-limit.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { ProgramsRole } from '../../core/roles/programs/role.js';
import { createAccountsPlugin } from '../../plugins/accounts/index.js';
import { auditApiPlugin } from '../../plugins/audit-api/index.js';
import { vaultPlugin } from '../../plugins/vault/index.js';
import { option, percentile, printTable } from './stats.js';

const TARGET_UPLOAD_P95_MS = 60;
const MIB = 1024 * 1024;

async function uploadDownload(args: string[]): Promise<void> {
  const uploads = option(args, 'uploads', 60);
  const dir = mkdtempSync(join(tmpdir(), 'programs-bench-'));
  const password = 'bench-admin-password';
  const role = await ProgramsRole.create({
    dataDir: dir, timeZone: 'UTC', logger: pino({ level: 'warn' }), version: 'bench', env: { PROGRAMS_ADMIN_PASSWORD: password },
    // Throughput is measured: no request limits.
    rateLimits: NO_RATE_LIMITS,
    // The sign-in cost is not what is measured here.
    plugins: [createAccountsPlugin({ passwordCost: { N: 1024, r: 8, p: 1 } }), vaultPlugin, auditApiPlugin],
  });
  try {
    const url = `${await role.listen('127.0.0.1', 0)}/api/v1`;
    const json = { 'content-type': 'application/json' };
    const login = await fetch(`${url}/auth/login`, { method: 'POST', headers: json, body: JSON.stringify({ username: 'admin', password }) });
    const cookie = (login.headers.get('set-cookie') ?? '').split(';')[0] as string;
    const csrf = ((await login.json()) as { csrfToken: string }).csrfToken;
    const asAdmin = { ...json, cookie, 'x-csrf-token': csrf };
    const created = (await (await fetch(`${url}/admin/service-tokens`, { method: 'POST', headers: asAdmin, body: JSON.stringify({ name: 'bench CAM', role: 'integration' }) })).json()) as { token: string };
    const lib = (await (await fetch(`${url}/libraries`, { method: 'POST', headers: asAdmin, body: JSON.stringify({ name: 'Bench', approvalPolicy: { mode: 'autoRelease' } }) })).json()) as { id: string };
    const bearer = { ...json, authorization: `Bearer ${created.token}` };
    const prg = (await (await fetch(`${url}/programs`, { method: 'POST', headers: bearer, body: JSON.stringify({ libraryId: lib.id, name: 'O9999', controller: 'fanuc' }) })).json()) as { id: string };

    // A 1 MiB program of realistic blocks, different each time (so nothing is cached along the way).
    const program = (n: number): Buffer => {
      const lines: string[] = ['%', `O9999 (BENCH ${n})`];
      let size = 20;
      for (let i = 1; size < MIB; i++) {
        const line = `N${i} G1 X${((i * 7 + n) % 5000) / 10} Y${((i * 13) % 3000) / 10} Z-${(i % 50) / 10} F${200 + (i % 7) * 25}`;
        lines.push(line);
        size += line.length + 2;
      }
      return Buffer.from(`${lines.join('\r\n')}\r\n`).subarray(0, MIB);
    };
    const up: number[] = [];
    const down: number[] = [];
    const ids: string[] = [];
    for (let i = 0; i < uploads + 5; i++) {
      const body = JSON.stringify({ contentBase64: program(i).toString('base64'), notes: `bench ${i}` });
      const started = performance.now();
      const res = await fetch(`${url}/programs/${prg.id}/versions`, { method: 'POST', headers: bearer, body });
      const version = (await res.json()) as { id: string; size: number };
      const ms = performance.now() - started;
      if (res.status !== 201 || version.size !== MIB) throw new Error(`upload answered ${res.status}`);
      if (i >= 5) up.push(ms); // the first five warm up
      ids.push(version.id);
    }
    for (let i = 0; i < uploads + 5; i++) {
      const started = performance.now();
      const res = await fetch(`${url}/versions/${ids[i]}/content`, { headers: { authorization: `Bearer ${created.token}` } });
      const bytes = Buffer.from(await res.arrayBuffer());
      const ms = performance.now() - started;
      if (bytes.length !== MIB) throw new Error(`download gave ${bytes.length} bytes`);
      if (i >= 5) down.push(ms);
    }
    const rows: [string, string, string][] = [
      ['1 MiB upload p50 / p95', `${percentile(up, 50).toFixed(1)} / ${percentile(up, 95).toFixed(1)} ms`, `p95 ≤ ${TARGET_UPLOAD_P95_MS} ms`],
      ['1 MiB content download p50 / p95', `${percentile(down, 50).toFixed(1)} / ${percentile(down, 95).toFixed(1)} ms`, ''],
      ['uploads measured', String(up.length), 'base64 JSON over HTTP, service token, SQLite BLOB + audit record in one transaction'],
      ['load average 1 min', (loadavg()[0] as number).toFixed(2), ''],
    ];
    printTable('Program service: 1 MiB version upload and download', rows);
    process.stdout.write(`${JSON.stringify({ bench: 'programs-upload', uploads: up.length, upload: { p50: percentile(up, 50), p95: percentile(up, 95) }, download: { p50: percentile(down, 50), p95: percentile(down, 95) } })}\n`);
  } finally {
    await role.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function run(args: string[]): Promise<void> {
  if (!args.includes('--skip-diff')) await (await import('./programs-diff.js')).run(args.filter((a) => a !== '--skip-audit'));
  if (!args.includes('--skip-audit')) await (await import('./audit.js')).run(args.filter((a) => a !== '--skip-diff'));
  await uploadDownload(args);
}

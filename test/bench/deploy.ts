/**
 * Deployment benchmark, in one process: a gateway with `--machines` (100)
 * simulated machines, and the program service reaching it in-process.
 *  1. baseline: the same 256 KiB upload and read-back to every machine, called
 *     directly on the gateway's link, 4 at a time (the service's limit per gateway);
 *  2. one batch through the service (POST /deployments, persisted actors,
 *     transform, audit, webhooks): total time, and baseline ÷ service (target >= 0.8);
 *  3. webhook latency: from a deployment's final status to its
 *     deployment.completed at a receiver on 127.0.0.1 (target p99 <= 500 ms);
 *  4. the same batch with the service stopped and started again mid-way:
 *     Succeeded count and transfers repeated (target: 100 and 0). The stop is
 *     the role's stop inside this process, not a killed process.
 *
 *   npm run bench -- deploy [--machines 100] [--kib 256] [--profile file.cpuprofile] [--without-webhooks]
 *
 * --profile writes a CPU profile of the process (sampled every 100 µs) during the batch through the
 * service (step 2), and one of the baseline (step 1) beside it, named *.baseline.cpuprofile.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { InProcessGatewayLink } from '../../core/gateway-link/in-process.js';
import type { GatewayLink } from '../../core/gateway-link/types.js';
import { CountingLink } from '../fixtures/counting-link.js';
import { ProgramsRole } from '../../core/roles/programs.js';
import { createAccountsPlugin } from '../../plugins/accounts/index.js';
import { assignmentsPlugin } from '../../plugins/assignments/index.js';
import { deploymentsPlugin } from '../../plugins/deployments/index.js';
import { gatewaysPlugin } from '../../plugins/gateways/index.js';
import { vaultPlugin } from '../../plugins/vault/index.js';
import { webhooksPlugin } from '../../plugins/webhooks/index.js';
import { simMachine, startTestGateway } from '../fixtures/gateway.js';
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { option, percentile, printTable, textOption } from './stats.js';

const DIR = '//CNC_MEM/USER/PATH1/';


function program(kib: number, tag: string): Buffer {
  const lines = ['%', `O6001 (BENCH ${tag})`];
  let size = 20;
  for (let i = 1; size < kib * 1024; i++) {
    const line = `N${i} G1 X${(i * 7) % 5000}.${i % 10} Y${(i * 13) % 3000}.5 F${200 + (i % 9) * 25}`;
    lines.push(line);
    size += line.length + 1;
  }
  lines.push('M30', '%');
  return Buffer.from(`${lines.join('\n')}\n`).subarray(0, kib * 1024);
}

export async function run(args: string[]): Promise<void> {
  const count = option(args, 'machines', 100);
  const kib = option(args, 'kib', 256);
  // Diagnostic: the batch with no webhook endpoint, to see what delivering the events costs the batch.
  const withoutWebhooks = args.includes('--without-webhooks');
  const ids = Array.from({ length: count }, (_, i) => `B${String(i + 1).padStart(3, '0')}`);
  const gw = await startTestGateway({
    machines: ids.map((id) => simMachine(id, { tasks: { CNCStatus: { enabled: true, intervalMs: 5000 } } })),
    groups: [{ groupID: 'bench', name: 'Bench', machineIDs: ids }],
  });
  const content = program(kib, 'A');
  // The second batch sends other bytes, so its resumed transfers cannot find the first batch's file on the machines.
  const contentB = program(kib, 'B');
  const received = new Map<string, number>();
  // The receiver runs in its own process, as a real one would.
  const hook = spawn(process.execPath, ['--import', 'tsx', join(import.meta.dirname, 'webhook-receiver.ts')], { stdio: ['ignore', 'pipe', 'inherit'] });
  let hookOut = '';
  const hookPort = new Promise<number>((resolve, reject) => {
    hook.stdout.on('data', (d: Buffer) => {
      hookOut += d.toString();
      let nl: number;
      while ((nl = hookOut.indexOf('\n')) >= 0) {
        const line = hookOut.slice(0, nl);
        hookOut = hookOut.slice(nl + 1);
        const [a, b] = line.split(' ');
        if (a === 'port') resolve(Number(b));
        else if (a && b) received.set(a, Number(b));
      }
    });
    hook.on('exit', () => reject(new Error('the webhook receiver exited')));
  });
  const hookUrl = `http://127.0.0.1:${await hookPort}/`;
  const rows: [string, string, string][] = [];
  const json: Record<string, unknown> = { machines: count, kib };
  const dirs: string[] = [];
  try {
    const profileFile = textOption(args, 'profile');
    const profiler = profileFile ? new Session() : undefined;
    const startProfile = async () => {
      if (!profiler) return;
      await profiler.post('Profiler.enable');
      await profiler.post('Profiler.setSamplingInterval', { interval: 100 });
      await profiler.post('Profiler.start');
    };
    const stopProfile = async (file: string) => {
      if (!profiler) return;
      const { profile } = await profiler.post('Profiler.stop');
      writeFileSync(file, JSON.stringify(profile));
    };
    profiler?.connect();
    // Each measured run starts from a collected heap, so neither pays for the other's garbage (npm run bench exposes gc).
    const collect = () => (globalThis as { gc?: () => void }).gc?.();
    // 1. Baseline: upload and read back directly, 4 at a time.
    const direct = new InProcessGatewayLink(gw.gateway.context.interfaces);
    collect();
    await startProfile();
    const t0 = performance.now();
    let next = 0;
    await Promise.all(Array.from({ length: 4 }, async () => {
      while (next < ids.length) {
        const id = ids[next++] as string;
        await direct.uploadProgram(id, DIR, 'BASELINE', content);
        await direct.downloadProgram(id, DIR, 'BASELINE');
      }
    }));
    const baselineMs = performance.now() - t0;
    if (profileFile) await stopProfile(profileFile.replace(/(\.cpuprofile)?$/, '.baseline.cpuprofile'));

    const start = async (link: GatewayLink, dataDir: string) => {
      const role = await ProgramsRole.create({
        dataDir, timeZone: 'UTC', logger: pino({ level: 'warn' }), version: 'bench', env: { PROGRAMS_ADMIN_PASSWORD: 'bench-admin-password' }, localGateway: link,
        plugins: [createAccountsPlugin({ passwordCost: { N: 1024, r: 8, p: 1 } }), vaultPlugin, gatewaysPlugin, assignmentsPlugin, deploymentsPlugin, webhooksPlugin],
      });
      const base = `${await role.listen('127.0.0.1', 0)}/api/v1`;
      const login = await fetch(`${base}/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'admin', password: 'bench-admin-password' }) });
      const headers = { 'content-type': 'application/json', cookie: (login.headers.get('set-cookie') ?? '').split(';')[0] as string, 'x-csrf-token': ((await login.json()) as { csrfToken: string }).csrfToken };
      const call = async (method: string, path: string, body?: unknown) => (await fetch(`${base}${path}`, { method, headers, ...(body !== undefined ? { body: JSON.stringify(body) } : {}) })).json() as Promise<Record<string, unknown>>;
      return { role, call };
    };
    const prepare = async (call: Awaited<ReturnType<typeof start>>['call'], name: string, bytes: Buffer) => {
      const lib = await call('POST', '/libraries', { name, approvalPolicy: { mode: 'autoRelease' } });
      const prg = await call('POST', '/programs', { libraryId: lib.id, name: 'BENCH', controller: 'fanuc' });
      const version = await call('POST', `/programs/${String(prg.id)}/versions`, { contentBase64: bytes.toString('base64'), notes: 'bench' });
      await call('POST', `/versions/${String(version.id)}/submit`);
      const groups = (await call('GET', '/machine-groups')).items as { id: string; gatewayGroupId: string }[];
      const group = groups.find((g) => g.gatewayGroupId === 'bench') as { id: string };
      const assignment = await call('POST', '/machine-assignments', { programId: prg.id, groupId: group.id, dir: DIR });
      return { versionId: String(version.id), assignmentId: String(assignment.id) };
    };
    const settle = async (call: Awaited<ReturnType<typeof start>>['call'], batchId: string, until: (done: number) => boolean) => {
      for (;;) {
        const items = (await call('GET', `/deployments?batchId=${batchId}&limit=1000`)).items as { id: string; status: string; finishedAt: string | null }[];
        const done = items.filter((d) => d.status === 'Succeeded' || d.status === 'Failed').length;
        if (until(done)) return items;
        await new Promise((r) => setTimeout(r, 200));
      }
    };

    // 2 and 3: one batch through the service.
    const dirA = mkdtempSync(join(tmpdir(), 'bench-deploy-'));
    dirs.push(dirA);
    const linkA = new CountingLink(direct);
    const a = await start(linkA, dirA);
    if (!withoutWebhooks) await a.call('POST', '/admin/webhooks', { url: hookUrl, events: ['deployment.completed', 'deployment.failed'] });
    const planA = await prepare(a.call, 'Bench A', content);
    collect();
    await startProfile();
    const t1 = performance.now();
    const startedAt = Date.now();
    const batch = await a.call('POST', '/deployments', { versionId: planA.versionId, assignmentIds: [planA.assignmentId], isTrial: false, trialHours: null });
    const acceptedMs = performance.now() - t1;
    // Waits for the webhooks rather than polling, so no reader competes with the batch for the process.
    const batchIds = new Set(((batch.deployments ?? []) as { id: string }[]).map((d) => d.id));
    for (const deadline = Date.now() + (withoutWebhooks ? 0 : 60_000); [...batchIds].some((id) => !received.has(id)) && Date.now() < deadline; ) await new Promise((r) => setTimeout(r, 20));
    const finished = await settle(a.call, String(batch.batchId), (done) => done === count);
    const polledMs = performance.now() - t1;
    if (profileFile) await stopProfile(profileFile);
    profiler?.disconnect();
    // The service's own record of when the last deployment reached its final status (the polling above only notices it up to 200 ms later).
    const serviceMs = Math.max(...finished.map((d) => Date.parse(d.finishedAt as string))) - startedAt;
    const succeeded = finished.filter((d) => d.status === 'Succeeded').length;
    // Where a deployment's time goes, from the service's own timelines: waiting in the queue, transferring, verifying.
    const phases: Record<string, number[]> = {};
    for (const d of finished) {
      const detail = (await a.call('GET', `/deployments/${d.id}`)) as { timeline: { status: string; at: string }[] };
      for (let i = 1; i < detail.timeline.length; i++) {
        const from = detail.timeline[i - 1] as { status: string; at: string };
        const to = detail.timeline[i] as { status: string; at: string };
        (phases[`${from.status} → ${to.status}`] ??= []).push(Date.parse(to.at) - Date.parse(from.at));
      }
    }
    for (const [phase, ms] of Object.entries(phases)) rows.push([`  ${phase}: mean / p50 / max, ms`, `${(ms.reduce((x, y) => x + y, 0) / ms.length).toFixed(1)} / ${percentile(ms, 50).toFixed(0)} / ${Math.max(...ms).toFixed(0)}`, '']);
    const hookDeadline = Date.now() + 10_000;
    while (finished.some((d) => !received.has(d.id)) && Date.now() < hookDeadline) await new Promise((r) => setTimeout(r, 10));
    const latencies = finished.filter((d) => received.has(d.id) && d.finishedAt).map((d) => (received.get(d.id) as number) - Date.parse(d.finishedAt as string));
    await a.role.stop();

    // 4. Stop and start again mid-way.
    const dirB = mkdtempSync(join(tmpdir(), 'bench-deploy-'));
    dirs.push(dirB);
    const linkB = new CountingLink(direct);
    let b = await start(linkB, dirB);
    const planB = await prepare(b.call, 'Bench B', contentB);
    const batchB = await b.call('POST', '/deployments', { versionId: planB.versionId, assignmentIds: [planB.assignmentId], isTrial: false, trialHours: null });
    await settle(b.call, String(batchB.batchId), (done) => done >= count / 3);
    await b.role.stop();
    b = await start(linkB, dirB);
    const afterRestart = await settle(b.call, String(batchB.batchId), (done) => done === count);
    const restartSucceeded = afterRestart.filter((d) => d.status === 'Succeeded').length;
    await b.role.stop();

    const ratio = baselineMs / serviceMs;
    rows.push(
      ['machines / program size', `${count} / ${kib} KiB`, ''],
      ['baseline: direct upload + read-back, 4 at a time', `${baselineMs.toFixed(0)} ms`, ''],
      ['service: POST /deployments to the last final status (finishedAt)', `${serviceMs.toFixed(0)} ms (${succeeded} Succeeded, ${linkA.uploads} transfers)`, ''],
      ['  until every deployment.completed webhook arrived', `${polledMs.toFixed(0)} ms`, ''],
      ['  of which POST /deployments answered (100 files made, stored, queued)', `${acceptedMs.toFixed(0)} ms`, ''],
      ['ratio baseline ÷ service', ratio.toFixed(2), '>= 0.8'],
      ['webhook latency p50 / p99', `${percentile(latencies, 50).toFixed(1)} / ${percentile(latencies, 99).toFixed(1)} ms (${latencies.length} events)`, 'p99 <= 500 ms'],
      ['stop + start mid-batch: Succeeded', `${restartSucceeded} of ${count}`, `${count}`],
      ['stop + start mid-batch: transfers repeated', `${linkB.uploads - count}`, '0'],
      ['load average 1 min', (loadavg()[0] as number).toFixed(2), ''],
    );
    Object.assign(json, { baselineMs, serviceMs, polledMs, acceptedMs, ratio, succeeded, transfers: linkA.uploads, webhook: { p50: percentile(latencies, 50), p99: percentile(latencies, 99), n: latencies.length }, restart: { succeeded: restartSucceeded, transfers: linkB.uploads } });
    printTable('Deployments', rows);
    process.stdout.write(`${JSON.stringify({ bench: 'deploy', ...json })}\n`);
  } finally {
    hook.kill('SIGTERM');
    await gw.stop();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  }
}

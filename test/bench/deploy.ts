/**
 * Deployment benchmark: a gateway with `--machines` (100) simulated machines,
 * and the program service reaching it in-process, in this process.
 *  1. baseline: the same 256 KiB upload and read-back (hashed at the gateway) to every machine, called
 *     directly on the gateway's link, 4 at a time (the service's limit per gateway);
 *  2. one batch through the service (POST /deployments, persisted actors,
 *     transform, audit, webhooks), to its last final status;
 *     each measured after one unmeasured run of its own, then in `--rounds` (3)
 *     rounds of 1 and 2 one after the other: the medians, and their ratio
 *     baseline ÷ service (target >= 0.8);
 *  3. webhook latency: from a deployment's final status to its
 *     deployment.completed at a receiver on 127.0.0.1, in its own process
 *     (target p99 <= 500 ms);
 *  4. the same batch to 100 scripted machines on a second gateway, reached over
 *     HTTP by the service running as its own process, which is killed with
 *     SIGKILL once a third of the batch succeeded and started again: Succeeded
 *     count, and uploads that reached a machine more than once (target: 100 and 0).
 *
 *   npm run bench -- deploy [--machines 100] [--kib 256] [--rounds 3] [--profile file.cpuprofile] [--without-webhooks]
 *
 * --profile writes CPU profiles (sampled every 100 µs) of the last round: the
 * batch through the service to `file`, the baseline to *.baseline.cpuprofile.
 */
import { NO_RATE_LIMITS } from '../../core/http/rate-limit.js';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { InProcessGatewayLink } from '../../core/gateway-link/in-process.js';
import { CountingLink } from '../fixtures/counting-link.js';
import { parseConfig } from '../../core/roles/index.js';
import { ProgramsRole } from '../../core/roles/programs/role.js';
import { createAccountsPlugin } from '../../plugins/accounts/index.js';
import { assignmentsPlugin } from '../../plugins/assignments/index.js';
import { deploymentsPlugin } from '../../plugins/deployments/index.js';
import { gatewaysPlugin } from '../../plugins/gateways/index.js';
import { vaultPlugin } from '../../plugins/vault/index.js';
import { webhooksPlugin } from '../../plugins/webhooks/index.js';
import { simMachine, startTestGateway } from '../fixtures/gateway.js';
import { adminOf } from '../fixtures/programs-process.js';
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { option, percentile, printTable, textOption } from './stats.js';

import { ADMIN_PASSWORD, DIR, killedBatch } from './deploy-killed.js';


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

/** The webhook receiver, in its own process as a real one would be: when each deployment's event arrived. */
async function startReceiver(): Promise<{ hook: ReturnType<typeof spawn>; received: Map<string, number>; url: string }> {
  const received = new Map<string, number>();
  const hook = spawn(process.execPath, ['--import', 'tsx', join(import.meta.dirname, 'webhook-receiver.ts')], { stdio: ['ignore', 'pipe', 'inherit'] });
  let hookOut = '';
  const hookPort = new Promise<number>((resolve, reject) => {
    hook.stdout?.on('data', (d: Buffer) => {
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
  return { hook, received, url: `http://127.0.0.1:${await hookPort}/` };
}

/** CPU profiles of the last round (sampled every 100 µs), when --profile names a file. */
function profilerOf(profileFile: string | undefined) {
  const profiler = profileFile ? new Session() : undefined;
  profiler?.connect();
  return {
    async start() {
      if (!profiler) return;
      await profiler.post('Profiler.enable');
      await profiler.post('Profiler.setSamplingInterval', { interval: 100 });
      await profiler.post('Profiler.start');
    },
    async stop(file: string) {
      if (!profiler) return;
      const { profile } = await profiler.post('Profiler.stop');
      writeFileSync(file, JSON.stringify(profile));
    },
    disconnect: () => profiler?.disconnect(),
  };
}

/** The baseline: upload and read back directly on the gateway's link, 4 at a time (the service's limit per gateway). */
function baselineOf(direct: InProcessGatewayLink, ids: readonly string[], content: Buffer): (fileName: string) => Promise<void> {
  return async (fileName) => {
    let next = 0;
    await Promise.all(Array.from({ length: 4 }, async () => {
      while (next < ids.length) {
        const id = ids[next++] as string;
        await direct.uploadProgram(id, DIR, fileName, content);
        // The read-back the service makes: the gateway hashes what it reads.
        await direct.programHash(id, DIR, fileName);
      }
    }));
  };
}

type Call = (method: 'GET' | 'POST', path: string, body?: unknown) => Promise<Record<string, unknown> & { items?: unknown[]; deployments?: unknown[] }>;
interface BatchResult { finished: { id: string; status: string; finishedAt: string | null }[]; acceptedMs: number; polledMs: number; serviceMs: number; transfers: number }

/** The service in this process, reaching the gateway in-process through a link that counts uploads, with the bench group's id. */
async function startService(dir: string, linkA: CountingLink, hookUrl: string | null) {
  const role = await ProgramsRole.create({
    dataDir: dir, timeZone: 'UTC', logger: pino({ level: 'warn' }), version: 'bench', env: { PROGRAMS_ADMIN_PASSWORD: ADMIN_PASSWORD }, localGateway: linkA,
    // The webhook receiver listens on 127.0.0.1, which only the plant setting for private networks lets deliveries reach.
    config: parseConfig({ programs: { webhooks: { allowPrivateNetworks: true } } }),
    // Throughput is measured (the batch is polled as fast as it answers): no request limits.
    rateLimits: NO_RATE_LIMITS,
    plugins: [createAccountsPlugin({ passwordCost: { N: 1024, r: 8, p: 1 } }), vaultPlugin, gatewaysPlugin, assignmentsPlugin, deploymentsPlugin, webhooksPlugin],
  });
  const api = await adminOf(await role.listen('127.0.0.1', 0), ADMIN_PASSWORD);
  const call: Call = async (method, path, body) => (method === 'GET' ? await api.get(path) : await api.post(path, body)).body as Awaited<ReturnType<Call>>;
  if (hookUrl) await call('POST', '/admin/webhooks', { url: hookUrl, events: ['deployment.completed', 'deployment.failed'] });
  const groups = (await call('GET', '/machine-groups')).items as { id: string; gatewayGroupId: string }[];
  const groupId = (groups.find((g) => g.gatewayGroupId === 'bench') as { id: string }).id;
  return { role, call, groupId };
}

/** A published version of a new program (its own file on the machines), assigned to the bench group. */
/** The program number of the last program prepare made: each names its file on the (FANUC) machines by its own number. */
let fileNumber = 7000;

async function prepare(call: Call, groupId: string, name: string, bytes: Buffer): Promise<{ versionId: string; assignmentId: string }> {
  const lib = await call('POST', '/libraries', { name, approvalPolicy: { mode: 'autoRelease' } });
  const prg = await call('POST', '/programs', { libraryId: lib.id, name: name.replace(/\W/g, '').toUpperCase(), controller: 'fanuc', fileName: `O${++fileNumber}` });
  const version = await call('POST', `/programs/${String(prg.id)}/versions`, { contentBase64: bytes.toString('base64'), notes: 'bench' });
  await call('POST', `/versions/${String(version.id)}/submit`);
  const assignment = await call('POST', '/machine-assignments', { programId: prg.id, groupId, dir: DIR });
  return { versionId: String(version.id), assignmentId: String(assignment.id) };
}

/** One batch through the service: POST, then (without polling, so no reader competes with it) every webhook, then the final rows. */
async function batchRun(call: Call, count: number, linkA: CountingLink, received: ReadonlyMap<string, number>, waitForWebhooks: boolean, plan: { versionId: string; assignmentId: string }): Promise<BatchResult> {
  const settle = async (batchId: string) => {
    for (;;) {
      const items = (await call('GET', `/deployments?batchId=${batchId}&limit=1000`)).items as BatchResult['finished'];
      if (items.filter((d) => d.status === 'Succeeded' || d.status === 'Failed').length === count) return items;
      await new Promise((r) => setTimeout(r, 200));
    }
  };
  const uploadsBefore = linkA.uploads;
  const t1 = performance.now();
  const startedAt = Date.now();
  const batch = await call('POST', '/deployments', { versionId: plan.versionId, assignmentIds: [plan.assignmentId], isTrial: false, trialHours: null });
  const acceptedMs = performance.now() - t1;
  const batchIds = ((batch.deployments ?? []) as { id: string }[]).map((d) => d.id);
  for (const deadline = Date.now() + (waitForWebhooks ? 60_000 : 0); batchIds.some((id) => !received.has(id)) && Date.now() < deadline; ) await new Promise((r) => setTimeout(r, 20));
  const finished = await settle(String(batch.batchId));
  const polledMs = performance.now() - t1;
  // The service's own record of when the last deployment reached its final status.
  const serviceMs = Math.max(...finished.map((d) => Date.parse(d.finishedAt as string))) - startedAt;
  return { finished, acceptedMs, polledMs, serviceMs, transfers: linkA.uploads - uploadsBefore };
}

/** Where a deployment's time goes, from the service's own timelines: waiting in the queue, transferring, verifying. */
async function addPhases(call: Call, finished: BatchResult['finished'], phases: Record<string, number[]>): Promise<void> {
  for (const d of finished) {
    const detail = (await call('GET', `/deployments/${d.id}`)) as unknown as { timeline: { status: string; at: string }[] };
    for (let i = 1; i < detail.timeline.length; i++) {
      const from = detail.timeline[i - 1] as { status: string; at: string };
      const to = detail.timeline[i] as { status: string; at: string };
      (phases[`${from.status} → ${to.status}`] ??= []).push(Date.parse(to.at) - Date.parse(from.at));
    }
  }
}

interface Round { baselineMs: number; baselineBusy: number; serviceBusy: number; serviceMs: number; acceptedMs: number; polledMs: number; transfers: number; succeeded: number }

/** The table and the JSON line of the figures. */
function report(shape: { count: number; kib: number; rounds: number }, measured: readonly Round[], latencies: number[], phases: Record<string, number[]>, killed: Awaited<ReturnType<typeof killedBatch>>): void {
  const { count, kib, rounds } = shape;
  const rows: [string, string, string][] = [];
  const median = (pick: (m: Round) => number) => percentile(measured.map(pick), 50);
  const baselineMs = median((m) => m.baselineMs);
  const serviceMs = median((m) => m.serviceMs);
  const ratio = baselineMs / serviceMs;
  const list = (pick: (m: Round) => number) => measured.map((m) => pick(m).toFixed(0)).join(', ');
  for (const [phase, ms] of Object.entries(phases)) rows.push([`  ${phase}: mean / p50 / max, ms`, `${(ms.reduce((x, y) => x + y, 0) / ms.length).toFixed(1)} / ${percentile(ms, 50).toFixed(0)} / ${Math.max(...ms).toFixed(0)}`, '']);
  rows.push(
    ['machines / program size / rounds', `${count} / ${kib} KiB / ${rounds}`, ''],
    ['baseline: direct upload + read-back, 4 at a time (median; each round)', `${baselineMs.toFixed(0)} ms (${list((m) => m.baselineMs)})`, ''],
    ['service: POST /deployments to the last final status (median; each round)', `${serviceMs.toFixed(0)} ms (${list((m) => m.serviceMs)})`, ''],
    ['  Succeeded / transfers, each round', measured.map((m) => `${m.succeeded}/${m.transfers}`).join(', '), `${count}/${count}`],
    ['  until every deployment.completed webhook arrived (median)', `${median((m) => m.polledMs).toFixed(0)} ms`, ''],
    ['  of which POST /deployments answered (median)', `${median((m) => m.acceptedMs).toFixed(0)} ms`, ''],
    ['event loop busy: baseline / service until every webhook arrived (medians)', `${median((m) => m.baselineBusy).toFixed(0)} / ${median((m) => m.serviceBusy).toFixed(0)} ms`, ''],
    ['ratio baseline ÷ service (medians)', ratio.toFixed(2), '>= 0.8'],
    ['webhook latency p50 / p99', `${percentile(latencies, 50).toFixed(1)} / ${percentile(latencies, 99).toFixed(1)} ms (${latencies.length} events)`, 'p99 <= 500 ms'],
    ['SIGKILL + start mid-batch: Succeeded at the kill, then in all', `${killed.succeededAtKill}, then ${killed.succeeded} of ${count}`, `${count}`],
    ['SIGKILL + start mid-batch: uploads that reached the machines', `${killed.uploads} (${killed.repeated} repeated, ${killed.missing} machines without one)`, '0 repeated'],
    ['load average 1 min', (loadavg()[0] as number).toFixed(2), ''],
  );
  const json = { machines: count, kib, rounds: measured, baselineMs, serviceMs, ratio, webhook: { p50: percentile(latencies, 50), p99: percentile(latencies, 99), n: latencies.length }, killed };
  printTable('Deployments', rows);
  process.stdout.write(`${JSON.stringify({ bench: 'deploy', ...json })}\n`);
}

export async function run(args: string[]): Promise<void> {
  const count = option(args, 'machines', 100);
  const kib = option(args, 'kib', 256);
  const rounds = option(args, 'rounds', 3);
  // Diagnostic: the batch with no webhook endpoint, to see what delivering the events costs the batch.
  const withoutWebhooks = args.includes('--without-webhooks');
  const ids = Array.from({ length: count }, (_, i) => `B${String(i + 1).padStart(3, '0')}`);
  const gw = await startTestGateway({
    machines: ids.map((id) => simMachine(id, { tasks: { CNCStatus: { enabled: true, intervalMs: 5000 } } })),
    groups: [{ groupID: 'bench', name: 'Bench', machineIDs: ids }],
  });
  const receiver = await startReceiver().catch(async (err: unknown) => {
    await gw.stop();
    throw err;
  });
  const dirs: string[] = [];
  try {
    const profileFile = textOption(args, 'profile');
    const profiler = profilerOf(profileFile);
    // Each measured run starts from a collected heap, so none pays for another's garbage (npm run bench exposes gc).
    const collect = () => (globalThis as { gc?: () => void }).gc?.();
    const direct = new InProcessGatewayLink(gw.gateway.context.interfaces);
    const baselineRun = baselineOf(direct, ids, program(kib, 'A'));
    const dirA = mkdtempSync(join(tmpdir(), 'bench-deploy-'));
    dirs.push(dirA);
    const linkA = new CountingLink(direct);
    const { role, call, groupId } = await startService(dirA, linkA, withoutWebhooks ? null : receiver.url);
    const batch = (plan: { versionId: string; assignmentId: string }) => batchRun(call, count, linkA, receiver.received, !withoutWebhooks, plan);

    // One unmeasured run of each first, so both are measured with their code compiled, as in a service that has deployed before.
    await baselineRun('WARMUP');
    await batch(await prepare(call, groupId, 'Bench warm-up', program(kib, 'W')));

    // Rounds, each a baseline run and then a batch through the service; the figures are medians over the rounds.
    const measured: Round[] = [];
    const latencies: number[] = [];
    const phases: Record<string, number[]> = {};
    for (let r = 0; r < rounds; r++) {
      const plan = await prepare(call, groupId, `Bench round ${r + 1}`, program(kib, `R${r + 1}`));
      const profiling = profileFile !== undefined && r === rounds - 1;
      collect();
      if (profiling) await profiler.start();
      const elu0 = performance.eventLoopUtilization();
      const t0 = performance.now();
      await baselineRun('BASELINE');
      const baselineMs = performance.now() - t0;
      const baselineBusy = performance.eventLoopUtilization(elu0).active;
      if (profiling && profileFile) await profiler.stop(profileFile.replace(/(\.cpuprofile)?$/, '.baseline.cpuprofile'));
      collect();
      if (profiling) await profiler.start();
      const elu1 = performance.eventLoopUtilization();
      const result = await batch(plan);
      const serviceBusy = performance.eventLoopUtilization(elu1).active;
      if (profiling && profileFile) await profiler.stop(profileFile);
      measured.push({ baselineMs, baselineBusy, serviceBusy, serviceMs: result.serviceMs, acceptedMs: result.acceptedMs, polledMs: result.polledMs, transfers: result.transfers, succeeded: result.finished.filter((d) => d.status === 'Succeeded').length });
      for (const d of result.finished) if (receiver.received.has(d.id) && d.finishedAt) latencies.push((receiver.received.get(d.id) as number) - Date.parse(d.finishedAt));
      await addPhases(call, result.finished, phases);
    }
    profiler.disconnect();
    await role.stop();

    // 4. The same batch with the service, in its own process, killed (SIGKILL) mid-way and started again.
    const killed = await killedBatch(count, program(kib, 'K'), dirs);
    report({ count, kib, rounds }, measured, latencies, phases, killed);
  } finally {
    receiver.hook.kill('SIGTERM');
    await gw.stop();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Cloud relay benchmark, on one machine, three processes (the cloud with its
 * embedded broker, the gateway with its simulated fleet, the load
 * generator), so that none takes turns with another on its event loop:
 *  1. tool calls through the cloud relay against the same calls on the
 *     gateway's own /mcp, rounds alternating, as a ratio (list_groups, a
 *     small answer; list_machines over 1,000 machines, ~160 KB), and the
 *     latency the relay adds (p50/p99, one call at a time);
 *  2. 1,000 light gateway links (MQTT clients that keep a presence with a
 *     last will and answer calls with a small constant) connected to one
 *     cloud: the cloud's RSS and CPU at idle, and the time from a link's
 *     death (its socket closed) to a call on its token answering
 *     GATEWAY_SERVICE_UNAVAILABLE.
 *
 *   npm run bench -- relay [--machines 1000] [--calls 2000] [--concurrency 4] [--rounds 4] [--links 1000] [--deaths 20]
 *
 * `--gateways 20 [--machines-each 50] [--calls 200] [--concurrency 4]` measures instead one agent across
 * plants: an OAuth caller (a token of a real authorization server) that sees every gateway asks
 * get_fleet_status without a gateway, so the cloud asks all of them at once; one of the gateways is
 * unreachable (its token made, nothing connected). Reports the call's p50/p95/p99.
 *
 * `--literal-check [--calls 400] [--rounds 10]` measures instead the cloud's
 * CPU time per relayed list_machines call with the SIMD literal check and
 * with the scalar loop, alternating (see literalCheck).
 */
import { fork, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { MqttClient } from 'mqtt';
import { pino } from 'pino';
import { parseConfig } from '../../core/roles/index.js';
import { Gateway } from '../../core/roles/gateway/gateway.js';
import { DRIVERS } from '../../drivers/registry.js';
import { GATEWAY_PLUGINS } from '../../core/roles/gateway/compose.js';
import { lightLink } from '../fixtures/cloud.js';
import { benchMachines } from './bench-fleet.js';
import type { LoadJob, LoadResult } from './mcp-load.js';
import type { CloudReady, CloudUsage, LiteralCheckSwitch } from './relay-cloud.js';
import { option, percentile, printTable } from './stats.js';

const PROTOCOL = '2025-06-18';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A child process answering one IPC message at a time. */
class Child<Ready> {
  readonly child: ChildProcess;
  readonly ready: Promise<Ready>;

  constructor(script: string, args: string[] = []) {
    this.child = fork(fileURLToPath(new URL(script, import.meta.url)), args, { execArgv: ['--import', 'tsx', ...(process.env.RELAY_BENCH_PROFILE && script.includes('cloud') ? ['--cpu-prof', `--cpu-prof-dir=${process.env.RELAY_BENCH_PROFILE}`] : [])], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    this.ready = script.includes('cloud') ? this.next<Ready>() : Promise.resolve(undefined as Ready);
  }

  next<T>(): Promise<T> {
    return new Promise((resolve, reject) => {
      const onExit = (code: number | null) => reject(new Error(`${String(this.child.spawnargs[2])} exited (${code})`));
      this.child.once('exit', onExit);
      this.child.once('message', (m: T) => {
        this.child.off('exit', onExit);
        resolve(m);
      });
    });
  }

  ask<T>(message: object): Promise<T> {
    const answer = this.next<T>();
    this.child.send(message);
    return answer;
  }

  close(): Promise<void> {
    return new Promise((resolve) => {
      if (this.child.exitCode !== null) return resolve();
      this.child.once('exit', () => resolve());
      this.child.disconnect();
    });
  }
}

async function load(child: Child<undefined>, job: Omit<LoadJob, 'protocol'>): Promise<LoadResult> {
  const result = await child.ask<LoadResult>({ ...job, protocol: PROTOCOL });
  if (result.error) throw new Error(result.error);
  return result;
}

/** One tools/call with an accessToken; its text and how long it took. */
async function callOnce(url: string, token: string, name: string): Promise<{ text: string; ms: number }> {
  const s = performance.now();
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': PROTOCOL, accesstoken: token },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: {} } }),
  });
  const json = (await res.json()) as { result?: { content?: { text?: string }[] } };
  return { text: json.result?.content?.[0]?.text ?? JSON.stringify(json).slice(0, 200), ms: performance.now() - s };
}

/** The cloud (its own process), a gateway of `machines` simulated machines linked to it, and the load generator (its own process). */
async function startRig(machines: number) {
  const cloud = new Child<CloudReady>('./relay-cloud.ts', ['1']);
  const ready = await cloud.ready;
  const token = ready.tokens[0] as string;
  const dataDir = mkdtempSync(join(tmpdir(), 'relay-bench-gw-'));
  const password = 'bench-admin-password';
  const gateway = await Gateway.create({
    config: parseConfig({ gateway: { dataDir, timeZone: 'UTC' }, logLevel: 'warn', mtconnect: { host: '127.0.0.1', port: 0 }, machines: benchMachines(machines), cloudLink: { brokerUrl: ready.brokerUrl, accessToken: token }, communication: { rateLimits: { enabled: false } } }),
    drivers: DRIVERS, plugins: GATEWAY_PLUGINS, logger: pino({ level: 'warn' }), env: { GATEWAY_ADMIN_PASSWORD: password },
  });
  const base = await gateway.listen({ host: '127.0.0.1', port: 0 });
  const jwt = ((await (await fetch(`${base}/api/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'admin', password }) })).json()) as { data: { token: string } }).data.token;
  while ((await cloud.ask<CloudUsage>({ kind: 'usage' })).online < 1) await sleep(50);
  const loader = new Child<undefined>('./mcp-load.ts');
  return {
    cloud, ready, token, gateway, loader,
    direct: { url: `${base}/mcp`, token: jwt },
    relay: { url: ready.mcpUrl, token: null, headers: { accesstoken: token } },
    async close() {
      await loader.close();
      await gateway.stop();
      await cloud.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

async function throughput(args: string[]) {
  const machines = option(args, 'machines', 1000);
  const calls = option(args, 'calls', 2000);
  const concurrency = option(args, 'concurrency', 4);
  const rounds = option(args, 'rounds', 4);
  const rig = await startRig(machines);
  const { cloud, ready, token, loader, direct, relay } = rig;
  process.stdout.write(`relay: ${machines} machines; warming up\n`);
  await sleep(3000);
  for (const target of [direct, relay]) {
    await load(loader, { ...target, tool: 'list_machines', args: {}, calls: 300, concurrency });
    await load(loader, { ...target, tool: 'list_groups', args: {}, calls: 300, concurrency });
  }
  const totals = () => ({ latencies: [] as number[], calls: 0, seconds: 0, cpu: { load: 0, gateway: 0, cloud: 0 } });
  const sums = { directSmall: totals(), relaySmall: totals(), directList: totals(), relayList: totals() };
  const add = (total: ReturnType<typeof totals>, run: LoadResult, n: number) => {
    total.latencies.push(...run.latencies);
    total.calls += n;
    total.seconds += n / run.perSec;
  };
  /** One job, with the CPU time each process spent meanwhile (the gateway's includes its simulated fleet). */
  const measured = async (total: ReturnType<typeof totals>, job: Omit<LoadJob, 'protocol'>) => {
    const cloud0 = (await cloud.ask<CloudUsage>({ kind: 'usage' })).cpuMicros;
    const gw0 = process.cpuUsage();
    const run = await load(loader, job);
    const gw = process.cpuUsage(gw0);
    total.cpu.gateway += gw.user + gw.system;
    total.cpu.cloud += (await cloud.ask<CloudUsage>({ kind: 'usage' })).cpuMicros - cloud0;
    total.cpu.load += run.cpuMicros ?? 0;
    add(total, run, job.calls);
  };
  const perRound = Math.ceil(calls / rounds);
  const rate = (t: ReturnType<typeof totals>) => t.calls / t.seconds;
  for (let round = 0; round < rounds; round++) {
    // Alternating, so both paths see the same background (the fleet's timers and history writes).
    await measured(sums.directSmall, { ...direct, tool: 'list_groups', args: {}, calls: perRound, concurrency });
    await measured(sums.relaySmall, { ...relay, tool: 'list_groups', args: {}, calls: perRound, concurrency });
    await measured(sums.directList, { ...direct, tool: 'list_machines', args: {}, calls: perRound, concurrency });
    await measured(sums.relayList, { ...relay, tool: 'list_machines', args: {}, calls: perRound, concurrency });
    process.stdout.write(`  round ${round + 1}/${rounds}: list_groups ${rate(sums.directSmall).toFixed(0)} direct, ${rate(sums.relaySmall).toFixed(0)} relayed; list_machines ${rate(sums.directList).toFixed(0)} direct, ${rate(sums.relayList).toFixed(0)} relayed calls/s\n`);
  }
  // Added latency: one call at a time, so no queueing behind our own load.
  const latency: Record<string, LoadResult> = {};
  for (const tool of ['list_groups', 'list_machines']) {
    latency[`direct ${tool}`] = await load(loader, { ...direct, tool, args: {}, calls: 300, concurrency: 1 });
    latency[`relay ${tool}`] = await load(loader, { ...relay, tool, args: {}, calls: 300, concurrency: 1 });
  }
  const bytes = Buffer.byteLength((await callOnce(ready.mcpUrl, token, 'list_machines')).text);
  await rig.close();
  const lat = (key: string, p: number) => percentile((latency[key] as LoadResult).latencies, p);
  const cpuPerCall = (t: ReturnType<typeof totals>) => ({ load: t.cpu.load / t.calls, gateway: t.cpu.gateway / t.calls, cloud: t.cpu.cloud / t.calls });
  return {
    machines, concurrency, listMachinesAnswerBytes: bytes,
    listGroupsDirectPerSec: rate(sums.directSmall), listGroupsRelayPerSec: rate(sums.relaySmall), listGroupsRatio: rate(sums.relaySmall) / rate(sums.directSmall),
    listMachinesDirectPerSec: rate(sums.directList), listMachinesRelayPerSec: rate(sums.relayList), listMachinesRatio: rate(sums.relayList) / rate(sums.directList),
    listGroupsAddedP50Ms: lat('relay list_groups', 50) - lat('direct list_groups', 50), listGroupsAddedP99Ms: lat('relay list_groups', 99) - lat('direct list_groups', 99),
    listMachinesAddedP50Ms: lat('relay list_machines', 50) - lat('direct list_machines', 50), listMachinesAddedP99Ms: lat('relay list_machines', 99) - lat('direct list_machines', 99),
    cpuMicrosPerCall: { directListGroups: cpuPerCall(sums.directSmall), relayListGroups: cpuPerCall(sums.relaySmall), directListMachines: cpuPerCall(sums.directList), relayListMachines: cpuPerCall(sums.relayList) },
    latencyMs: Object.fromEntries(Object.keys(latency).map((k) => [k, { p50: lat(k, 50), p99: lat(k, 99) }])),
  };
}

/**
 * --literal-check: the cloud's CPU time per relayed list_machines call with
 * the SIMD literal check and with the scalar loop, switched in the cloud's
 * process between runs, the two forms alternating in every round (ABBA), so
 * that both see the same background. Reports each form's median and spread
 * and the saving per round (each round's two runs compared).
 */
async function literalCheck(args: string[]) {
  const machines = option(args, 'machines', 1000);
  const calls = option(args, 'calls', 400);
  const concurrency = option(args, 'concurrency', 4);
  const rounds = option(args, 'rounds', 10);
  const rig = await startRig(machines);
  const { cloud, loader, relay } = rig;
  const use = async (simd: boolean) => {
    const answer = await cloud.ask<LiteralCheckSwitch>({ kind: 'literalCheck', simd });
    if (simd && !answer.simdAvailable) throw new Error('this Node has no WebAssembly SIMD: nothing to compare');
  };
  process.stdout.write(`relay literal check: ${machines} machines, ${rounds} rounds of ${calls} calls per form; warming up\n`);
  await sleep(3000);
  for (const simd of [true, false]) {
    await use(simd);
    await load(loader, { ...relay, tool: 'list_machines', args: {}, calls: 300, concurrency });
  }
  const perCall = { simd: [] as number[], scalar: [] as number[] };
  const savings: number[] = [];
  for (let round = 0; round < rounds; round++) {
    const order = round % 2 === 0 ? [true, false] : [false, true];
    const got: Record<string, number> = {};
    for (const simd of order) {
      await use(simd);
      const cpu0 = (await cloud.ask<CloudUsage>({ kind: 'usage' })).cpuMicros;
      await load(loader, { ...relay, tool: 'list_machines', args: {}, calls, concurrency });
      got[simd ? 'simd' : 'scalar'] = ((await cloud.ask<CloudUsage>({ kind: 'usage' })).cpuMicros - cpu0) / calls;
    }
    perCall.simd.push(got.simd as number);
    perCall.scalar.push(got.scalar as number);
    savings.push(((got.scalar as number) - (got.simd as number)) / (got.scalar as number));
    process.stdout.write(`  round ${round + 1}/${rounds}: cloud CPU per call ${(got.simd as number).toFixed(0)} µs with SIMD, ${(got.scalar as number).toFixed(0)} µs scalar\n`);
  }
  await use(true);
  const bytes = Buffer.byteLength((await callOnce(rig.ready.mcpUrl, rig.token, 'list_machines')).text);
  await rig.close();
  const spread = (v: number[]) => ({ median: percentile(v, 50), p25: percentile(v, 25), p75: percentile(v, 75), min: Math.min(...v), max: Math.max(...v) });
  return { machines, calls, concurrency, rounds, listMachinesAnswerBytes: bytes, cloudMicrosPerCall: { simd: spread(perCall.simd), scalar: spread(perCall.scalar) }, savingPerRound: spread(savings), perRound: { ...perCall, savings } };
}

/** --gateways: fleet-wide get_fleet_status through an OAuth identity that sees `gateways` gateways, one of them unreachable. */
async function plants(args: string[]) {
  const count = option(args, 'gateways', 20);
  const each = option(args, 'machines-each', 50);
  const calls = option(args, 'calls', 200);
  const concurrency = option(args, 'concurrency', 4);
  const { startTestIssuer } = await import('../fixtures/oidc-issuer.js');
  const { freePort } = await import('../fixtures/free-port.js');
  const port = await freePort();
  const resource = `http://127.0.0.1:${port}/mcp`;
  const issuer = await startTestIssuer({ accounts: [], resources: [{ url: resource, scopes: ['fleet:read'] }] });
  const cloud = new Child<CloudReady>('./relay-cloud.ts', [String(count), issuer.issuer, String(port)]);
  const ready = await cloud.ready;
  const gateways: Gateway[] = [];
  const dirs: string[] = [];
  // The last token's gateway never connects: unreachable.
  for (let g = 0; g < count - 1; g++) {
    const dataDir = mkdtempSync(join(tmpdir(), `relay-bench-plant-${g}-`));
    dirs.push(dataDir);
    gateways.push(await Gateway.create({
      config: parseConfig({ gateway: { dataDir, timeZone: 'UTC' }, logLevel: 'warn', mtconnect: { enabled: false }, machines: benchMachines(each), cloudLink: { brokerUrl: ready.brokerUrl, accessToken: ready.tokens[g] }, communication: { rateLimits: { enabled: false } } }),
      drivers: DRIVERS, plugins: GATEWAY_PLUGINS, logger: pino({ level: 'warn' }), env: { GATEWAY_ADMIN_PASSWORD: 'bench-admin-password' },
    }));
  }
  while ((await cloud.ask<CloudUsage>({ kind: 'usage' })).online < count - 1) await sleep(100);
  const token = await issuer.mint({ sub: 'bench-agent', aud: resource, scope: 'fleet:read', plants: ['all'] }, { expiresInSec: 3600 });
  process.stdout.write(`plants: ${count} gateways (${count - 1} online) x ${each} machines; warming up\n`);
  await sleep(3000);
  const loader = new Child<undefined>('./mcp-load.ts');
  const job = { url: ready.mcpUrl, token, tool: 'get_fleet_status', args: {}, concurrency };
  await load(loader, { ...job, calls: Math.min(50, calls) });
  const result = await load(loader, { ...job, calls });
  await loader.close();
  for (const gw of gateways) await gw.stop();
  await cloud.close();
  await issuer.close();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  const [p50, p95, p99] = [50, 95, 99].map((p) => percentile(result.latencies, p)) as [number, number, number];
  printTable(`One agent across plants (Node ${process.version})`, [
    [`get_fleet_status over ${count} gateways x ${each} machines, one unreachable: p50 / p95 / p99, ms`, `${p50.toFixed(0)} / ${p95.toFixed(0)} / ${p99.toFixed(0)}`, 'p95 <= 2000'],
    ['calls/s', result.perSec.toFixed(1), ''],
  ]);
  process.stdout.write(`${JSON.stringify({ gateways: count, machinesEach: each, calls, concurrency, p50, p95, p99, perSec: result.perSec })}\n`);
}

async function links(args: string[]) {
  const count = option(args, 'links', 1000);
  const deaths = Math.min(count, option(args, 'deaths', 20));
  const cloud = new Child<CloudReady>('./relay-cloud.ts', [String(count)]);
  const ready = await cloud.ready;
  await sleep(1000);
  const before = await cloud.ask<CloudUsage>({ kind: 'usage' });
  const clients: MqttClient[] = [];
  const started = performance.now();
  for (let i = 0; i < count; i += 50) clients.push(...(await Promise.all(ready.tokens.slice(i, i + 50).map((token) => lightLink(ready.brokerUrl, token)))));
  let usage = await cloud.ask<CloudUsage>({ kind: 'usage' });
  while (usage.online < count) {
    await sleep(100);
    usage = await cloud.ask<CloudUsage>({ kind: 'usage' });
  }
  const connectSeconds = (performance.now() - started) / 1000;
  process.stdout.write(`links: ${count} connected in ${connectSeconds.toFixed(1)} s; measuring idle for 10 s\n`);
  await sleep(2000);
  const idleFrom = await cloud.ask<CloudUsage>({ kind: 'usage' });
  const wallFrom = performance.now();
  await sleep(10_000);
  const idleTo = await cloud.ask<CloudUsage>({ kind: 'usage' });
  const idleCpuPercent = ((idleTo.cpuMicros - idleFrom.cpuMicros) / 1000 / (performance.now() - wallFrom)) * 100;
  // A call through a light link, to show the path works.
  const alive = await callOnce(ready.mcpUrl, ready.tokens[0] as string, 'list_groups');
  if (!alive.text.includes('"groups"')) throw new Error(`a call through a light link failed: ${alive.text}`);
  const deathMs: number[] = [];
  for (let i = 0; i < deaths; i++) {
    const index = Math.floor((i * count) / deaths);
    const client = clients[index] as MqttClient;
    const t0 = performance.now();
    client.stream.destroy();
    const answer = await callOnce(ready.mcpUrl, ready.tokens[index] as string, 'list_groups');
    if (!answer.text.includes('GATEWAY_SERVICE_UNAVAILABLE')) throw new Error(`a dead link's call answered ${answer.text.slice(0, 200)}`);
    deathMs.push(performance.now() - t0);
  }
  for (const c of clients) await c.endAsync(true).catch(() => undefined);
  await cloud.close();
  return {
    links: count, connectSeconds, cloudRssBeforeLinksMB: before.rss / 1024 / 1024, cloudRssIdleMB: idleTo.rss / 1024 / 1024, cloudHeapIdleMB: idleTo.heapUsed / 1024 / 1024,
    cloudRssPerLinkKB: (idleTo.rss - before.rss) / 1024 / count, idleCpuPercent,
    deathToUnavailableP50Ms: percentile(deathMs, 50), deathToUnavailableMaxMs: Math.max(...deathMs), deaths,
  };
}

export async function run(args: string[]): Promise<void> {
  if (args.includes('--gateways')) return plants(args);
  if (args.includes('--literal-check')) {
    const r = await literalCheck(args);
    const us = (v: { median: number; p25: number; p75: number; min: number; max: number }) => `${v.median.toFixed(0)} (${v.p25.toFixed(0)}–${v.p75.toFixed(0)}; ${v.min.toFixed(0)}–${v.max.toFixed(0)})`;
    const pct = (x: number) => `${(x * 100).toFixed(1)} %`;
    printTable(`Cloud relay benchmark, literal check (Node ${process.version})`, [
      [`cloud CPU per relayed list_machines, µs, SIMD: median (p25–p75; min–max) (${(r.listMachinesAnswerBytes / 1024).toFixed(0)} KB answer)`, us(r.cloudMicrosPerCall.simd), ''],
      ['cloud CPU per relayed list_machines, µs, scalar: median (p25–p75; min–max)', us(r.cloudMicrosPerCall.scalar), ''],
      ['saved by SIMD per round: median (p25–p75; min–max)', `${pct(r.savingPerRound.median)} (${pct(r.savingPerRound.p25)}–${pct(r.savingPerRound.p75)}; ${pct(r.savingPerRound.min)}–${pct(r.savingPerRound.max)})`, '>= 5 % keeps SIMD'],
    ]);
    process.stdout.write(`${JSON.stringify({ literalCheck: r })}\n`);
    return;
  }
  const only = args.find((a) => a === '--only-links' || a === '--only-calls');
  const calls = only === '--only-links' ? undefined : await throughput(args);
  const linked = only === '--only-calls' ? undefined : await links(args);
  const rows: [string, string, string][] = [];
  if (calls) {
    rows.push(
      ['list_groups direct / relayed, calls/s', `${calls.listGroupsDirectPerSec.toFixed(0)} / ${calls.listGroupsRelayPerSec.toFixed(0)}`, ''],
      ['list_groups relayed / direct', calls.listGroupsRatio.toFixed(2), '>= 0.7'],
      [`list_machines direct / relayed, calls/s (${(calls.listMachinesAnswerBytes / 1024).toFixed(0)} KB answer)`, `${calls.listMachinesDirectPerSec.toFixed(0)} / ${calls.listMachinesRelayPerSec.toFixed(0)}`, ''],
      ['list_machines relayed / direct', calls.listMachinesRatio.toFixed(2), '>= 0.7'],
      ['list_groups added latency p50 / p99, ms', `${calls.listGroupsAddedP50Ms.toFixed(1)} / ${calls.listGroupsAddedP99Ms.toFixed(1)}`, ''],
      ['list_machines added latency p50 / p99, ms', `${calls.listMachinesAddedP50Ms.toFixed(1)} / ${calls.listMachinesAddedP99Ms.toFixed(1)}`, ''],
      ...Object.entries(calls.cpuMicrosPerCall).map(([k, v]): [string, string, string] => [`CPU per call, µs, load / gateway / cloud: ${k}`, `${v.load.toFixed(0)} / ${v.gateway.toFixed(0)} / ${v.cloud.toFixed(0)}`, '']),
    );
  }
  if (linked) {
    rows.push(
      [`${linked.links} links: connected in, s`, linked.connectSeconds.toFixed(1), ''],
      ['cloud RSS before the links / idle with them, MB', `${linked.cloudRssBeforeLinksMB.toFixed(0)} / ${linked.cloudRssIdleMB.toFixed(0)}`, ''],
      ['  per link, KB', linked.cloudRssPerLinkKB.toFixed(1), ''],
      ['cloud CPU at idle with the links, % of one core', linked.idleCpuPercent.toFixed(2), ''],
      [`link death to GATEWAY_SERVICE_UNAVAILABLE p50 / max (${linked.deaths} deaths), ms`, `${linked.deathToUnavailableP50Ms.toFixed(1)} / ${linked.deathToUnavailableMaxMs.toFixed(1)}`, ''],
    );
  }
  printTable(`Cloud relay benchmark (Node ${process.version})`, rows);
  process.stdout.write(`${JSON.stringify({ calls, links: linked })}\n`);
}

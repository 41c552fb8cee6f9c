/**
 * MCP benchmark, in one process:
 *  - tools/call throughput and p50/p99 latency of list_machines and
 *    get_fleet_status against a gateway with 1,000 simulated machines;
 *  - the same for a bare SDK stateless server whose one tool returns a
 *    constant, on the same machine, as the ratio ours/bare; and against a
 *    bare server whose tool returns the same ~160 KB text as our
 *    list_machines (the constant baseline measures the load generator's
 *    parsing of a large answer more than the server);
 *  - RSS after warm-up and after 10,000 calls.
 * The load generator runs as a child process (mcp-load.ts), so that the
 * servers measured have their event loop to themselves and their RSS is
 * theirs alone.
 *
 *   npm run bench -- mcp [--machines 1000] [--calls 10000] [--concurrency 4] [--rounds 5]
 */
import { createServer, type Server as HttpServer } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { parseConfig } from '../../core/roles/index.js';
import { Gateway } from '../../core/roles/gateway/gateway.js';
import { DRIVERS } from '../../drivers/registry.js';
import { GATEWAY_PLUGINS } from '../../core/roles/gateway/compose.js';
import { option, percentile, printTable, settled, type SettledMemory } from './stats.js';
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { benchMachines } from './bench-fleet.js';
import type { LoadJob, LoadResult } from './mcp-load.js';

const PROTOCOL = '2025-06-18';

async function bareServer(answer = '{"value":42}'): Promise<{ url: string; close(): Promise<void> }> {
  const http: HttpServer = createServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d.toString()));
    req.on('end', async () => {
      const server = new McpServer({ name: 'bare', version: '1.0.0' });
      server.registerTool('constant', { description: 'returns a constant' }, async () => ({ content: [{ type: 'text', text: answer }] }));
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
      res.on('close', () => {
        void transport.close();
        void server.close();
      });
      await server.connect(transport);
      await transport.handleRequest(req, res, JSON.parse(body) as unknown);
    });
  });
  await new Promise<void>((r) => http.listen(0, '127.0.0.1', r));
  const address = http.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return { url: `http://127.0.0.1:${port}/mcp`, close: () => new Promise((r) => http.close(() => r())) };
}

/** The load generator in its child process, one job at a time. */
class Load {
  private readonly child: ChildProcess = fork(fileURLToPath(new URL('./mcp-load.ts', import.meta.url)), [], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });

  run(job: Omit<LoadJob, 'protocol'>): Promise<LoadResult> {
    return new Promise((resolve, reject) => {
      const onExit = (code: number | null) => reject(new Error(`load generator exited (${code})`));
      this.child.once('exit', onExit);
      this.child.once('message', (result: LoadResult) => {
        this.child.off('exit', onExit);
        if (result.error) reject(new Error(result.error));
        else resolve(result);
      });
      this.child.send({ ...job, protocol: PROTOCOL });
    });
  }

  close(): Promise<void> {
    return new Promise((resolve) => {
      if (this.child.exitCode !== null) return resolve();
      this.child.once('exit', () => resolve());
      this.child.disconnect();
    });
  }
}

/** A gateway with `machines` simulated machines, listening, and an admin token for it. */
async function startGateway(machines: number): Promise<{ gateway: Gateway; url: string; token: string; dataDir: string }> {
  const dataDir = mkdtempSync(join(tmpdir(), 'gw-bench-mcp-'));
  const config = parseConfig({
    gateway: { dataDir, timeZone: 'UTC' },
    logLevel: 'warn',
    mtconnect: { host: '127.0.0.1', port: 0 },
    machines: benchMachines(machines),
    // Throughput is measured: the default limits would cut it at 1,200 calls a minute.
    communication: { rateLimits: { enabled: false } },
  });
  const password = 'bench-admin-password';
  const gateway = await Gateway.create({ config, drivers: DRIVERS, plugins: GATEWAY_PLUGINS, logger: pino({ level: 'warn' }), env: { GATEWAY_ADMIN_PASSWORD: password } });
  const base = await gateway.listen({ host: '127.0.0.1', port: 0 });
  const login = (await (await fetch(`${base}/api/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'admin', password }) })).json()) as { data: { token: string } };
  return { gateway, url: `${base}/mcp`, token: login.data.token, dataDir };
}

/** One list_machines call over HTTP: the response body as sent. */
async function listMachinesResponse(url: string, token: string): Promise<Response> {
  return fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': PROTOCOL, authorization: `Bearer ${token}` }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'list_machines', arguments: {} } }) });
}

type Memory = SettledMemory;

interface Total { latencies: number[]; calls: number; seconds: number }
const totals = (): Total => ({ latencies: [], calls: 0, seconds: 0 });
const add = (total: Total, run: LoadResult, n: number) => {
  total.latencies.push(...run.latencies);
  total.calls += n;
  total.seconds += n / run.perSec;
};
const asRun = (t: Total) => ({ latencies: t.latencies, perSec: t.calls / t.seconds });

interface Targets { url: string; token: string; bareUrl: string; bareLargeUrl: string }

/** Rounds that alternate the baselines and our tools, so both see the same background (the fleet's own timers and writes). */
async function measureRounds(load: Load, gateway: Gateway, t: Targets, options: { rounds: number; calls: number; concurrency: number }) {
  const { rounds, calls, concurrency } = options;
  const bare = totals();
  const small = totals();
  const list = totals();
  const bareLarge = totals();
  // The history writer's backlog while the calls run: rows queued and rows in flushes not yet committed.
  let maxBacklog = 0;
  const backlogTimer = setInterval(() => {
    const h = gateway.context.history.stats;
    maxBacklog = Math.max(maxBacklog, h.pending + h.inFlight);
  }, 50);
  for (let round = 0; round < rounds; round++) {
    const perRound = Math.ceil(calls / rounds);
    add(bare, await load.run({ url: t.bareUrl, token: null, tool: 'constant', args: {}, calls: 400, concurrency }), 400);
    // Our whole pipeline (auth, per-request server, registry) with a small answer: what list_machines costs beyond its payload.
    add(small, await load.run({ url: t.url, token: t.token, tool: 'list_groups', args: {}, calls: 400, concurrency }), 400);
    add(list, await load.run({ url: t.url, token: t.token, tool: 'list_machines', args: {}, calls: perRound, concurrency }), perRound);
    add(bareLarge, await load.run({ url: t.bareLargeUrl, token: null, tool: 'constant', args: {}, calls: Math.ceil(perRound / 2), concurrency }), Math.ceil(perRound / 2));
    process.stdout.write(`  round ${round + 1}/${rounds}: bare ${(bare.calls / bare.seconds).toFixed(0)}, list_groups ${(small.calls / small.seconds).toFixed(0)}, list_machines ${(list.calls / list.seconds).toFixed(0)} calls/s so far\n`);
  }
  clearInterval(backlogTimer);
  return { bare, small, list, bareLarge, maxBacklog };
}

type Measured = Awaited<ReturnType<typeof measureRounds>>;

function resultOf(m: Measured, fleetRun: LoadResult, mem: { warm: Memory; after: Memory; idle: Memory }, facts: { machines: number; concurrency: number; listBytes: number }) {
  const [bareRun, smallRun, listRun, bareLargeRun] = [m.bare, m.small, m.list, m.bareLarge].map(asRun) as [ReturnType<typeof asRun>, ReturnType<typeof asRun>, ReturnType<typeof asRun>, ReturnType<typeof asRun>];
  const { warm, after, idle } = mem;
  const mb = (bytes: number) => bytes / 1024 / 1024;
  return {
    machines: facts.machines,
    concurrency: facts.concurrency,
    bareCallsPerSec: bareRun.perSec,
    bareP50Ms: percentile(bareRun.latencies, 50),
    bareP99Ms: percentile(bareRun.latencies, 99),
    listGroupsCallsPerSec: smallRun.perSec,
    listGroupsRatio: smallRun.perSec / bareRun.perSec,
    listMachinesBytes: facts.listBytes,
    listMachinesCallsPerSec: listRun.perSec,
    listMachinesP50Ms: percentile(listRun.latencies, 50),
    listMachinesP99Ms: percentile(listRun.latencies, 99),
    listMachinesRatio: listRun.perSec / bareRun.perSec,
    bareSameAnswerCallsPerSec: bareLargeRun.perSec,
    listMachinesSameAnswerRatio: listRun.perSec / bareLargeRun.perSec,
    fleetStatusCallsPerSec: fleetRun.perSec,
    fleetStatusP50Ms: percentile(fleetRun.latencies, 50),
    fleetStatusP95Ms: percentile(fleetRun.latencies, 95),
    fleetStatusP99Ms: percentile(fleetRun.latencies, 99),
    rssWarmMB: mb(warm.rss),
    rssAfterCallsMB: mb(after.rss),
    rssGrowthMB: mb(after.rss - warm.rss),
    heapUsedGrowthMB: mb(after.heapUsed - warm.heapUsed),
    heapTotalGrowthMB: mb(after.heapTotal - warm.heapTotal),
    rssGrowthIdleControlMB: mb(idle.rss - after.rss),
    rssRetainedAfterIdleMB: mb(idle.rss - warm.rss),
    historyBacklogMaxRows: m.maxBacklog,
    externalGrowthMB: mb(after.external - warm.external),
    rssAnonGrowthMB: mb(after.rssAnon - warm.rssAnon),
    rssFileGrowthMB: mb(after.rssFile - warm.rssFile),
    rssShmemGrowthMB: mb(after.rssShmem - warm.rssShmem),
  };
}

function report(result: ReturnType<typeof resultOf>, callCount: number): void {
  const allocator = ['MALLOC_MMAP_THRESHOLD_', 'MALLOC_TRIM_THRESHOLD_'].map((k) => `${k}=${process.env[k] ?? '(glibc default)'}`).join(' ');
  const v8Flags = process.execArgv.filter((a) => a.startsWith('--') && !a.startsWith('--import') && !a.startsWith('--require')).join(' ');
  process.stdout.write(`allocator: ${allocator}; node flags: ${v8Flags || '(none)'}\n`);
  printTable(`MCP benchmark (${result.machines} machines, concurrency ${result.concurrency}, Node ${process.version})`, [
    ['bare SDK server, calls/s', result.bareCallsPerSec.toFixed(0), ''],
    ['list_groups (small answer) / bare', result.listGroupsRatio.toFixed(2), ''],
    [`list_machines, calls/s (${(result.listMachinesBytes / 1024).toFixed(0)} KB answer)`, result.listMachinesCallsPerSec.toFixed(0), ''],
    ['list_machines p50 / p99, ms', `${result.listMachinesP50Ms.toFixed(1)} / ${result.listMachinesP99Ms.toFixed(1)}`, ''],
    ['list_machines / bare', result.listMachinesRatio.toFixed(2), '>= 0.7'],
    ['bare SDK server with the same list_machines answer, calls/s', result.bareSameAnswerCallsPerSec.toFixed(0), ''],
    ['list_machines / bare with the same answer', result.listMachinesSameAnswerRatio.toFixed(2), ''],
    ['get_fleet_status, calls/s (1 at a time)', result.fleetStatusCallsPerSec.toFixed(0), ''],
    ['get_fleet_status p50 / p95 / p99, ms', `${result.fleetStatusP50Ms.toFixed(1)} / ${result.fleetStatusP95Ms.toFixed(1)} / ${result.fleetStatusP99Ms.toFixed(1)}`, 'p95 <= 50'],
    ['RSS after warm-up, MB', result.rssWarmMB.toFixed(0), ''],
    ['RSS after the calls, MB', result.rssAfterCallsMB.toFixed(0), ''],
    [`RSS growth over ${callCount} calls, MB`, result.rssGrowthMB.toFixed(1), '<= 20'],
    ['  JS heap in use / heap reserved / external growth, MB', `${result.heapUsedGrowthMB.toFixed(1)} / ${result.heapTotalGrowthMB.toFixed(1)} / ${result.externalGrowthMB.toFixed(1)}`, ''],
    ['  of which anonymous / file-backed / shared, MB', `${result.rssAnonGrowthMB.toFixed(1)} / ${result.rssFileGrowthMB.toFixed(1)} / ${result.rssShmemGrowthMB.toFixed(1)}`, ''],
    ['  RSS growth over the same time with no calls (control), MB', result.rssGrowthIdleControlMB.toFixed(1), ''],
    ['  RSS after that control, against after warm-up, MB', result.rssRetainedAfterIdleMB.toFixed(1), ''],
    ['history writer backlog during the calls, max rows', String(result.historyBacklogMaxRows), ''],
  ]);
  process.stdout.write(`${JSON.stringify(result)}\n`);
}

export async function run(args: string[]): Promise<void> {
  const machines = option(args, 'machines', 1000);
  const calls = option(args, 'calls', 10_000);
  const concurrency = option(args, 'concurrency', 4);
  const rounds = option(args, 'rounds', 5);
  const { gateway, url, token, dataDir } = await startGateway(machines);
  const bare = await bareServer();
  const load = new Load();
  process.stdout.write(`mcp: ${machines} machines; warming up\n`);
  await new Promise((r) => setTimeout(r, 3000));
  await load.run({ url, token, tool: 'list_machines', args: {}, calls: 500, concurrency });
  await load.run({ url: bare.url, token: null, tool: 'constant', args: {}, calls: 500, concurrency });
  // The same answer as our list_machines, from a bare server: what that payload costs the SDK and the client alone.
  const listText = ((await (await listMachinesResponse(url, token)).json()) as { result: { content: { text: string }[] } }).result.content[0]?.text ?? '';
  const bareLarge = await bareServer(listText);
  await load.run({ url: bareLarge.url, token: null, tool: 'constant', args: {}, calls: 300, concurrency });
  const warm = await settled();

  const measured = await measureRounds(load, gateway, { url, token, bareUrl: bare.url, bareLargeUrl: bareLarge.url }, { rounds, calls, concurrency });
  const after = await settled();
  // Control: the same time again without calls. The fleet of simulated machines keeps writing history meanwhile,
  // so this shows how much of the growth is the fleet's rather than the calls'.
  const callsMs = (measured.bare.seconds + measured.small.seconds + measured.list.seconds) * 1000;
  await new Promise((r) => setTimeout(r, callsMs));
  const idle = await settled();
  const listBytes = Buffer.byteLength(await (await listMachinesResponse(url, token)).text());
  // Latency of one client polling the fleet: one call at a time, so the figure is not queueing behind our own load.
  const fleetRun = await load.run({ url, token, tool: 'get_fleet_status', args: {}, calls: 500, concurrency: 1 });
  process.stdout.write(`  get_fleet_status: ${fleetRun.perSec.toFixed(0)} calls/s\n`);

  await load.close();
  await bare.close();
  await bareLarge.close();
  await gateway.stop();
  rmSync(dataDir, { recursive: true, force: true });
  const result = resultOf(measured, fleetRun, { warm, after, idle }, { machines, concurrency, listBytes });
  report(result, measured.list.calls + measured.bare.calls + measured.small.calls);
}

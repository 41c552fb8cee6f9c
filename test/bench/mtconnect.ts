/**
 * `npm run bench -- mtconnect [--machines 1000] [--warmup 30] [--seconds 30] [--requests 100] [--clients 10]`:
 * the MTConnect agent beside a simulated fleet sampled at 1 Hz.
 *
 *  - `/current` latency over `requests` requests, one after the other, until the
 *    last byte has arrived (target: p95 ≤ 50 ms), and until the client has the
 *    document as text; and, as a baseline in the same process, the same client
 *    reading the same bytes from a server that keeps them (what moving a
 *    document of that size costs on this machine beside the fleet);
 *  - `/sample?count=10000` read from the oldest kept row to the head, page after page:
 *    observations served per second, XML and JSON (target: ≥ 100,000/s);
 *    both by a client in a child process, as the streaming clients are;
 *  - the CPU the process spends over `seconds` with the fleet alone, then with
 *    `clients` streaming clients at `interval=1000` (in a child process, so
 *    their own parsing is not counted), then alone again: the streams' cost
 *    is the difference from the mean of the two measures alone, as the
 *    fleet's own cost drifts while its history grows (target: ≤ 10 % of one
 *    core).
 *
 * The gateway runs in this process with the shipped plugins, the agent on
 * 127.0.0.1 and a free port.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import Fastify from 'fastify';
import { pino } from 'pino';
import { parseConfig } from '../../core/roles/index.js';
import { Gateway } from '../../core/roles/gateway/gateway.js';
import { GATEWAY_PLUGINS } from '../../core/roles/gateway/compose.js';
import { DRIVERS } from '../../drivers/registry.js';
import { benchMachines } from './bench-fleet.js';
import { option, printTable } from './stats.js';

/**
 * The requests of `/current` and `/sample`, made by a client in a child
 * process as an MTConnect client is another program: its reading and
 * counting of the documents are not the agent's work. It prints one line of
 * JSON with its figures.
 */
const CLIENT = `
const [url, what, n] = process.argv.slice(1);
const headerNumber = (body, name) => { const m = new RegExp('"?' + name + '"?[=:]"?(\\\\d+)').exec(body); return m ? Number(m[1]) : NaN; };
// Observations in a document: their sequence attributes or fields (the header's are nextSequence, firstSequence, lastSequence).
const countObservations = (body) => body.match(/"?sequence"?[=:]"?\\d/g)?.length ?? 0;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const percentile = (xs, p) => { const s = [...xs].sort((a, b) => a - b); return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)]; };
if (what === 'current' || what === 'baseline') {
  // Until the last byte has arrived; then, apart, until the client has it as text (its own work).
  const path = what === 'current' ? '/current' : '/';
  const times = [], decoded = [];
  let observations = 0, bytes = 0;
  for (let i = 0; i < Number(n); i++) {
    const t0 = performance.now();
    const body = await (await fetch(url + path)).arrayBuffer();
    times.push(performance.now() - t0);
    const text = new TextDecoder().decode(body);
    decoded.push(performance.now() - t0);
    observations = countObservations(text);
    bytes = body.byteLength;
    await sleep(50);
  }
  const asText = { p50: percentile(decoded, 50), p95: percentile(decoded, 95), p99: percentile(decoded, 99) };
  console.log(JSON.stringify({ p50: percentile(times, 50), p95: percentile(times, 95), p99: percentile(times, 99), asText, observations, bytes }));
} else {
  const first = headerNumber(await (await fetch(url + '/current')).text(), 'firstSequence');
  // Up to the head as it was when the read began (50 pages at most).
  const head = headerNumber(await (await fetch(url + '/current')).text(), 'nextSequence');
  let from = first, observations = 0, requests = 0;
  const t0 = performance.now();
  while (from < head && requests < 50) {
    const body = await (await fetch(url + '/sample?from=' + from + '&count=10000', { headers: { accept: what } })).text();
    requests++;
    observations += countObservations(body);
    const next = headerNumber(body, 'nextSequence');
    if (!(next > from)) break;
    from = next;
  }
  const seconds = (performance.now() - t0) / 1000;
  console.log(JSON.stringify({ observations, seconds, perSecond: observations / seconds, requests }));
}
`;

/** Runs the client of CLIENT for `what` ('current', or the Accept of /sample) and answers its figures. */
function inClient<T>(url: string, what: string, n = 0): Promise<T> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', CLIENT, url, what, String(n)], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve(JSON.parse(out) as T) : reject(new Error(`the ${what} client exited with ${code}`))));
  });
}

interface CurrentFigures {
  p50: number;
  p95: number;
  p99: number;
  /** The same, until the client has decoded the document into text. */
  asText: { p50: number; p95: number; p99: number };
  observations: number;
  bytes: number;
}

interface SampleFigures {
  observations: number;
  seconds: number;
  perSecond: number;
  requests: number;
}

/** Streaming clients in a child process, each reading `/sample?interval=1000` and dropping what it reads. */
function startClients(url: string, clients: number): ChildProcess {
  const script = `
    const [url, n] = process.argv.slice(1);
    const head = await (await fetch(url + '/current')).text();
    const next = /nextSequence="(\\d+)"/.exec(head)[1];
    let bytes = 0;
    for (let i = 0; i < Number(n); i++) {
      fetch(url + '/sample?interval=1000&count=10000&from=' + next).then(async (res) => {
        const reader = res.body.getReader();
        for (;;) { const { value, done } = await reader.read(); if (done) break; bytes += value.length; }
      }).catch(() => {});
    }
    setInterval(() => process.stdout.write(bytes + '\\n'), 1000);
  `;
  return spawn(process.execPath, ['--input-type=module', '-e', script, url, String(clients)], { stdio: ['ignore', 'pipe', 'inherit'] });
}

/** CPU of this process as % of one core over `seconds`. */
async function cpuOver(seconds: number): Promise<number> {
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  await sleep(seconds * 1000);
  const cpu = process.cpuUsage(cpu0);
  return ((cpu.user + cpu.system) / 1000 / (performance.now() - t0)) * 100;
}

export async function run(args: string[]): Promise<void> {
  const machines = option(args, 'machines', 1000);
  const warmup = option(args, 'warmup', 30);
  const seconds = option(args, 'seconds', 30);
  const requests = option(args, 'requests', 100);
  const clients = option(args, 'clients', 10);
  const dataDir = mkdtempSync(join(tmpdir(), 'gw-bench-mtconnect-'));
  const config = parseConfig({ gateway: { dataDir, timeZone: 'UTC' }, logLevel: 'warn', mtconnect: { host: '127.0.0.1', port: 0 }, machines: benchMachines(machines) });
  const gateway = await Gateway.create({ config, drivers: DRIVERS, plugins: GATEWAY_PLUGINS, logger: pino({ level: 'warn' }) });
  let child: ChildProcess | undefined;
  try {
    const url = gateway.context.services.get('mtconnect-agent').url;
    process.stdout.write(`mtconnect: ${machines} machines at 1 Hz, agent at ${url}; warming up ${warmup}s\n`);
    await sleep(warmup * 1000);
    process.stdout.write(`/current ${requests} times\n`);
    const current = await inClient<CurrentFigures>(url, 'current', requests);
    // The same client reading a document of the same size that costs nothing to make, from this process: what moving the bytes costs here.
    const baselineServer = Fastify();
    const kept = Buffer.from(await (await fetch(`${url}/current`)).arrayBuffer());
    baselineServer.get('/', async (_request, reply) => reply.header('content-type', 'text/xml').send(kept));
    const baselineUrl = await baselineServer.listen({ host: '127.0.0.1', port: 0 });
    const baseline = await inClient<CurrentFigures>(baselineUrl, 'baseline', requests).finally(() => baselineServer.close());
    process.stdout.write('/sample?count=10000 from the oldest kept row, XML then JSON\n');
    const xml = await inClient<SampleFigures>(url, 'text/xml');
    const json = await inClient<SampleFigures>(url, 'application/json');
    process.stdout.write(`measuring the fleet alone ${seconds}s, then with ${clients} streams ${seconds}s, then alone again ${seconds}s\n`);
    const aloneBefore = await cpuOver(seconds);
    child = startClients(url, clients);
    const agent = gateway.context.services.get('mtconnect-agent');
    for (let waited = 0; agent.streams() < clients && waited < 120; waited++) await sleep(1000);
    const streams = agent.streams();
    const withStreams = await cpuOver(seconds);
    child.kill();
    child = undefined;
    for (let waited = 0; agent.streams() > 0 && waited < 30; waited++) await sleep(1000);
    const aloneAfter = await cpuOver(seconds);
    const alone = (aloneBefore + aloneAfter) / 2;
    const figures = {
      machines,
      current: { ...current },
      baseline,
      sampleXml: xml,
      sampleJson: json,
      cpu: { fleetAloneBeforePercent: aloneBefore, fleetAloneAfterPercent: aloneAfter, fleetAlonePercent: alone, withStreamsPercent: withStreams, streamsCostPercent: withStreams - alone, streamsOpen: streams },
    };
    printTable(`MTConnect agent beside ${machines} machines at 1 Hz`, [
      ['/current p50 / p95 / p99', `${current.p50.toFixed(1)} / ${current.p95.toFixed(1)} / ${current.p99.toFixed(1)} ms (${current.observations} observations, ${(current.bytes / 1024).toFixed(0)} KiB)`, 'p95 ≤ 50 ms'],
      ['the same bytes kept (baseline) p50 / p95 / p99', `${baseline.p50.toFixed(1)} / ${baseline.p95.toFixed(1)} / ${baseline.p99.toFixed(1)} ms`, ''],
      ['/current as text p50 / p95 / p99', `${current.asText.p50.toFixed(1)} / ${current.asText.p95.toFixed(1)} / ${current.asText.p99.toFixed(1)} ms`, ''],
      ['/sample?count=10000 XML', `${Math.round(xml.perSecond)} observations/s (${xml.observations} in ${xml.requests} requests)`, '≥ 100,000/s'],
      ['/sample?count=10000 JSON', `${Math.round(json.perSecond)} observations/s (${json.observations} in ${json.requests} requests)`, '≥ 100,000/s'],
      ['CPU: fleet alone, before and after the streams', `${aloneBefore.toFixed(1)} and ${aloneAfter.toFixed(1)} % of one core (mean ${alone.toFixed(1)})`, ''],
      [`CPU: with ${streams} streams (interval=1000)`, `${withStreams.toFixed(1)} % (+${(withStreams - alone).toFixed(1)})`, '+ ≤ 10 % of one core'],
    ]);
    process.stdout.write(`${JSON.stringify(figures)}\n`);
  } finally {
    child?.kill();
    await gateway.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

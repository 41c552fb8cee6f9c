/**
 * MTConnect adapters benchmark: N SHDR adapters, each sending `rate` lines a
 * second, read by a gateway as N machines (CNCStatus every second). The lag
 * of a line is from the time its adapter stamped it when sending to the
 * moment its value is in the driver's store (after the socket, the line
 * splitting, the tokenizer and the mapping), measured for every line.
 * Target: p99 ≤ 100 ms for 200 adapters at 10 lines/s.
 *
 * The adapters run in a child process, as adapters run on other machines:
 * in the gateway's process their timers and writes would count as the
 * gateway's CPU and their bursts as its lag. Each adapter answers `* PING`
 * with `* PONG 10000` and sends its lines at its own phase in the second, a
 * line being an execution word, a part count and a spindle speed, as a
 * running machine's adapter sends them.
 *
 *   npm run bench -- mtconnect-adapters [--adapters 200] [--rate 10] [--seconds 30] [--warmup 5]
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { pino } from 'pino';
import { parseConfig } from '../../core/roles/index.js';
import { Gateway } from '../../core/roles/gateway/gateway.js';
import { GATEWAY_PLUGINS } from '../../core/roles/gateway/compose.js';
import { DRIVERS } from '../../drivers/registry.js';
import type { MtconnectClient } from '../../drivers/mtconnect/client.js';
import type { ShdrSource } from '../../drivers/mtconnect/shdr-source.js';
import { option, percentile, printTable } from './stats.js';

/** The line the child prints its adapters' ports on. */
const PORTS = 'mtconnect-adapter-ports ';

/** In the child: `count` adapters on OS-chosen ports, each sending `rate` lines a second to its clients. */
async function adapters(count: number, rate: number): Promise<void> {
  const words = ['ACTIVE', 'ACTIVE', 'ACTIVE', 'FEED_HOLD', 'READY'];
  const ports: number[] = [];
  const servers: net.Server[] = [];
  for (let a = 0; a < count; a++) {
    const clients = new Set<net.Socket>();
    let n = 0;
    const server = net.createServer((socket) => {
      clients.add(socket);
      socket.on('close', () => clients.delete(socket));
      socket.on('error', () => socket.destroy());
      socket.on('data', (chunk) => {
        if (chunk.includes('* PING')) socket.write('* PONG 10000\n');
      });
      socket.write(`${new Date().toISOString()}|avail|AVAILABLE|mode|AUTOMATIC|program|O${1000 + a}|estop|ARMED\n${new Date().toISOString()}|system|NORMAL||||\n`);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    ports.push((server.address() as net.AddressInfo).port);
    servers.push(server);
    const send = () => {
      n++;
      const line = `${new Date().toISOString()}|execution|${words[n % words.length]}|part_count|${n}|Sspeed|${1000 + (n % 500)}\n`;
      for (const socket of clients) socket.write(line);
    };
    // Each adapter at its own phase, so the lines of a fleet spread over the second.
    setTimeout(() => setInterval(send, 1000 / rate), Math.floor((a / count) * (1000 / rate)));
  }
  process.stdout.write(`${PORTS}${JSON.stringify(ports)}\n`);
  process.on('SIGTERM', () => {
    for (const server of servers) server.close();
    process.exit(0);
  });
}

/** Starts the adapters in a child process; resolves with their ports and a way to stop them. */
async function adaptersInChild(count: number, rate: number): Promise<{ ports: number[]; stop(): void }> {
  const child = spawn(process.execPath, [...process.execArgv, process.argv[1] as string, 'mtconnect-adapters', '--adapters-phase', '--adapters', String(count), '--rate', String(rate)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const lines = createInterface({ input: child.stdout });
  const ports = await new Promise<number[]>((resolve, reject) => {
    lines.on('line', (line) => {
      if (line.startsWith(PORTS)) resolve(JSON.parse(line.slice(PORTS.length)) as number[]);
    });
    child.once('exit', (code) => reject(new Error(`the adapters' process ended (code ${code}) before listening`)));
  });
  return { ports, stop: () => child.kill('SIGTERM') };
}

export async function run(args: string[]): Promise<void> {
  const count = option(args, 'adapters', 200);
  const rate = option(args, 'rate', 10);
  if (args.includes('--adapters-phase')) return adapters(count, rate);
  const seconds = option(args, 'seconds', 30);
  const warmup = option(args, 'warmup', 5);
  const peers = await adaptersInChild(count, rate);
  const dataDir = mkdtempSync(join(tmpdir(), 'gw-bench-mtconnect-'));
  const machines = peers.ports.map((port, i) => ({
    machineID: `MTC${String(i).padStart(4, '0')}`,
    name: `MTConnect ${i}`,
    machineType: 'lathe',
    driver: 'mtconnect',
    ip: '127.0.0.1',
    port,
    driverOptions: {},
    tasks: { CNCStatus: { enabled: true, intervalMs: 1000 } },
  }));
  const gateway = await Gateway.create({
    config: parseConfig({ gateway: { dataDir, timeZone: 'UTC' }, logLevel: 'warn', machines }),
    drivers: DRIVERS,
    plugins: GATEWAY_PLUGINS,
    logger: pino({ level: 'warn' }),
  });
  const lags: number[] = [];
  let measuring = false;
  try {
    for (const id of gateway.fleet.ids()) {
      const source = (gateway.fleet.client(id) as MtconnectClient).source as ShdrSource;
      source.onObservation = (timestamp) => {
        if (measuring) lags.push(Date.now() - timestamp);
      };
    }
    process.stdout.write(`mtconnect-adapters: ${count} adapters × ${rate} lines/s in a child process, read by a gateway; warming up ${warmup}s, measuring ${seconds}s\n`);
    await sleep(warmup * 1000);
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    measuring = true;
    await sleep(seconds * 1000);
    measuring = false;
    const wallMs = performance.now() - t0;
    const cpu = process.cpuUsage(cpu0);
    let online = 0;
    for (const id of gateway.fleet.ids()) if (gateway.fleet.snapshot(id).connection.state === 'online') online++;
    // Each line carries three values, each one observation.
    const lines = lags.length / 3;
    const result = {
      adapters: count, rate, seconds: wallMs / 1000, linesPerSec: lines / (wallMs / 1000),
      lagP50Ms: percentile(lags, 50), lagP99Ms: percentile(lags, 99), lagMaxMs: Math.max(...lags),
      cpuPercentOfOneCore: ((cpu.user + cpu.system) / 1000 / wallMs) * 100, online,
    };
    printTable(`mtconnect adapters benchmark (${count} SHDR adapters × ${rate} lines/s, Node ${process.version})`, [
      ['lines read/s', result.linesPerSec.toFixed(0), String(count * rate)],
      ['lag, sent → in the store, p50 ms', result.lagP50Ms.toFixed(1), ''],
      ['lag p99 ms', result.lagP99Ms.toFixed(1), '<= 100'],
      ['lag max ms', result.lagMaxMs.toFixed(1), ''],
      ['gateway CPU, % of one core', result.cpuPercentOfOneCore.toFixed(1), 'adapters not included'],
      ['machines online at end', String(online), String(count)],
    ]);
    process.stdout.write(`${JSON.stringify(result)}\n`);
  } finally {
    await gateway.stop();
    peers.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

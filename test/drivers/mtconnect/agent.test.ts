/**
 * The MTConnect driver reading an agent (the agent stand-in), as the
 * reference agent's clients read one: /probe, /current, then /sample from
 * the next sequence, streaming or polling; after a loss it resumes from the
 * next sequence with no gap and no repeat; it starts over from /probe when
 * the instanceId changed and from /current on OUT_OF_RANGE.
 */
import http from 'node:http';
import type net from 'node:net';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import type { AgentSource } from '../../../drivers/mtconnect/agent-source.js';
import { startMtconnectAgentSimulator, type RunningAgentSimulator } from '../../../drivers/mtconnect/agent-simulator.js';
import type { MtconnectClient } from '../../../drivers/mtconnect/client.js';
import { startTestGateway, type TestGateway } from '../../fixtures/gateway.js';
import { until } from '../../fixtures/until.js';
import { AT_START, LATHE, START, expectAtStart, mtconnectClient, rejection } from './helpers.js';

const source = (client: MtconnectClient) => client.source as AgentSource;
const stamp = () => new Date().toISOString();

/** A client that reconnects after every loss, as the machine actor does. */
function reconnecting(client: MtconnectClient): { losses: string[] } {
  const losses: string[] = [];
  client.onConnectionLost(({ reason }) => {
    losses.push(reason);
    const retry = () => void client.connect().catch(() => setTimeout(retry, 50));
    setTimeout(retry, 20);
  });
  return { losses };
}

/** A logger whose lines the test can read. */
function capturedLogger() {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      lines.push(String(chunk));
      done();
    },
  });
  return { logger: pino({ level: 'info' }, stream), lines };
}

describe('mtconnect driver: an MTConnect agent', () => {
  const closing: Array<() => Promise<unknown>> = [];
  afterEach(async () => {
    for (const close of closing.splice(0).reverse()) await close();
  });
  async function agent(options: Partial<Parameters<typeof startMtconnectAgentSimulator>[0]> = {}): Promise<RunningAgentSimulator> {
    const sim = await startMtconnectAgentSimulator({ machines: [START, { ...START, machineID: 'MT-L02', seed: 3 }], ...options });
    closing.push(() => sim.close());
    return sim;
  }
  function client(port: number, options: Record<string, unknown>, logger?: ReturnType<typeof capturedLogger>['logger']): MtconnectClient {
    const c = mtconnectClient(port, options, logger ? { logger } : {});
    closing.push(() => c.close());
    return c;
  }

  it('reads every family through /probe, /current and a /sample stream, with the device named by its name or its uuid', async () => {
    const sim = await agent();
    for (const device of [START.machineID, `cnc-gateway-sim-${START.machineID}`]) {
      const c = client(sim.port, { agent: {}, device });
      await c.connect();
      expect([...c.families].sort()).toEqual(Object.keys(AT_START).sort());
      await expectAtStart(c);
      expect(source(c).position).toEqual({ instanceId: sim.instanceId, next: sim.nextSequence });
    }
  });

  it('polls /sample when agent.mode is poll, and sees what the agent gets next', async () => {
    const sim = await agent({ replay: false });
    const c = client(sim.port, { agent: { mode: 'poll', intervalMs: 50 }, device: 'MT-L02' });
    sim.feed('MT-L02', `${stamp()}|avail|AVAILABLE|execution|READY|part_count|5`);
    await c.connect();
    expect((await c.read('count')).partCount).toBe(5);
    sim.feed('MT-L02', `${stamp()}|execution|ACTIVE|part_count|6`);
    await until('part 6', () => c.read('count'), (count) => count.partCount === 6, 5_000);
    expect((await c.read('status')).adjustedStatus).toBe('RUNNING');
  });

  it('polls an agent that answers the streaming request with one document', async () => {
    const sim = await agent({ replay: false });
    // A proxy in front of the stand-in that drops `interval`, so /sample answers one document as to a poll.
    const proxy = http.createServer((request, response) => {
      const url = new URL(request.url ?? '/', 'http://proxy');
      url.searchParams.delete('interval');
      http.get(`http://127.0.0.1:${sim.port}${url.pathname}${url.search}`, (answer) => {
        response.writeHead(answer.statusCode ?? 500, answer.headers);
        answer.pipe(response);
      }).on('error', () => response.destroy());
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    closing.push(() => new Promise((resolve) => proxy.close(resolve)));
    closing.push(async () => proxy.closeAllConnections());
    sim.feed('MT-L02', `${stamp()}|avail|AVAILABLE|execution|READY|part_count|1`);
    const c = client((proxy.address() as net.AddressInfo).port, { agent: { intervalMs: 50 }, device: 'MT-L02' });
    await c.connect();
    sim.feed('MT-L02', `${stamp()}|part_count|2`);
    await until('part 2', () => c.read('count'), (count) => count.partCount === 2, 5_000);
  });

  it('reads every observation once, with no gap and no repeat, though its stream keeps being dropped', async () => {
    const sim = await agent({ replay: false });
    sim.feed(START.machineID, `${stamp()}|avail|AVAILABLE|execution|ACTIVE|part_count|0`);
    const c = client(sim.port, { agent: { intervalMs: 20 }, device: START.machineID });
    const { losses } = reconnecting(c);
    const sequences: number[] = [];
    await c.connect();
    source(c).onObservation = (_time, _received, sequence) => sequences.push(sequence);
    const first = sim.nextSequence;
    for (let part = 1; part <= 60; part++) {
      sim.feed(START.machineID, `${stamp()}|part_count|${part}`);
      if (part % 15 === 0) {
        sim.dropStreams();
        await until('the loss', () => losses.length, (n) => n === part / 15, 5_000);
      }
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    await until('caught up', () => source(c).position.next, (next) => next === sim.nextSequence, 10_000);
    expect(sequences).toEqual(Array.from({ length: sim.nextSequence - first }, (_, i) => first + i));
    expect((await c.read('count')).partCount).toBe(60);
    expect(losses).toHaveLength(4);
  });

  it('applies a document\'s observations in sequence order, though the agent groups a condition\'s FAULT entries before its NORMAL', async () => {
    const sim = await agent({ replay: false });
    sim.feed(START.machineID, `${stamp()}|avail|AVAILABLE|execution|ACTIVE|part_count|0`);
    const c = client(sim.port, { agent: { intervalMs: 50 }, device: START.machineID });
    await c.connect();
    // One part of the stream: FAULT 1, then NORMAL (all clear), then FAULT 2; the document lists both FAULTs first.
    for (const line of ['system|FAULT|1|||Overtemp', 'system|NORMAL||||', 'system|FAULT|2|||Door open']) sim.feed(START.machineID, `${stamp()}|${line}`);
    await until('the second fault', () => c.read('alarm'), (alarms) => alarms.some((a) => a.code === '2'), 5_000);
    expect((await c.read('alarm')).map((a) => [a.code, a.message, a.level])).toEqual([['2', 'Door open', 'alarm']]);
  });

  it('starts over from /probe when the agent restarted with a new instanceId', async () => {
    const sim = await agent();
    const { logger, lines } = capturedLogger();
    const c = client(sim.port, { agent: {}, device: START.machineID }, logger);
    reconnecting(c);
    await c.connect();
    const before = sim.instanceId;
    sim.restart();
    expect(sim.instanceId).not.toBe(before);
    await until('the new instance', () => source(c).position.instanceId, (id) => id === sim.instanceId, 10_000);
    await until('online again', () => c.source.alive, (alive) => alive, 5_000);
    expect(lines.join('')).toContain(`restarted (instanceId ${before} → ${sim.instanceId}); starting over from /probe`);
    await expectAtStart(c);
  });

  it('starts over from /current when what it wants next left the agent\'s buffer (OUT_OF_RANGE), and says so', async () => {
    const sim = await agent({ replay: false, bufferSize: 64 });
    sim.feed(START.machineID, `${stamp()}|avail|AVAILABLE|execution|ACTIVE|part_count|0`);
    const { logger, lines } = capturedLogger();
    const c = client(sim.port, { agent: {}, device: START.machineID }, logger);
    await c.connect();
    const lost = new Promise<string>((resolve) => c.onConnectionLost(({ reason }) => resolve(reason)));
    sim.dropStreams();
    await lost;
    for (let part = 1; part <= 200; part++) sim.feed(START.machineID, `${stamp()}|part_count|${part}`);
    await c.connect();
    expect(lines.find((line) => line.includes('"msg":"mtconnect: starting over"'))).toMatch(/answered \/sample\?from=\d+ with OUT_OF_RANGE \(.*\): the observations wanted left its buffer; starting over from \/current/);
    expect(source(c).position.next).toBe(sim.nextSequence);
    expect((await c.read('count')).partCount).toBe(200);
  });

  it('counts the machine as gone while the agent reports its AVAILABILITY UNAVAILABLE, and back once it is available', async () => {
    const sim = await agent();
    const c = client(sim.port, { agent: { intervalMs: 20 }, device: START.machineID });
    const lost = new Promise<string>((resolve) => c.onConnectionLost(({ reason }) => resolve(reason)));
    await c.connect();
    sim.setAdapterConnected(START.machineID, false);
    expect(await lost).toMatch(/reports AVAILABILITY UNAVAILABLE for 'avail'/);
    expect((await rejection(c.connect())).message).toContain('AVAILABILITY UNAVAILABLE');
    sim.setAdapterConnected(START.machineID, true);
    await until('available again', () => c.connect().then(() => true, () => false), (ok) => ok, 5_000);
    await expectAtStart(c);
  });

  it('names the device the agent does not have', async () => {
    const sim = await agent();
    const error = await rejection(client(sim.port, { agent: {}, device: 'NOPE' }).connect());
    expect(error.message).toMatch(/\/probe: NO_DEVICE \(Could not find the device 'NOPE'\); check driverOptions\.device/);
  });

  it('counts a stream as dead when the agent sends nothing for two heartbeats', async () => {
    const sim = await agent();
    // A proxy that passes the stand-in's answers on, but lets the stream go silent after its first part.
    const proxy = http.createServer((request, response) => {
      const upstream = http.get(`http://127.0.0.1:${sim.port}${request.url}`, (answer) => {
        response.writeHead(answer.statusCode ?? 500, answer.headers);
        if (!request.url?.includes('/sample')) return answer.pipe(response);
        answer.once('data', (chunk: Buffer) => {
          response.write(chunk);
          answer.destroy();
        });
      });
      upstream.on('error', () => response.destroy());
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    closing.push(() => new Promise((resolve) => proxy.close(resolve)));
    closing.push(async () => proxy.closeAllConnections());
    const c = client((proxy.address() as net.AddressInfo).port, { agent: { heartbeatMs: 100 }, device: START.machineID, requestTimeoutMs: 300 });
    const lost = new Promise<string>((resolve) => c.onConnectionLost(({ reason }) => resolve(reason)));
    await c.connect();
    expect(await lost).toMatch(/sent nothing for 500 ms, though asked for a heartbeat every 100 ms$/);
  });

  it('refuses an answer that is not XML, and one larger than maxDocumentBytes, saying which', async () => {
    const server = http.createServer((request, response) => {
      if (request.url?.includes('big')) response.end(`<MTConnectDevices>${' '.repeat(20_000)}</MTConnectDevices>`);
      else response.end('Service Unavailable');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    closing.push(() => new Promise((resolve) => server.close(resolve)));
    const port = (server.address() as net.AddressInfo).port;
    expect((await rejection(client(port, { agent: {}, device: 'M' }).connect())).message).toMatch(/\/probe: HTTP 200, not well-formed XML/);
    expect((await rejection(client(port, { agent: {}, device: 'big', maxDocumentBytes: 4096 }).connect())).message).toMatch(/answered \d+ bytes or more, over 4096 \(driverOptions\.maxDocumentBytes\)/);
  });
});

describe('mtconnect driver: an agent\'s machine in a gateway', () => {
  let tg: TestGateway | undefined;
  let sim: RunningAgentSimulator | undefined;
  afterEach(async () => {
    await tg?.stop();
    await sim?.close();
  });

  it('GW-20 the machine is offline while the agent reports its AVAILABILITY UNAVAILABLE, and its connection says why', async () => {
    sim = await startMtconnectAgentSimulator({ machines: [LATHE] });
    const tasks = { CNCStatus: { enabled: true, intervalMs: 200 }, Count: { enabled: false }, Cycle: { enabled: false }, TimeData: { enabled: false }, ToolLife: { enabled: false }, OEE: { enabled: false } };
    const connection = { backoffBaseMs: 500, backoffMaxMs: 500, failuresBeforeLost: 3, requestTimeoutMs: 2_000, connectTimeoutMs: 3_000 };
    tg = await startTestGateway({ machines: [{ ...sim.machineConfig(LATHE), tasks, connection }] });
    const view = () => tg!.gateway.fleet.snapshot(LATHE.machineID);
    await until('online', view, (v) => v.connection.state === 'online' && v.cache.CNCStatus?.value !== undefined, 10_000);
    sim.setAdapterConnected(LATHE.machineID, false);
    const offline = await until('offline', view, (v) => v.derived.state === 'offline', 10_000);
    expect(offline.derived.reason).toContain('AVAILABILITY UNAVAILABLE');
    sim.setAdapterConnected(LATHE.machineID, true);
    await until('back', view, (v) => v.connection.state === 'online' && v.derived.state !== 'offline', 10_000);
  });
});

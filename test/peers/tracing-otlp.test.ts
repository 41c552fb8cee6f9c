/**
 * One trace across processes, exported over OTLP/HTTP (JSON) to a receiver
 * written here: a cloud and a gateway, each its own `npm start` process,
 * relaying through Debian's Mosquitto (MQTT 5: the trace context in the
 * request's user properties). One tools/call through the cloud gives one
 * trace with spans of cncgw-cloud and cncgw-gateway, every parent present,
 * the gateway's under the cloud's producer span.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BrokerController } from '../drivers/mqtt/broker-controller.js';
import { simMachine } from '../fixtures/gateway.js';
import { freePort } from '../fixtures/free-port.js';
import { connectMcp, type McpSession } from '../fixtures/mcp-client.js';
import { mosquittoBrokers } from './mosquitto.js';
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from './otlp-receiver.js';

const ROOT = resolve(import.meta.dirname, '../..');
const TRACE = '6bf92f3577b34da6a3ce929d0e0e4736';
const CLIENT_SPAN = '2222222222222222';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('tracing across processes (OTLP/HTTP)', { timeout: 120_000 }, () => {
  let broker: BrokerController;
  let receiver: OtlpReceiver;
  let received: ReceivedSpan[] = [];
  const children: ChildProcess[] = [];
  let cloudUrl: string;
  let token: string;
  let session: McpSession | undefined;

  beforeAll(async () => {
    receiver = await startOtlpReceiver();
    received = receiver.received;
    const otel = receiver.env;
    broker = await mosquittoBrokers.start();

    const cloudDir = mkdtempSync(join(tmpdir(), 'trace-cloud-'));
    const cloudConfig = join(cloudDir, 'config.json');
    const cloudPort = await freePort();
    writeFileSync(cloudConfig, JSON.stringify({ dataDir: cloudDir, logLevel: 'warn', roles: ['cloud'], cloud: { host: '127.0.0.1', port: cloudPort, brokerUrl: broker.url } }));
    const made = spawnSync(process.execPath, ['--import', 'tsx', 'core/main.ts', 'cloud-token', 'create', 'plant-o', '--config', cloudConfig], { cwd: ROOT, encoding: 'utf8', env: { ...process.env, GATEWAY_DATA_DIR: '' } });
    token = /shown once:\n(\S+)/.exec(made.stdout)?.[1] ?? '';
    expect(token, made.stderr).toMatch(/^cgw_/);
    const env = { ...process.env, ...otel, GATEWAY_DATA_DIR: '', GATEWAY_PORT: '0', MTCONNECT_PORT: '0' };
    children.push(spawn(process.execPath, ['--import', 'tsx', 'core/main.ts', '--config', cloudConfig, '--role', 'cloud'], { cwd: ROOT, env, stdio: 'ignore' }));

    const gwDir = mkdtempSync(join(tmpdir(), 'trace-gw-'));
    const gwConfig = join(gwDir, 'config.json');
    writeFileSync(gwConfig, JSON.stringify({ dataDir: gwDir, timeZone: 'UTC', logLevel: 'warn', gateway: { name: 'plant-o' }, communication: { host: '127.0.0.1', port: 0 }, machines: [simMachine('O1')], cloudLink: { brokerUrl: broker.url } }));
    children.push(spawn(process.execPath, ['--import', 'tsx', 'core/main.ts', '--config', gwConfig, '--role', 'gateway'], { cwd: ROOT, env: { ...env, GATEWAY_CLOUD_TOKEN: token }, stdio: 'ignore' }));

    cloudUrl = `http://127.0.0.1:${cloudPort}`;
    // Both processes up and the gateway online: a call answers.
    for (const end = Date.now() + 90_000; ; await sleep(500)) {
      try {
        const probe = await connectMcp(cloudUrl, undefined, { accesstoken: token });
        const answered = !(await probe.call('list_groups')).isError;
        await probe.close();
        if (answered) break;
      } catch {
        // not listening yet
      }
      if (Date.now() > end) throw new Error('the cloud and the gateway did not come up');
    }
    session = await connectMcp(cloudUrl, undefined, { accesstoken: token, traceparent: `00-${TRACE}-${CLIENT_SPAN}-01` });
  }, 120_000);

  afterAll(async () => {
    await session?.close().catch(() => undefined);
    for (const child of children) {
      if (child.exitCode !== null) continue;
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
    }
    await broker?.stop();
    await receiver?.close();
  });

  it('GW-85 one tools/call through the cloud is one trace: cncgw-cloud and cncgw-gateway spans, every parent present, the gateway\'s under the producer span', async () => {
    expect((await session!.call('list_machines')).isError).toBe(false);
    const trace = () => received.filter((s) => s.traceId === TRACE);
    for (const end = Date.now() + 20_000; !trace().some((s) => s.service === 'cncgw-gateway' && s.name.startsWith('tools/call')) || !trace().some((s) => s.kind === 4); await sleep(200)) {
      if (Date.now() > end) break;
    }
    const spans = trace();
    expect(new Set(spans.map((s) => s.service))).toEqual(new Set(['cncgw-cloud', 'cncgw-gateway']));
    expect(spans.length).toBeGreaterThanOrEqual(6);
    const byId = new Map(spans.map((s) => [s.spanId, s]));
    for (const s of spans) if (s.parentSpanId !== CLIENT_SPAN) expect(byId.get(s.parentSpanId ?? ''), `${s.name}'s parent`).toBeDefined();
    const producer = spans.find((s) => s.name === 'send tools/call list_machines');
    const consumer = spans.find((s) => s.name === 'process tools/call list_machines');
    expect(producer?.service).toBe('cncgw-cloud');
    expect(consumer?.service).toBe('cncgw-gateway');
    expect(consumer?.parentSpanId).toBe(producer?.spanId);
    // Every gateway span descends from the producer span.
    const descends = (s: ReceivedSpan): boolean => s.spanId === producer?.spanId || (s.parentSpanId !== undefined && byId.has(s.parentSpanId) && descends(byId.get(s.parentSpanId)!));
    for (const s of spans.filter((x) => x.service === 'cncgw-gateway')) expect(descends(s), s.name).toBe(true);
  });
});

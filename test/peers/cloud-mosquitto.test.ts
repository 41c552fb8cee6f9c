/**
 * The cloud relay on Debian's Mosquitto (MQTT 5 request/response): two cloud
 * instances share the broker and the token database, each serving every
 * gateway; a gateway process killed with SIGKILL is unavailable at once and
 * usable again when it comes back; the broker restarted; a cloud instance
 * stopped while the other keeps serving.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import mqtt from 'mqtt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_TOPIC_PREFIX } from '../../core/cloud-wire/protocol.js';
import { CloudRole } from '../../core/roles/cloud/role.js';
import type { BrokerController } from '../drivers/mqtt/broker-controller.js';
import { simMachine, startTestGateway, type TestGateway } from '../fixtures/gateway.js';
import { connectMcp, type McpSession } from '../fixtures/mcp-client.js';
import { mosquittoBrokers } from './mosquitto.js';
import { startTestCloud } from '../fixtures/cloud.js';

const ROOT = resolve(import.meta.dirname, '../..');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('cloud relay on Mosquitto', { timeout: 90_000 }, () => {
  let broker: BrokerController;
  const clouds: CloudRole[] = [];
  const urls: string[] = [];
  let gwA: TestGateway;
  let child: ChildProcess | undefined;
  const tokens: Record<string, string> = {};
  const sessions: McpSession[] = [];
  const idOf = (name: string) => (tokens[name] as string).split('_')[1] as string;
  const session = async (cloud: number, name: string) => {
    const s = await connectMcp(urls[cloud] as string, undefined, { accesstoken: tokens[name] as string });
    sessions.push(s);
    return s;
  };
  const until = async (what: string, check: () => boolean, ms = 20_000) => {
    for (const end = Date.now() + ms; !check(); ) {
      if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
      await sleep(25);
    }
  };
  const startChild = (configFile: string) => {
    child = spawn(process.execPath, ['--import', 'tsx', 'core/main.ts', '--config', configFile, '--role', 'gateway'], {
      cwd: ROOT, env: { ...process.env, GATEWAY_PORT: '0', MTCONNECT_PORT: '0', GATEWAY_DATA_DIR: '', GATEWAY_CLOUD_TOKEN: tokens['plant-k'] as string }, stdio: 'ignore',
    });
  };

  beforeAll(async () => {
    broker = await mosquittoBrokers.start();
    // Two instances on one data directory (their token database) and one broker.
    const dataDir = mkdtempSync(join(tmpdir(), 'cloud-peer-'));
    for (let i = 0; i < 2; i++) {
      const cloud = await startTestCloud({ dataDir, broker: { url: broker.url, protocolVersion: 5 } });
      clouds.push(cloud);
      urls.push(await cloud.listen('127.0.0.1', 0));
    }
    for (const name of ['plant-a', 'plant-k']) tokens[name] = (await clouds[0]!.tokens.create(name)).token;
    gwA = await startTestGateway({ gateway: { name: 'plant-a' }, machines: [simMachine('A1')], cloudLink: { brokerUrl: broker.url, accessToken: tokens['plant-a'] } });
    const kDir = mkdtempSync(join(tmpdir(), 'cloud-peer-k-'));
    const kConfig = join(kDir, 'config.json');
    writeFileSync(kConfig, JSON.stringify({
      gateway: { name: 'plant-k', dataDir: kDir, timeZone: 'UTC' }, communication: { host: '127.0.0.1', port: 0 }, logLevel: 'warn',
      machines: [simMachine('K1'), simMachine('K2')], cloudLink: { brokerUrl: broker.url },
    }));
    startChild(kConfig);
    (globalThis as { kConfig?: string }).kConfig = kConfig;
    await until('both gateways online on both clouds', () => clouds.every((c) => c.relay.isOnline(idOf('plant-a')) && c.relay.isOnline(idOf('plant-k'))), 40_000);
  }, 90_000);
  afterAll(async () => {
    for (const s of sessions) await s.close().catch(() => undefined);
    if (child && child.exitCode === null) {
      child.kill('SIGTERM');
      await new Promise((r) => child?.once('exit', r));
    }
    await gwA?.stop();
    for (const c of clouds) await c.stop().catch(() => undefined);
    await broker?.stop();
  });

  it('GW-06 GW-85 two cloud instances on one broker each serve every gateway, over MQTT 5', async () => {
    // A watcher on the broker sees the MQTT 5 request/response properties.
    const watcher = await mqtt.connectAsync(broker.url, { protocolVersion: 5, reconnectPeriod: 0 });
    const seen: { topic: string; responseTopic?: string; correlation?: string }[] = [];
    watcher.on('message', (topic, _payload, packet) => {
      seen.push({ topic, ...(packet.properties?.responseTopic ? { responseTopic: packet.properties.responseTopic } : {}), ...(packet.properties?.correlationData ? { correlation: packet.properties.correlationData.toString() } : {}) });
    });
    await watcher.subscribeAsync([`${DEFAULT_TOPIC_PREFIX}/gateways/+/requests`, `${DEFAULT_TOPIC_PREFIX}/clouds/+/responses/+`]);
    try {
      for (const cloud of [0, 1]) {
        const a = await session(cloud, 'plant-a');
        const k = await session(cloud, 'plant-k');
        expect((await a.call('list_machines')).json()).toMatchObject({ count: 1, machines: [expect.objectContaining({ machineID: 'A1' })] });
        expect((await k.call('list_machines')).json()).toMatchObject({ count: 2 });
      }
      await until('the watcher to see the traffic', () => seen.filter((m) => m.topic.includes('/responses/')).length >= 4);
    } finally {
      await watcher.endAsync();
    }
    const requests = seen.filter((m) => m.topic.endsWith('/requests'));
    expect(requests).toHaveLength(4);
    // Each cloud instance names its own response topics, one per gateway; each answer carries its request's correlation data.
    expect(new Set(requests.map((r) => r.responseTopic?.replace(/\/[^/]+$/, ''))).size).toBe(2);
    expect(new Set(requests.map((r) => r.responseTopic)).size).toBe(4);
    for (const request of requests) {
      expect(request.responseTopic).toMatch(new RegExp(`^${DEFAULT_TOPIC_PREFIX}/clouds/[^/]+/responses/[0-9a-f]{12}$`));
      expect(request.correlation).toBeTruthy();
      const answer = seen.find((m) => m.topic === request.responseTopic && m.correlation === request.correlation);
      expect(answer, `an answer for ${request.correlation}`).toBeDefined();
    }
  });

  it('GW-87 a gateway killed with SIGKILL is unavailable at once; restarted, it is usable without restarting anything else', async () => {
    const k = await session(1, 'plant-k');
    child?.kill('SIGKILL');
    await new Promise((r) => child?.once('exit', r));
    // Mosquitto publishes the will when it sees the connection close.
    await until('the will to arrive', () => !clouds[1]!.relay.isOnline(idOf('plant-k')));
    const started = Date.now();
    expect((await k.call('list_groups')).text).toMatch(/^\/api\/config\/groups failed: GATEWAY_SERVICE_UNAVAILABLE\(20001\)/);
    expect(Date.now() - started).toBeLessThan(5000);
    startChild((globalThis as { kConfig?: string }).kConfig as string);
    await until('plant-k back', () => clouds[1]!.relay.isOnline(idOf('plant-k')), 40_000);
    expect((await k.call('list_machines')).json()).toMatchObject({ count: 2 });
  });

  it('GW-87 the broker restarted: calls are unavailable while it is down, and everything reconnects by itself', async () => {
    const a = await session(0, 'plant-a');
    await broker.stop();
    await until('the cloud to notice', () => !clouds[0]!.relay.isOnline(idOf('plant-a')));
    expect((await a.call('list_groups')).text).toMatch(/GATEWAY_SERVICE_UNAVAILABLE\(20001\)/);
    await broker.start();
    await until('both gateways back on both clouds', () => clouds.every((c) => c.relay.isOnline(idOf('plant-a')) && c.relay.isOnline(idOf('plant-k'))), 40_000);
    expect((await a.call('list_machines')).json()).toMatchObject({ count: 1 });
  });

  it('GW-06 a cloud instance stopped while the other keeps serving', async () => {
    await clouds[0]!.stop();
    const k = await session(1, 'plant-k');
    expect((await k.call('list_machines')).json()).toMatchObject({ count: 2 });
    const a = await session(1, 'plant-a');
    expect((await a.call('list_machines')).json()).toMatchObject({ count: 1 });
  });
});

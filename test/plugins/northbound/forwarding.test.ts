/**
 * Store-and-forward against a real broker (aedes in this process; the same
 * on Mosquitto in test/peers/northbound-mosquitto.test.ts): a network
 * outage and a gateway restarted during it lose nothing, a broker that
 * drops every connection is retried with backoff, a message too large for
 * the broker is skipped and reported, rows retention deleted first are
 * counted as lost, a Sparkplug host's rebirth request is obeyed; the state
 * of every target is in gateway-info and /metrics, never its password.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Writable } from 'node:stream';
import { pino, type Logger } from 'pino';
import { get } from 'sparkplug-payload';
import { createToolDispatcher } from '../../../core/mcp/dispatch.js';
import { InProcessBroker } from '../../../core/mqtt/broker.js';
import { readAfterSeq, type SequencedRow } from '../../../core/roles/gateway/history/sequence.js';
import type { NorthboundTargetStatus } from '../../../core/roles/gateway/northbound-status.js';
import { Database } from '../../../core/store/database.js';
import { startBrokerPath } from '../../fixtures/broker-path.js';
import { definePlugin } from '../../../core/runtime/plugin-host.js';
import type { GatewayContext } from '../../../core/roles/gateway/context.js';
import { northboundPlugin } from '../../../plugins/northbound/index.js';
import { simMachine, startTestGateway, TEST_PLUGINS, type TestGateway } from '../../fixtures/gateway.js';
import { until } from '../../fixtures/until.js';
import { delivery, sparkplugMessages, sparkplugRuleBreaks, subscribe, unsRows, type Subscriber } from './subscriber.js';

const ROOT = 'acme/lyon/machining/gw-t';
const METRICS_TOKEN = 'northbound-test-metrics-token';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c().catch(() => undefined);
});

async function startBroker(): Promise<InProcessBroker> {
  const broker = new InProcessBroker({});
  await broker.start();
  cleanup.push(() => broker.stop());
  return broker;
}

function gatewayConfig(targets: Record<string, unknown>[], extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    gateway: { name: 'gw-t' },
    metricsToken: METRICS_TOKEN,
    // A shop floor sped up 200 times: programs start and stop, parts are made and alarms come and go every few seconds.
    machines: Array.from({ length: 6 }, (_, i) => simMachine(`M${i + 1}`, { driverOptions: { seed: 7 + i, machineType: i % 2 ? 'lathe' : 'mill', system: 'FANUC', timeScale: 200 }, tasks: { CNCStatus: { enabled: true, intervalMs: 200 }, Count: { enabled: true, intervalMs: 500 } } })),
    northbound: { enterprise: 'acme', site: 'lyon', area: 'machining', targets: targets.map((t) => ({ protocolVersion: 4, reconnectMaxSeconds: 2, ...t })) },
    ...extra,
  };
}

async function start(raw: Record<string, unknown>, dataDir?: string, logger?: Logger): Promise<TestGateway> {
  const gw = await startTestGateway(raw, dataDir, logger ? { logger } : {});
  cleanup.push(() => gw.stop());
  return gw;
}

async function targetStatus(gw: TestGateway, name: string): Promise<NorthboundTargetStatus> {
  const info = await gw.request('GET', '/api/system/gateway-info');
  return (info.body.data as { northbound: { targets: NorthboundTargetStatus[] } }).northbound.targets.find((t) => t.name === name) as NorthboundTargetStatus;
}

/** Waits until the target has published every committed row. */
function caughtUp(gw: TestGateway, name: string, timeoutMs = 20_000): Promise<NorthboundTargetStatus> {
  return until(`target '${name}' caught up`, () => targetStatus(gw, name), (t) => t.state === 'connected' && t.cursor === t.committedThrough && t.cursor > 0, timeoutMs);
}

/** Every history row of a stopped gateway's data directory. */
async function historyOf(dataDir: string): Promise<SequencedRow[]> {
  const db = await Database.open(join(dataDir, 'gateway.db'));
  try {
    return await readAfterSeq(db, { afterSeq: 0, throughSeq: Number.MAX_SAFE_INTEGER, limit: 1_000_000 });
  } finally {
    await db.close();
  }
}

async function listen(url: string, topics: string[]): Promise<Subscriber> {
  const sub = await subscribe(url, topics);
  cleanup.push(() => sub.close());
  return sub;
}

describe('northbound store-and-forward', { timeout: 60_000 }, () => {
  it('a network outage and a gateway restarted during it lose nothing: every history row once after dropping repeats by seq, each machine\'s in order, the backlog first', async () => {
    const broker = await startBroker();
    const path = await startBrokerPath(broker.port);
    cleanup.push(() => path.close());
    const sub = await listen(broker.url, [`${ROOT}/#`]);
    const dataDir = mkdtempSync(join(tmpdir(), 'nb-outage-'));
    // At most five messages unacknowledged, however large the backlog.
    const raw = gatewayConfig([{ name: 'plant', brokerUrl: path.url, maxInFlight: 5 }]);
    let gw = await start(raw, dataDir);
    await caughtUp(gw, 'plant');

    path.set('cut');
    await until('the broker to publish the gateway\'s will', () => sub.messages.filter((m) => m.topic === `${ROOT}/_gateway/status`).map((m) => JSON.parse(m.payload.toString()).state as string), (s) => s.at(-1) === 'offline');
    const down = await until('a backlog to build up', () => targetStatus(gw, 'plant'), (t) => t.backlogRows > 20 && t.state === 'retrying');
    expect(down.lastError).toMatch(/closed/);
    // The gateway stops and starts again during the outage, on the same data directory.
    await gw.stop();
    gw = await start(raw, dataDir);
    await until('rows of the new run', () => targetStatus(gw, 'plant'), (t) => t.committedThrough > down.committedThrough + 20);
    path.set('pass');
    const inFlight: number[] = [];
    const after = await until('the backlog forwarded', async () => {
      const t = await targetStatus(gw, 'plant');
      inFlight.push(t.inFlight);
      return t;
    }, (t) => t.state === 'connected' && t.cursor === t.committedThrough);
    expect(after.lostRows).toBe(0);
    expect(after.maxInFlight).toBe(5);
    expect(Math.max(...inFlight)).toBeLessThanOrEqual(5);
    await gw.stop();

    const rows = unsRows(sub.messages, ROOT);
    const history = (await historyOf(dataDir)).filter((r) => r.seq <= after.cursor);
    const got = delivery(rows, history);
    expect(got).toMatchObject({ missing: [], unknown: [], outOfOrder: [], different: [] });
    expect(history.length).toBeGreaterThan(down.committedThrough + 20);
    // The rows published before the outage came before those forwarded after it.
    const firstBacklog = rows.findIndex((r) => r.seq > down.cursor);
    expect(rows.slice(0, firstBacklog).every((r) => r.seq <= down.cursor)).toBe(true);
    const statuses = sub.messages.filter((m) => m.topic === `${ROOT}/_gateway/status`).map((m) => JSON.parse(m.payload.toString()).state as string);
    expect(statuses).toEqual(['online', 'offline', 'online', 'offline']);
  });

  it('rows committed while the plugin starts are forwarded too: the committed tail listens from the moment it vouches for the rows after its start', async () => {
    const broker = await startBroker();
    const sub = await listen(broker.url, [`${ROOT}/#`]);
    // A plugin booted just before northbound records ten rows and commits them at the first turn of the event loop:
    // while northbound reads and writes its cursors at start, after it took the history's position.
    const recorder = definePlugin<GatewayContext>({
      name: 'test-recorder',
      register(ctx) {
        setImmediate(() => {
          for (let i = 0; i < 10; i++) ctx.history.push({ machineID: 'M1', cls: 'Note', ts: Date.now(), data: { i } });
          void ctx.history.flush();
        });
      },
    });
    const plugins = [...TEST_PLUGINS.filter((p) => p.name !== 'northbound'), recorder, northboundPlugin];
    const gw = await startTestGateway({ ...gatewayConfig([{ name: 'plant', brokerUrl: broker.url }]), machines: [] }, undefined, { plugins });
    cleanup.push(() => gw.stop());
    const after = await caughtUp(gw, 'plant');
    expect(after.cursor).toBe(10);
    await until('the ten rows', () => unsRows(sub.messages, ROOT).length, (n) => n >= 10, 5000).catch(() => undefined);
    expect(unsRows(sub.messages, ROOT).map((r) => r.data)).toEqual(Array.from({ length: 10 }, (_, i) => ({ i })));
  });

  it('a broker that accepts and then drops every connection is retried with backoff, not hammered; nothing is acknowledged or lost, and all goes out once a broker keeps the connection', async () => {
    const broker = await startBroker();
    const path = await startBrokerPath(broker.port);
    cleanup.push(() => path.close());
    path.set('acceptThenDrop');
    const sub = await listen(broker.url, [`${ROOT}/#`]);
    const gw = await start(gatewayConfig([{ name: 'plant', brokerUrl: path.url, reconnectMaxSeconds: 4 }]));
    const started = Date.now();
    await sleep(6000);
    const seconds = (Date.now() - started) / 1000;
    const dropping = await targetStatus(gw, 'plant');
    // Waits of 0.5-1, 1-2, 2-4 s: at most 4 attempts in 6 s (one every 100 ms would be 60).
    expect(path.connections).toBeGreaterThanOrEqual(2);
    expect(path.connections).toBeLessThanOrEqual(Math.ceil(seconds / 1.5) + 1);
    expect(dropping).toMatchObject({ cursor: expect.any(Number), published: 0 });
    expect(dropping.failedAttempts).toBeGreaterThanOrEqual(2);
    expect(dropping.state === 'retrying' || dropping.state === 'connecting').toBe(true);
    expect(dropping.lastError).toMatch(/closed/);
    expect(dropping.backlogRows).toBeGreaterThan(0);
    path.set('pass');
    const after = await caughtUp(gw, 'plant');
    await gw.stop();
    const got = delivery(unsRows(sub.messages, ROOT), (await historyOf(gw.dataDir)).filter((r) => r.seq > dropping.cursor && r.seq <= after.cursor));
    expect(got).toMatchObject({ missing: [], outOfOrder: [] });
  });

  it('a message larger than the broker\'s maximum packet size is skipped and reported, not sent again at every connection; the rows after it go out', async () => {
    const broker = await startBroker();
    const sub = await listen(broker.url, [`${ROOT}/#`]);
    const gw = await start(gatewayConfig([{ name: 'plant', brokerUrl: broker.url, maxPacketBytes: 4096 }]));
    await caughtUp(gw, 'plant');
    const big = gw.gateway.context.history.push({ machineID: 'M1', cls: 'Note', ts: Date.now(), data: { text: 'x'.repeat(10_000) } });
    const small = gw.gateway.context.history.push({ machineID: 'M1', cls: 'Note', ts: Date.now(), data: { text: 'after' } });
    const after = await until('the rows after it', () => targetStatus(gw, 'plant'), (t) => t.cursor >= small);
    expect(after).toMatchObject({ oversizeRows: 1, state: 'connected', failedAttempts: 0 });
    expect(after.lastError).toMatch(new RegExp(`a message of \\d+ bytes on ${ROOT}/M1/Note is larger than the broker's maximum packet size \\(4096 bytes\\)`));
    await until('the small row', () => unsRows(sub.messages, ROOT).map((r) => r.seq), (seqs) => seqs.includes(small));
    expect(unsRows(sub.messages, ROOT).some((r) => r.seq === big)).toBe(false);
  });

  it('rows retention deleted before an outage ended are counted as lost and reported in gateway-info, /metrics and the log; the rest arrive once', async () => {
    const broker = await startBroker();
    const path = await startBrokerPath(broker.port);
    cleanup.push(() => path.close());
    const sub = await listen(broker.url, [`${ROOT}/#`]);
    const lines: { level: number; msg: string; lost?: number }[] = [];
    const logger = pino({ level: 'warn' }, new Writable({ write: (chunk: Buffer, _e, done) => void (lines.push(JSON.parse(chunk.toString()) as (typeof lines)[number]), done()) }));
    // Rows older than 3 s go at retention's first run, 10 s after the start.
    const gw = await start(gatewayConfig([{ name: 'plant', brokerUrl: path.url }], { history: { retention: { intervalSec: 10, default: { maxAgeDays: 3 / 86_400, maxRows: 0 }, classes: {} } } }), undefined, logger);
    await caughtUp(gw, 'plant');
    path.set('cut');
    const down = await targetStatus(gw, 'plant');
    await until('retention to delete rows', () => gw.request('GET', '/api/history/retention'), (r) => ((r.body.data as { lastRun: { totalDeleted: number } | null }).lastRun?.totalDeleted ?? 0) > 0, 25_000);
    path.set('pass');
    const after = await caughtUp(gw, 'plant');
    expect(after.lostRows).toBeGreaterThan(0);
    expect(after.lastError).toMatch(/no longer in the history \(retention deleted them/);
    const metrics = await gw.gateway.http.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
    expect(metrics.body).toContain(`gateway_northbound_lost_rows{target="plant"} ${after.lostRows}`);
    const logged = lines.filter((l) => l.level === 40 && /no longer in the history/.test(l.msg));
    expect(logged.reduce((sum, l) => sum + (l.lost ?? 0), 0)).toBe(after.lostRows);
    await gw.stop();
    const kept = (await historyOf(gw.dataDir)).filter((r) => r.seq > down.cursor && r.seq <= after.cursor);
    const received = unsRows(sub.messages, ROOT).filter((r) => r.seq > down.cursor);
    const got = delivery(received, kept);
    expect(got).toMatchObject({ missing: [], unknown: [], outOfOrder: [] });
    // Every sequence number after the outage began was published or counted as lost.
    expect(new Set(received.map((r) => r.seq)).size + after.lostRows).toBe(after.cursor - down.cursor);
  });

  it('a Sparkplug host\'s Node Control/Rebirth is answered with a whole new birth, same bdSeq, seq 0, before more data; the session rules hold', async () => {
    const broker = await startBroker();
    const sub = await listen(broker.url, ['spBv1.0/#']);
    const gw = await start(gatewayConfig([{ name: 'sp', brokerUrl: broker.url, format: 'sparkplug', topicRoot: 'Lyon' }]));
    await caughtUp(gw, 'sp');
    const codec = get('spBv1.0')!;
    const rebirth = Buffer.from(codec.encodePayload({ timestamp: Date.now(), metrics: [{ name: 'Node Control/Rebirth', type: 'Boolean', value: true }] }));
    await sub.client.publishAsync('spBv1.0/Lyon/NCMD/gw-t', rebirth, { qos: 1 });
    await until('a second NBIRTH', () => sparkplugMessages(sub.messages, 'Lyon', 'gw-t').filter((m) => m.type === 'NBIRTH').length, (n) => n === 2);
    await until('its DBIRTHs', () => sparkplugMessages(sub.messages, 'Lyon', 'gw-t').filter((m) => m.type === 'DBIRTH').length, (n) => n >= 6);
    await caughtUp(gw, 'sp');
    await gw.stop();
    const decoded = sparkplugMessages(sub.messages, 'Lyon', 'gw-t');
    const births = decoded.filter((m) => m.type === 'NBIRTH');
    const bdSeq = (i: number) => String(births[i]!.payload.metrics?.find((m) => m.name === 'bdSeq')?.value);
    expect(bdSeq(1)).toBe(bdSeq(0));
    expect(decoded.at(-1)?.type).toBe('NDEATH');
    expect(sparkplugRuleBreaks(decoded)).toEqual([]);
  });

  it('a target at QoS 0 publishes at most once: its cursor moves as each message is written, with no acknowledgement awaited', async () => {
    const broker = await startBroker();
    const sub = await listen(broker.url, [`${ROOT}/#`]);
    const gw = await start(gatewayConfig([{ name: 'plant', brokerUrl: broker.url, qos: 0 }]));
    const after = await caughtUp(gw, 'plant');
    await until('the rows', () => unsRows(sub.messages, ROOT).length, (n) => n >= after.cursor);
    await gw.stop();
    const got = delivery(unsRows(sub.messages, ROOT), (await historyOf(gw.dataDir)).filter((r) => r.seq <= after.cursor));
    expect(got).toMatchObject({ missing: [], unknown: [], outOfOrder: [], repeats: 0 });
  });

  it('GW-14 gateway-info, get_system_info over MCP and /metrics show each target\'s state, cursor, backlog and last error, never its password', async () => {
    const broker = new InProcessBroker({ users: { plant: 'plant-secret-pw' } });
    await broker.start();
    cleanup.push(() => broker.stop());
    const gw = await start(gatewayConfig([
      { name: 'plant', brokerUrl: broker.url, username: 'plant', password: 'plant-secret-pw', description: 'the plant UNS' },
      { name: 'wrong', brokerUrl: broker.url, username: 'plant', password: 'not-the-password' },
      { name: 'later', brokerUrl: broker.url, enabled: false },
    ]));
    const plant = await caughtUp(gw, 'plant');
    expect(plant).toMatchObject({ description: 'the plant UNS', format: 'uns', brokerUrl: broker.url, topicRoot: ROOT, enabled: true, backlogRows: 0, backlogSeconds: 0, lostRows: 0, oversizeRows: 0 });
    const wrong = await until('the refused target', () => targetStatus(gw, 'wrong'), (t) => t.failedAttempts >= 1);
    expect(wrong.state === 'retrying' || wrong.state === 'connecting').toBe(true);
    expect(wrong.lastError).toMatch(/Not authorized|Bad username or password/);
    expect(await targetStatus(gw, 'later')).toMatchObject({ state: 'disabled', enabled: false });
    const info = await gw.request('GET', '/api/system/gateway-info');
    expect(info.raw).not.toContain('not-the-password');
    expect(info.raw).not.toContain('plant-secret-pw');
    const ctx = gw.gateway.context;
    const mcp = await createToolDispatcher({ ...ctx, logger: pino({ level: 'silent' }) }).call({ name: 'get_system_info', arguments: {} }, ctx.interfaces.accessPolicy.principalFor('admin')!, '127.0.0.1');
    const text = JSON.stringify(mcp.content);
    expect(text).toContain('"name\\":\\"wrong\\"');
    expect(text).not.toContain('not-the-password');
    expect(text).not.toContain('plant-secret-pw');
    const metrics = (await gw.gateway.http.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).body;
    expect(metrics).toContain('gateway_northbound_connected{target="plant"} 1');
    expect(metrics).toContain('gateway_northbound_connected{target="wrong"} 0');
    expect(metrics).toMatch(/gateway_northbound_cursor\{target="plant"\} \d+/);
    expect(metrics).toMatch(/gateway_northbound_backlog_rows\{target="wrong"\} \d+/);
    expect(metrics).toMatch(/gateway_northbound_publish_lag_seconds_count\{target="plant"\} [1-9]/);
    expect(metrics).not.toContain('not-the-password');
  });
});

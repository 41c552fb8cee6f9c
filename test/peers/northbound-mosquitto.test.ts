/**
 * Northbound against a real Mosquitto (Debian package `mosquitto`), MQTT 5:
 * a gateway process with 100 simulated machines sampled every second
 * publishes to one UNS and one Sparkplug target; the broker is stopped for
 * 30 s and started again, later the gateway is killed with SIGKILL and
 * started again. A subscriber with a persistent session records every
 * message; after dropping repeats by `seq` it must hold every history row
 * of the run exactly once, each machine's in order, on both targets, and
 * every Sparkplug payload decodes with sparkplug-payload and keeps the
 * session rules. One run serves both formats, to stay within about two
 * minutes. Then, on brokers of their own: a refusal retried with backoff
 * until the user exists, and a message over the broker's maximum packet
 * size (told in MQTT 5's CONNACK) skipped and reported.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readAfterSeq, type SequencedRow } from '../../core/roles/gateway/history/sequence.js';
import type { NorthboundTargetStatus } from '../../core/roles/gateway/northbound-status.js';
import { Database } from '../../core/store/database.js';
import { simMachine, startTestGateway, type TestGateway } from '../fixtures/gateway.js';
import { startGatewayProcess, type GatewayProcess } from '../fixtures/gateway-process.js';
import { until } from '../fixtures/until.js';
import { delivery, sparkplugMessages, sparkplugRows, sparkplugRuleBreaks, subscribe, unsRows, type Subscriber } from '../plugins/northbound/subscriber.js';
import { startMosquitto, type MosquittoController } from './mosquitto.js';

const ROOT = 'acme/lyon/machining/gw-peer';
const PASSWORD = 'northbound-peer-admin-1';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const cleanup: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  for (const c of cleanup.splice(0).reverse()) await c().catch(() => undefined);
});

type Targets = Record<string, NorthboundTargetStatus>;
async function targets(gw: GatewayProcess): Promise<Targets> {
  const info = await gw.get<{ northbound: { targets: NorthboundTargetStatus[] } }>('/api/system/gateway-info');
  return Object.fromEntries(info.northbound.targets.map((t) => [t.name, t]));
}
const caughtUp = (t: Targets) => Object.values(t).every((x) => x.state === 'connected' && x.cursor === x.committedThrough && x.cursor > 0);

/** Every history row and each target's stored cursor, read from a stopped gateway's database. */
async function storedRun(dataDir: string): Promise<{ rows: SequencedRow[]; cursors: Record<string, number> }> {
  const db = await Database.open(join(dataDir, 'gateway.db'));
  try {
    const rows = await readAfterSeq(db, { afterSeq: 0, throughSeq: Number.MAX_SAFE_INTEGER, limit: 10_000_000 });
    const cursors = Object.fromEntries((await db.all<{ target: string; cursor: number }>('SELECT target, cursor FROM northbound_cursors')).map((c) => [c.target, c.cursor]));
    return { rows, cursors };
  } finally {
    await db.close();
  }
}

async function stopProcess(gw: GatewayProcess, signal: NodeJS.Signals): Promise<void> {
  if (gw.child.exitCode !== null) return;
  gw.child.kill(signal);
  await gw.exited;
}

describe('northbound on Mosquitto', () => {
  it('100 machines at 1 Hz, the broker stopped 30 s, the gateway killed with SIGKILL: every row exactly once after dropping repeats by seq, in order per machine, on UNS and Sparkplug; the Sparkplug rules hold', { timeout: 180_000 }, async () => {
    const broker = await startMosquitto({ persistence: true });
    cleanup.push(() => broker.stop());
    // The plant's historian: a persistent session, so what arrives while it reconnects after the broker's restart is queued for it.
    const sub = await subscribe(broker.url, [`${ROOT}/#`, 'spBv1.0/Lyon/#'], { protocolVersion: 5, clientId: 'historian', clean: false, properties: { sessionExpiryInterval: 3600 } });
    cleanup.push(() => sub.close());
    const dataDir = mkdtempSync(join(tmpdir(), 'nb-peer-'));
    const configFile = join(dataDir, 'config.json');
    writeFileSync(configFile, JSON.stringify({
      dataDir, timeZone: 'UTC', logLevel: 'warn',
      gateway: { name: 'gw-peer' }, communication: { host: '127.0.0.1', port: 0 },
      machines: Array.from({ length: 100 }, (_, i) => simMachine(`P${String(i).padStart(3, '0')}`, {
        driverOptions: { seed: 100 + i, machineType: i % 2 ? 'lathe' : 'mill', system: 'FANUC', timeScale: 20 },
        tasks: { CNCStatus: { enabled: true, intervalMs: 1000 } },
      })),
      northbound: {
        enterprise: 'acme', site: 'lyon', area: 'machining',
        targets: [
          { name: 'uns', brokerUrl: broker.url, reconnectMaxSeconds: 2 },
          { name: 'sparkplug', brokerUrl: broker.url, format: 'sparkplug', topicRoot: 'Lyon', reconnectMaxSeconds: 2 },
        ],
      },
    }));
    let gw = await startGatewayProcess(configFile, PASSWORD);
    cleanup.push(() => stopProcess(gw, 'SIGKILL'));
    await until('both targets publishing', () => targets(gw), caughtUp, 30_000);
    await sleep(5000);

    // The broker stops for 30 s; the targets keep their cursors while the history grows.
    const beforeOutage = await targets(gw);
    const brokerDown = Date.now();
    await broker.stop();
    await sleep(30_000);
    const during = await targets(gw);
    for (const t of Object.values(during)) {
      expect(t.state).not.toBe('connected');
      expect(t.backlogRows).toBeGreaterThan(100);
      expect(t.cursor).toBe(beforeOutage[t.name]!.cursor);
    }
    await broker.start();
    const brokerUp = Date.now();
    await until('the backlog forwarded', () => targets(gw), caughtUp, 60_000);
    const forwarded = Date.now();
    await sleep(3000);

    // The gateway is killed, and started again on the same data directory.
    const beforeKill = await targets(gw);
    await stopProcess(gw, 'SIGKILL');
    gw = await startGatewayProcess(configFile, PASSWORD);
    await until('publishing again after the restart', () => targets(gw), (t) => caughtUp(t) && t.uns!.cursor > beforeKill.uns!.cursor, 60_000);
    await sleep(3000);
    await stopProcess(gw, 'SIGTERM');
    // What the broker still delivers: until a second passes without a message.
    for (let seen = -1; seen !== sub.messages.length; await sleep(1000)) seen = sub.messages.length;

    const { rows: history, cursors } = await storedRun(dataDir);
    expect(history.length).toBeGreaterThan(1000);
    const uns = unsRows(sub.messages, ROOT);
    const unsGot = delivery(uns, history.filter((r) => r.seq <= cursors.uns!));
    expect(unsGot).toMatchObject({ missing: [], unknown: [], outOfOrder: [], different: [] });

    const decoded = sparkplugMessages(sub.messages, 'Lyon', 'gw-peer');
    expect(sparkplugRuleBreaks(decoded)).toEqual([]);
    const births = decoded.filter((m) => m.type === 'NBIRTH');
    // The first start, the broker's restart, the gateway's restart.
    expect(births.length).toBeGreaterThanOrEqual(3);
    const bdSeqs = births.map((b) => Number(String(b.payload.metrics?.find((m) => m.name === 'bdSeq')?.value)));
    expect(new Set(bdSeqs).size).toBe(bdSeqs.length);
    // The killed gateway's will: an NDEATH with the bdSeq of its session's NBIRTH (the rules check the match).
    expect(decoded.some((m) => m.type === 'NDEATH')).toBe(true);
    const sp = sparkplugRows(decoded);
    const spGot = delivery(sp, history.filter((r) => r.seq <= cursors.sparkplug!));
    expect(spGot).toMatchObject({ missing: [], unknown: [], outOfOrder: [] });
    // Rows recorded while the broker was down arrived marked historical; rows well after its return did not.
    const firstOf = new Map<number, boolean>();
    for (const r of sp) if (!firstOf.has(r.seq)) firstOf.set(r.seq, r.historical);
    const recordedDown = history.filter((r) => r.ts > brokerDown + 1000 && r.ts < brokerUp - 1000);
    expect(recordedDown.length).toBeGreaterThan(100);
    expect(recordedDown.filter((r) => firstOf.get(r.seq) !== true)).toEqual([]);
    const live = history.filter((r) => r.ts > forwarded && r.seq <= beforeKill.sparkplug!.cursor);
    expect(live.length).toBeGreaterThan(0);
    expect(live.filter((r) => firstOf.get(r.seq) !== false)).toEqual([]);

    const statuses = sub.messages.filter((m) => m.topic === `${ROOT}/_gateway/status`).map((m) => JSON.parse(m.payload.toString()).state as string);
    expect(statuses.at(-1)).toBe('offline');
    expect(statuses.filter((s) => s === 'online').length).toBeGreaterThanOrEqual(3);
    process.stdout.write(`northbound peer run: ${history.length} history rows, ${uns.length} UNS row messages (${unsGot.repeats} repeats), ${sp.length} Sparkplug rows (${spGot.repeats} repeats), ${decoded.length} Sparkplug messages\n`);
  });

  describe('on brokers of their own', () => {
    const gateways: TestGateway[] = [];
    const brokers: MosquittoController[] = [];
    const subs: Subscriber[] = [];
    afterAll(async () => {
      for (const s of subs) await s.close().catch(() => undefined);
      for (const g of gateways) await g.stop().catch(() => undefined);
      for (const b of brokers) await b.stop().catch(() => undefined);
    });
    const status = async (gw: TestGateway, name: string) =>
      ((await gw.request('GET', '/api/system/gateway-info')).body.data as { northbound: { targets: NorthboundTargetStatus[] } }).northbound.targets.find((t) => t.name === name) as NorthboundTargetStatus;

    it('a broker that refuses the connection (CONNACK: not authorized) is tried again with backoff until the user exists, then everything goes out', { timeout: 60_000 }, async () => {
      const broker = await startMosquitto({ users: {} });
      brokers.push(broker);
      const gw = await startTestGateway({ gateway: { name: 'gw-peer' }, machines: [simMachine('R1')], northbound: { targets: [{ name: 'plant', brokerUrl: broker.url, username: 'gw-peer', password: 'later-1', reconnectMaxSeconds: 2 }] } });
      gateways.push(gw);
      const refused = await until('refusals', () => status(gw, 'plant'), (t) => t.failedAttempts >= 2);
      expect(refused.state === 'retrying' || refused.state === 'connecting').toBe(true);
      expect(refused.lastError).toMatch(/Not authorized|Bad User Name or Password|code 13[45]/i);
      broker.addUser('gw-peer', 'later-1');
      const up = await until('connected once the user exists', () => status(gw, 'plant'), (t) => t.state === 'connected' && t.cursor === t.committedThrough && t.cursor > 0, 20_000);
      expect(up.lostRows).toBe(0);
    });

    it('a message over the maximum packet size Mosquitto announces in its MQTT 5 CONNACK is skipped and reported; the connection stays and the rows after it go out', { timeout: 60_000 }, async () => {
      const broker = await startMosquitto({ brokerLines: ['max_packet_size 2048'] });
      brokers.push(broker);
      const sub = await subscribe(broker.url, ['#']);
      subs.push(sub);
      const gw = await startTestGateway({ gateway: { name: 'gw-peer' }, machines: [simMachine('S1')], northbound: { targets: [{ name: 'plant', brokerUrl: broker.url, protocolVersion: 5 }] } });
      gateways.push(gw);
      await until('publishing', () => status(gw, 'plant'), (t) => t.state === 'connected' && t.cursor > 0);
      const big = gw.gateway.context.history.push({ machineID: 'S1', cls: 'Note', ts: Date.now(), data: { text: 'x'.repeat(5000) } });
      const small = gw.gateway.context.history.push({ machineID: 'S1', cls: 'Note', ts: Date.now(), data: { text: 'after' } });
      const after = await until('past the large row', () => status(gw, 'plant'), (t) => t.cursor >= small);
      expect(after).toMatchObject({ oversizeRows: 1, state: 'connected', failedAttempts: 0 });
      expect(after.lastError).toMatch(/larger than the broker's maximum packet size \(2048 bytes\)/);
      const root = 'enterprise/site/area/gw-peer';
      await until('the row after it', () => unsRows(sub.messages, root).map((r) => r.seq), (seqs) => seqs.includes(small));
      expect(unsRows(sub.messages, root).some((r) => r.seq === big)).toBe(false);
    });
  });
});

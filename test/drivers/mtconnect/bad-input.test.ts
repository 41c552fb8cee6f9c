/**
 * Bad input from an SHDR adapter, through a gateway reading two MTConnect
 * machines: each case goes to one adapter, and the machine behind it either
 * skips what is wrong and goes on, or drops the connection with the reason in
 * its connection error. The other machine reads on undisturbed throughout.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MtconnectClient } from '../../../drivers/mtconnect/client.js';
import { startMtconnectAdapterSimulator, type RunningAdapterSimulator } from '../../../drivers/mtconnect/simulator.js';
import { startTestGateway, type TestGateway } from '../../fixtures/gateway.js';
import { until } from '../../fixtures/until.js';
import { LATHE } from './helpers.js';

const INTERVAL_MS = 200;
const TASKS = {
  CNCStatus: { enabled: true, intervalMs: INTERVAL_MS },
  Count: { enabled: false }, Cycle: { enabled: false }, TimeData: { enabled: false }, ToolLife: { enabled: false }, OEE: { enabled: false },
};
/** A long backoff, so a dropped connection's error stays in view while the test looks. */
const CONNECTION = { backoffBaseMs: 1_500, backoffMaxMs: 1_500, failuresBeforeLost: 3, requestTimeoutMs: 2_000, connectTimeoutMs: 3_000 };

const GOOD = { ...LATHE, machineID: 'MTC-GOOD' };
const BAD = { ...LATHE, machineID: 'MTC-BAD', seed: 1 };
const SILENT = { ...LATHE, machineID: 'MTC-SILENT', seed: 2 };

const now = () => new Date().toISOString();
/** The state a scripted adapter sends on each new connection. */
const STATE = () => `${now()}|avail|AVAILABLE|execution|READY|mode|AUTOMATIC|program|O2000|part_count|7\n${now()}|system|NORMAL||||\n`;

describe('mtconnect driver: bad input from an adapter', () => {
  let good: RunningAdapterSimulator;
  let bad: RunningAdapterSimulator;
  let silent: RunningAdapterSimulator;
  let tg: TestGateway;
  const snapshot = (id: string) => tg.gateway.fleet.snapshot(id);
  const client = () => tg.gateway.fleet.client(BAD.machineID) as MtconnectClient;
  const goodSampledAt = () => snapshot(GOOD.machineID).cache.CNCStatus?.sampledAt ?? 0;

  /** The other machine is online and still sampled: nothing of the bad input reached it. */
  async function goodUndisturbed(): Promise<void> {
    const before = goodSampledAt();
    await until('MTC-GOOD sampled again', goodSampledAt, (t) => t > before, 5_000);
    expect(snapshot(GOOD.machineID).connection.state).toBe('online');
    expect(snapshot(GOOD.machineID).derived.state).not.toBe('offline');
  }

  /** Waits for the bad machine's adapter to have a client, then sends it the state. */
  async function badOnline(): Promise<void> {
    await until('MTC-BAD connected to its adapter', () => bad.clients, (n) => n === 1, 10_000);
    bad.send(STATE());
    await until('MTC-BAD online', () => snapshot(BAD.machineID), (s) => s.connection.state === 'online' && s.cache.CNCStatus?.value !== undefined, 10_000);
  }

  /** The bad machine's connection error once the connection dropped. */
  async function dropReason(): Promise<string> {
    const s = await until('MTC-BAD to drop its connection', () => snapshot(BAD.machineID).connection, (c) => c.state !== 'online' && c.error !== undefined, 10_000);
    return s.error?.message ?? '';
  }

  beforeAll(async () => {
    good = await startMtconnectAdapterSimulator({ machines: [GOOD] });
    bad = await startMtconnectAdapterSimulator({ machines: [BAD], replay: false });
    silent = await startMtconnectAdapterSimulator({ machines: [SILENT], replay: false, answerPing: false });
    const entry = (sim: RunningAdapterSimulator, id: string, driverOptions: Record<string, unknown> = {}) => ({
      ...sim.machineConfig({ ...LATHE, machineID: id }), driverOptions: { requestTimeoutMs: 1_000, ...driverOptions }, tasks: TASKS, connection: CONNECTION,
    });
    tg = await startTestGateway({
      machines: [entry(good, GOOD.machineID), entry(bad, BAD.machineID, { maxFieldsPerLine: 64 }), entry(silent, SILENT.machineID, { legacyTimeoutMs: 1_000 })],
    });
    await until('MTC-GOOD online', () => snapshot(GOOD.machineID).connection.state, (s) => s === 'online', 10_000);
    await badOnline();
  }, 30_000);

  afterAll(async () => {
    await tg?.stop();
    await Promise.all([good?.close(), bad?.close(), silent?.close()]);
  });

  it('skips a line with too many fields, and reads the next', async () => {
    bad.send(`${now()}${'|execution|ACTIVE'.repeat(100)}\n${now()}|execution|FEED_HOLD\n`);
    await until('MTC-BAD idle on feed hold', () => snapshot(BAD.machineID).derived.reason, (r) => r.includes('controller reports FEED_HOLD'), 5_000);
    expect(client().inputProblems().tooManyFields).toEqual({ count: 1, last: expect.stringContaining('more than 64 fields was skipped (driverOptions.maxFieldsPerLine)') });
    expect(snapshot(BAD.machineID).connection.state).toBe('online');
    await goodUndisturbed();
  });

  it('ignores unknown data items and reads the known ones of the same line', async () => {
    bad.send(`${now()}|spindle_temp|41.2|execution|ACTIVE|door|OPEN\n`);
    await until('MTC-BAD running', () => snapshot(BAD.machineID).derived.state, (s) => s === 'running', 5_000);
    expect(client().inputProblems().unknownDataItem?.count).toBe(2);
    expect(snapshot(BAD.machineID).connection.state).toBe('online');
    await goodUndisturbed();
  });

  it('takes the time a line arrived for a timestamp in the future', async () => {
    const sent = Date.now();
    bad.send(`2099-01-01T00:00:00Z|part_count|8|execution|STOPPED\n`);
    await until('MTC-BAD stopped', () => snapshot(BAD.machineID).cache.CNCStatus?.value?.status.adjustedStatus, (s) => s === 'STOPPED', 5_000);
    const status = await client().read('status');
    expect(status.time).toBeGreaterThanOrEqual(sent);
    expect(status.time).toBeLessThanOrEqual(Date.now());
    expect((await client().read('count')).partCount).toBe(8);
    expect(client().inputProblems().futureTimestamp?.last).toMatch(/^timestamp '2099-01-01T00:00:00Z' is \d+ s ahead of the gateway's clock/);
    await goodUndisturbed();
  });

  it('drops the connection on a 1 MB line, saying so, and reads the adapter again once it is back', async () => {
    bad.send(`${now()}|program|${'x'.repeat(1024 * 1024)}\n`);
    expect(await dropReason()).toContain('sent a line of more than 262144 bytes');
    await goodUndisturbed();
    await badOnline();
    expect((await client().read('status')).program).toBe('O2000');
  });

  it('drops the connection when garbage bytes keep coming instead of SHDR, saying so', async () => {
    // Bytes 0x80-0xff alone are never UTF-8 text, and a NUL is no SHDR either.
    const line = (i: number) => Buffer.from([0x00, ...Array.from({ length: 63 }, (_, j) => 0x80 + ((i * 64 + j) % 0x80)), 0x0a]);
    bad.send(Buffer.concat(Array.from({ length: 8 }, (_, i) => line(i))));
    expect(await dropReason()).toMatch(/does not speak SHDR: 5 lines in a row were not SHDR text \(the last began with bytes [0-9a-f ]+\)/);
    await goodUndisturbed();
    await badOnline();
  });

  it('drops the connection of an adapter that never answers the PING once it has been silent for legacyTimeoutMs, saying so', async () => {
    await until('MTC-SILENT connected to its adapter', () => silent.clients, (n) => n === 1, 10_000);
    silent.send(STATE());
    await until('MTC-SILENT online', () => snapshot(SILENT.machineID).connection.state, (s) => s === 'online', 10_000);
    const reason = await until('MTC-SILENT to drop its connection', () => snapshot(SILENT.machineID).connection, (c) => c.error !== undefined, 10_000);
    expect(reason.error?.message).toContain("sent nothing for 1.0 s and never answered '* PING' with '* PONG', so it sends no heartbeat (driverOptions.legacyTimeoutMs)");
    await goodUndisturbed();
  });
});

/**
 * The agent-to-agent loop: a gateway whose `mtconnect` driver reads another
 * gateway's MTConnect agent shows the same states, program and counts; the
 * serving gateway restarting (same data directory) leaves the reader's
 * sequence without a gap or a repeat; a reader behind the serving gateway's
 * retention gets OUT_OF_RANGE and starts over from /current, as cppagent's
 * clients do. Both gateways are real and run in this process.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import type { DriverFactory, RegisteredDriver } from '../../../core/driver-seam/driver.js';
import { DAY_MS } from '../../../core/values/time.js';
import { runRetention } from '../../../core/roles/gateway/history/retention.js';
import type { AgentSource } from '../../../drivers/mtconnect/agent-source.js';
import { MtconnectClient, mtconnectDriver, type MtconnectOptions } from '../../../drivers/mtconnect/index.js';
import { DRIVERS } from '../../../drivers/registry.js';
import { startTestGateway, type TestGateway } from '../../fixtures/gateway.js';
import { until } from '../../fixtures/until.js';
import { agentMachine, headerOf, observationsOf, startAgent, untilMachinesReported, type TestAgent } from './agent-fixture.js';

/** What the reader's driver did: each live observation's sequence in arrival order, and its log lines. */
interface ReaderTrace {
  client: MtconnectClient | undefined;
  /** The first sequence the first /sample started from. */
  start: number | undefined;
  sequences: number[];
  log: string[];
}

/** The shipped drivers, with the mtconnect driver's clients traced into `trace`. */
function tracedDrivers(trace: ReaderTrace): readonly RegisteredDriver[] {
  const stream = new Writable({
    write(chunk, _encoding, done) {
      trace.log.push(String(chunk));
      done();
    },
  });
  const traced: DriverFactory<MtconnectOptions> = {
    ...mtconnectDriver,
    create(machine, deps) {
      const client = mtconnectDriver.create(machine, { ...deps, logger: pino({ level: 'info' }, stream) }) as MtconnectClient;
      const source = client.source as AgentSource;
      source.onObservation = (_time, _receivedAt, sequence) => {
        trace.start ??= source.position.next;
        trace.sequences.push(sequence);
      };
      trace.client = client;
      return client;
    },
  };
  return DRIVERS.map((d) => (d.scheme === 'mtconnect' ? (traced as unknown as RegisteredDriver) : d));
}

/** A reader gateway with one machine read from `agentUrl`'s device M01. */
async function startReader(agentUrl: string, trace: ReaderTrace, agent: Record<string, unknown> = {}): Promise<TestGateway> {
  const machine = {
    machineID: 'R01',
    name: 'M01 read over MTConnect',
    system: 'MTConnect',
    model: 'agent',
    machineType: 'mill',
    driver: 'mtconnect',
    driverOptions: { agentUrl, device: 'M01', agent },
    tasks: { CNCStatus: { enabled: true, intervalMs: 200 }, Count: { enabled: true, intervalMs: 200 }, ToolLife: { enabled: false, intervalMs: 60_000 } },
    connection: { backoffBaseMs: 100, backoffMaxMs: 500 },
  };
  return startTestGateway({ machines: [machine], history: { flushIntervalMs: 20 } }, undefined, { drivers: tracedDrivers(trace) });
}

/** What both gateways must agree on about a machine: its derived state, program, part count and emergency stop. */
function shown(tg: TestGateway, machineID: string): { state: string; program: unknown; partCount: unknown; emergency: unknown } {
  const snapshot = tg.gateway.context.fleet.snapshot(machineID);
  const status = snapshot.cache.CNCStatus?.value?.status;
  return { state: snapshot.derived.state, program: status?.program, partCount: snapshot.cache.Count?.value?.partCount, emergency: status?.emergency };
}

/** Waits until the reader shows what the serving gateway shows at the same moment. */
async function untilSame(serving: TestAgent, reader: TestGateway): Promise<void> {
  await until(
    'the reader showing what the serving gateway shows',
    () => ({ serving: shown(serving.tg, 'M01'), reader: shown(reader, 'R01') }),
    ({ serving, reader }) => serving.partCount !== undefined && serving.program !== undefined && JSON.stringify(serving) === JSON.stringify(reader),
    60_000,
  );
}

/** The sequences of M01's observations the serving agent keeps in [from, to). */
async function servedSequences(serving: TestAgent, from: number, to: number): Promise<number[]> {
  const out: number[] = [];
  let next = from;
  while (next < to) {
    const res = await serving.get(`/M01/sample?from=${next}&count=10000`);
    expect(res.status).toBe(200);
    for (const o of observationsOf(res.body)) if (o.seq < to) out.push(o.seq);
    const h = headerOf(res.body);
    if (h.nextSequence <= next) break;
    next = h.nextSequence;
  }
  return out;
}

const newTrace = (): ReaderTrace => ({ client: undefined, start: undefined, sequences: [], log: [] });
const positionOf = (trace: ReaderTrace) => (trace.client!.source as AgentSource).position;

describe('MTConnect agent to agent: one gateway reading another', () => {
  const closing: Array<() => Promise<unknown>> = [];
  afterEach(async () => {
    for (const close of closing.splice(0).reverse()) await close();
  });

  it('the reader shows the same states, program and counts, and a restart of the serving gateway leaves no gap or repeat in its sequence', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'mtc-loop-'));
    closing.push(async () => rmSync(dataDir, { recursive: true, force: true }));
    const machines = [agentMachine('M01')];
    let serving = await startAgent({ machines }, dataDir);
    closing.push(() => serving.stop());
    await untilMachinesReported(serving, ['M01']);
    const port = Number(new URL(serving.url).port);
    const trace = newTrace();
    const reader = await startReader(serving.url, trace);
    closing.push(() => reader.stop());
    await untilSame(serving, reader);
    const instanceId = positionOf(trace).instanceId;
    expect(instanceId).toBe(headerOf((await serving.get('/current')).body).instanceId);

    // The serving gateway restarts on the same port and data directory while the reader waits to reconnect.
    const beforeRestart = positionOf(trace).next!;
    await serving.stop();
    serving = await startAgent({ machines, mtconnect: { host: '127.0.0.1', port } }, dataDir);
    const restartedAt = headerOf((await serving.get('/current')).body).nextSequence;
    expect(restartedAt).toBeGreaterThanOrEqual(beforeRestart);
    await until('the reader past the restart', () => positionOf(trace).next!, (next) => next > restartedAt, 60_000);
    await untilSame(serving, reader);

    const { next, instanceId: after } = positionOf(trace);
    const received = [...trace.sequences];
    expect(after).toBe(instanceId);
    expect(trace.log.join('')).not.toMatch(/starting over/);
    expect(received.length).toBeGreaterThan(0);
    // Every observation the serving agent keeps from where the reader started to where it is, once each, in order.
    expect(received).toEqual(await servedSequences(serving, trace.start!, next!));
  }, 180_000);

  it('the reader maps the served tool number and spindle load back to its families, and its own history and agent carry them', async () => {
    const serving = await startAgent({ machines: [agentMachine('M01')] });
    closing.push(() => serving.stop());
    await untilMachinesReported(serving, ['M01']);
    const trace = newTrace();
    const reader = await startReader(serving.url, trace);
    closing.push(() => reader.stop());
    const lastMotion = async (tg: TestGateway, machineID: string) => {
      const row = await tg.gateway.context.db.get<{ data: string }>("SELECT data FROM history WHERE machine_id = ? AND class = 'Motion' ORDER BY seq DESC LIMIT 1", [machineID]);
      return row ? (JSON.parse(row.data) as Record<string, unknown>) : undefined;
    };
    // The reader's status sample reads the families its mtconnect driver serves from the agent's items, as any driver's.
    const [served, read] = await until(
      'the reader recording the served tool number',
      async () => [await lastMotion(serving.tg, 'M01'), await lastMotion(reader, 'R01')] as const,
      ([a, b]) => a !== undefined && b !== undefined && a.toolNumber === b.toolNumber && typeof b.spindleLoad === 'number',
      60_000,
    );
    expect(typeof served?.toolNumber).toBe('number');
    // Where the gateway's families have no place without inventing values, nothing is read: positions (the family wants
    // absolute, relative and distance to go too) and the spindle speed (feedAndSpindle wants the feed rate and overrides).
    expect(Object.keys(read ?? {}).sort()).toEqual(['spindleLoad', 'toolNumber']);
    const readerAgent = reader.gateway.context.services.get('mtconnect-agent').url;
    const probe = await (await fetch(`${readerAgent}/R01/probe`)).text();
    expect(probe).toContain('type="TOOL_NUMBER"');
    expect(probe).toContain('type="LOAD"');
    expect(probe).not.toContain('type="POSITION"');
  }, 120_000);

  it('a reader behind the serving gateway\'s retention gets OUT_OF_RANGE and starts over from /current', async () => {
    // A machine five times faster than the clock, so it completes parts while the reader waits.
    const serving = await startAgent({ machines: [agentMachine('M01', { driverOptions: { seed: 7, machineType: 'mill', system: 'FANUC', timeScale: 5, cycleTimeSec: 5 } })] });
    closing.push(() => serving.stop());
    await untilMachinesReported(serving, ['M01']);
    const trace = newTrace();
    // The agent streams to this reader every 4 s: long enough for retention to remove what it would read next.
    const reader = await startReader(serving.url, trace, { intervalMs: 4000 });
    closing.push(() => reader.stop());
    await until('the reader streaming', () => trace.sequences.length, (n) => n > 0, 60_000);
    const db = serving.tg.gateway.context.db;
    const fellBehind = () => /OUT_OF_RANGE/.test(trace.log.join(''));
    let behind = 0;
    // Whenever the machine has written observations the reader has not read yet, retention runs as it would a day
    // from now with one day kept: every row written so far goes, those the reader would read next among them.
    // (Rows without an observation for the reader's device do not count: its stream passes over them.)
    while (!fellBehind()) {
      behind = positionOf(trace).next!;
      const unread = async () => observationsOf((await serving.get(`/M01/sample?from=${behind}`)).body).length;
      await until('observations the reader has not read', () => (fellBehind() ? 1 : unread()), (n) => n > 0, 60_000);
      if (fellBehind()) break;
      const run = await runRetention(db, { default: { maxAgeDays: 1, maxRows: 0 }, classes: {} }, { now: Date.now() + DAY_MS });
      expect(run.totalDeleted).toBeGreaterThan(0);
      await until('the reader reading again', () => positionOf(trace).next, (next) => next !== behind || fellBehind(), 60_000);
    }
    await until('the reader starting over', () => trace.log.join(''), (log) => /starting over from \/current/.test(log), 60_000);
    await until('the reader past its loss', () => positionOf(trace).next!, (next) => next > behind, 60_000);
    expect(positionOf(trace).next!).toBeGreaterThanOrEqual(headerOf((await serving.get('/current')).body).firstSequence);
    await untilSame(serving, reader);
  }, 180_000);
});

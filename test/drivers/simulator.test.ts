import { describe, it, expect, vi, afterEach } from 'vitest';
import { pino } from 'pino';
import type { CncStatus, FamilyValues, ReadableFamily } from '../../core/driver-seam/driver.js';
import { GatewayError } from '../../core/interfaces/errors.js';
import {
  SimulatorClient, seedFromMachineId, simulatorDriver, type SimulatorOptionsInput,
} from '../../drivers/simulator/index.js';

const T0 = Date.UTC(2025, 0, 6, 6, 0, 0);
const HOUR_MS = 3_600_000;
const READABLE: ReadableFamily[] = [
  'status', 'alarm', 'position', 'load', 'feedAndSpindle', 'toolNumber', 'timeData', 'count', 'toolLife', 'programList', 'currentProgram',
];

/** A simulator client on a fake clock that the test moves by hand. */
function simulate(options: SimulatorOptionsInput = {}, machineID = 'SIM-01'): { clock: { now: number }; client: SimulatorClient } {
  const clock = { now: T0 };
  const driverOptions = simulatorDriver.configSchema.parse(options);
  const client = simulatorDriver.create(
    { machineID, ip: '127.0.0.1', port: 0, driverOptions },
    { logger: pino({ level: 'silent' }), dataDir: '/tmp', now: () => clock.now },
  );
  if (!(client instanceof SimulatorClient)) throw new Error('simulatorDriver.create must build a SimulatorClient');
  return { clock, client };
}

async function connected(options: SimulatorOptionsInput = {}, machineID?: string): Promise<ReturnType<typeof simulate>> {
  const sim = simulate(options, machineID);
  await sim.client.connect();
  return sim;
}

async function snapshot(client: SimulatorClient): Promise<Partial<FamilyValues>> {
  const values: Partial<Record<ReadableFamily, unknown>> = {};
  for (const family of READABLE) values[family] = await client.read(family);
  return values as Partial<FamilyValues>;
}

async function rejection(promise: Promise<unknown>): Promise<GatewayError> {
  const error = await promise.then(() => undefined, (caught: unknown) => caught);
  if (!(error instanceof GatewayError)) throw new Error(`expected a GatewayError rejection, got ${String(error)}`);
  return error;
}

type Kind = 'running' | 'idle' | 'alarm' | 'setup' | 'emergency';
/** Classifies a status sample from its public fields only. */
function kindOf(status: CncStatus): Kind {
  if (status.emergency) return 'emergency';
  if (status.alarmLevel === 'alarm') return 'alarm';
  if (status.mode !== 'AUTO') return 'setup';
  return status.adjustedStatus === 'RUNNING' ? 'running' : 'idle';
}

afterEach(() => {
  vi.useRealTimers();
});

describe('simulator determinism', () => {
  it('gives identical readings for the same seed and query times', async () => {
    const a = await connected({ seed: 42 });
    const b = await connected({ seed: 42 });
    for (const at of [0, 17_000, 600_000, HOUR_MS, 2.5 * HOUR_MS]) {
      a.clock.now = b.clock.now = T0 + at;
      expect(await snapshot(a.client)).toEqual(await snapshot(b.client));
    }
  });

  it('gives different machines for different seeds and machine IDs', async () => {
    const a = await connected({ seed: 1 });
    const b = await connected({ seed: 2 });
    a.clock.now = b.clock.now = T0 + HOUR_MS;
    expect(await snapshot(a.client)).not.toEqual(await snapshot(b.client));
    const c = await connected({}, 'LATHE-07');
    const d = await connected({}, 'LATHE-08');
    expect(await c.client.read('programList')).not.toEqual(await d.client.read('programList'));
  });

  it('derives the default seed from the machine ID', async () => {
    const byId = await connected({}, 'MC-12');
    const bySeed = await connected({ seed: seedFromMachineId('MC-12') }, 'OTHER');
    byId.clock.now = bySeed.clock.now = T0 + 3 * HOUR_MS;
    expect(await snapshot(byId.client)).toEqual(await snapshot(bySeed.client));
  });

  it('does not depend on intermediate queries', async () => {
    const sampled = await connected({ seed: 7 });
    const once = await connected({ seed: 7 });
    for (let at = 0; at < 4 * HOUR_MS; at += 10_000) {
      sampled.clock.now = T0 + at;
      await sampled.client.read('status');
    }
    sampled.clock.now = once.clock.now = T0 + 4 * HOUR_MS;
    expect(await snapshot(sampled.client)).toEqual(await snapshot(once.client));
    // Going back in time replays the schedule rather than returning stale state.
    const fresh = await connected({ seed: 7 });
    sampled.clock.now = fresh.clock.now = T0 + HOUR_MS;
    expect(await snapshot(sampled.client)).toEqual(await snapshot(fresh.client));
  });

  it('runs faster with timeScale: a minute at 60x is an hour at 1x', async () => {
    const fast = await connected({ seed: 5, timeScale: 60 });
    const slow = await connected({ seed: 5 });
    fast.clock.now = T0 + 60_000;
    slow.clock.now = T0 + HOUR_MS;
    const fastStatus = await fast.client.read('status');
    expect(fastStatus.time).toBe(T0 + HOUR_MS);
    expect(await snapshot(fast.client)).toEqual(await snapshot(slow.client));
  });
});

describe('simulator over 8 simulated hours', () => {
  it('cycles through every status kind with plausible parts, alarms, timers and tools', async () => {
    const cycleTimeSec = 90;
    const { clock, client } = await connected({ seed: 11, cycleTimeSec, estopRate: 5, alarmRate: 2 });
    const kinds = new Map<Kind, number>();
    const openAlarms = new Map<string, number>();
    let clearedAlarms = 0;
    let warningsWhileRunning = 0;
    const toolsWhileRunning = new Set<number>();
    let previous = { count: await client.read('count'), time: await client.read('timeData'), running: false, x: 0 };
    const first = previous;
    let partsSeen = 0;
    let movedWhileRunning = 0;
    for (let at = 5_000; at <= 8 * HOUR_MS; at += 5_000) {
      clock.now = T0 + at;
      const status = await client.read('status');
      const kind = kindOf(status);
      expect(client.machine.phase()).toBe(kind);
      kinds.set(kind, (kinds.get(kind) ?? 0) + 1);
      if (kind === 'running' && status.alarmLevel === 'warning') warningsWhileRunning++;

      const alarms = await client.read('alarm');
      const active = alarms.filter((alarm) => alarm.level === 'alarm');
      expect(active.length > 0).toBe(kind === 'alarm');
      for (const alarm of active) {
        expect(alarm.code).toMatch(/^[A-Z]{2}\d{4}$/);
        expect(alarm.message.length).toBeGreaterThan(3);
        expect(alarm.since).toBeLessThanOrEqual(status.time);
        openAlarms.set(`${alarm.code}@${alarm.since}`, alarm.since);
      }
      for (const key of [...openAlarms.keys()]) {
        if (!active.some((alarm) => `${alarm.code}@${alarm.since}` === key)) {
          openAlarms.delete(key);
          clearedAlarms++;
        }
      }

      const count = await client.read('count');
      const time = await client.read('timeData');
      const feed = await client.read('feedAndSpindle');
      const [axis] = await client.read('position');
      expect(count.partsTotal - previous.count.partsTotal).toBeGreaterThanOrEqual(0);
      expect(count.partsTotal - previous.count.partsTotal).toBeLessThanOrEqual(1);
      if (count.partsTotal > previous.count.partsTotal) {
        partsSeen++;
        expect(count.partCount === previous.count.partCount + 1 || count.partCount === 1).toBe(true);
        expect(count.lastCycleTime).toBeGreaterThan(0.5 * cycleTimeSec);
        expect(count.lastCycleTime).toBeLessThan(1.7 * cycleTimeSec);
      }
      expect(time.powerOnTime - previous.time.powerOnTime).toBeGreaterThanOrEqual(4);
      expect(time.operatingTime).toBeGreaterThanOrEqual(previous.time.operatingTime);
      expect(time.cuttingTime).toBeGreaterThanOrEqual(previous.time.cuttingTime);
      expect(time.cuttingTime).toBeLessThanOrEqual(time.operatingTime);
      expect(time.operatingTime).toBeLessThanOrEqual(time.powerOnTime);
      if (kind === 'running') {
        toolsWhileRunning.add((await client.read('toolNumber')).toolNumber);
        if (previous.running && axis?.absolute !== previous.x) movedWhileRunning++;
        expect(feed.spindleSpeed).toBeGreaterThan(0);
      } else if (kind !== 'idle') {
        expect(feed.feedRate).toBe(0);
        expect(feed.spindleSpeed).toBe(0);
      }
      previous = { count, time, running: kind === 'running', x: axis?.absolute ?? 0 };
    }
    expect([...kinds.keys()].sort()).toEqual(['alarm', 'emergency', 'idle', 'running', 'setup']);
    expect(kinds.get('running') ?? 0).toBeGreaterThan((kinds.get('setup') ?? 0) + (kinds.get('alarm') ?? 0));
    expect(clearedAlarms).toBeGreaterThan(0);
    expect(warningsWhileRunning).toBeGreaterThan(0);
    expect(partsSeen).toBeGreaterThan(60);
    expect(previous.count.partsTotal - first.count.partsTotal).toBe(partsSeen);
    expect(toolsWhileRunning.size).toBeGreaterThan(1);
    expect(movedWhileRunning).toBeGreaterThan(100);
    const operatedSec = previous.time.operatingTime - first.time.operatingTime;
    const runningSec = (kinds.get('running') ?? 0) * 5;
    expect(Math.abs(operatedSec - runningSec)).toBeLessThan(0.05 * runningSec);
  });

  it('wears tools with parts, one count per part per tool in use', async () => {
    const { clock, client } = await connected({ seed: 3, alarmRate: 0, setupRate: 0, estopRate: 0 });
    const usedBefore = (await client.read('toolLife')).reduce((sum, tool) => sum + tool.used, 0);
    const partsBefore = (await client.read('count')).partsTotal;
    clock.now = T0 + 20 * 60_000;
    const tools = await client.read('toolLife');
    const parts = (await client.read('count')).partsTotal - partsBefore;
    expect(parts).toBeGreaterThan(0);
    expect(tools.reduce((sum, tool) => sum + tool.used, 0)).toBeGreaterThan(usedBefore);
    for (const tool of tools) {
      expect(tool.unit).toBe('count');
      expect(tool.remainingPercent).toBeCloseTo(Math.max(0, 100 * (1 - tool.used / tool.limit)), 0);
    }
    const [someTool] = tools;
    if (someTool === undefined) throw new Error('a simulated machine has tools');
    expect(await client.read('toolLife', { toolNum: someTool.toolNum })).toEqual([someTool]);
    const group = await client.read('toolLife', { groupNum: someTool.groupNum });
    expect(group.length).toBeGreaterThan(0);
    expect(group.every((tool) => tool.groupNum === someTool.groupNum)).toBe(true);
    expect(await client.read('toolLife', { offsetNum: 999 })).toEqual([]);
  });

  it('models axes by machine type and vendor texts by system', async () => {
    const lathe = await connected({ machineType: 'lathe', system: 'SINUMERIK 840D sl' });
    expect((await lathe.client.read('position')).map((axis) => axis.axis)).toEqual(['X', 'Z']);
    const center = await connected({ machineType: 'machiningCenter' });
    expect((await center.client.read('position')).map((axis) => axis.axis)).toEqual(['X', 'Y', 'Z', 'B']);
    const texts = new Set<string>();
    for (let at = 0; at < 4 * HOUR_MS; at += 30_000) {
      lathe.clock.now = T0 + at;
      texts.add((await lathe.client.read('status')).cncStatus);
    }
    expect(texts.has('ACTIVE')).toBe(true);
    for (const text of texts) expect(['RESET', 'ACTIVE', 'STOPPED', 'INTERRUPTED', 'EMERGENCY STOP']).toContain(text);
  });
});

describe('simulator families', () => {
  it('rejects a family left out of `families`, naming driver and family', async () => {
    const { client } = await connected({ families: ['status', 'alarm'] });
    expect([...client.families].sort()).toEqual(['alarm', 'status']);
    expect((await client.read('status')).adjustedStatus).toBeTypeOf('string');
    const error = await rejection(client.read('count'));
    expect(error.errorName).toBe('DRIVER_FAMILY_UNSUPPORTED');
    expect(error.message).toContain("driver 'simulator'");
    expect(error.message).toContain("family 'count'");
    expect((await rejection(client.downloadProgram('//CNC_MEM/USER/PATH1/', 'O1001'))).message).toContain("'programFiles'");
  });
});

describe('simulator connection', () => {
  it('rejects reads before connect and after close; close is idempotent', async () => {
    const { client } = simulate();
    expect((await rejection(client.read('status'))).errorName).toBe('MACHINE_NOT_CONNECTED');
    await client.connect();
    await expect(client.read('status')).resolves.toHaveProperty('cncStatus');
    await client.close();
    await client.close();
    expect((await rejection(client.read('status'))).errorName).toBe('MACHINE_NOT_CONNECTED');
  });

  it('loses the connection on demand, tells listeners once, and reconnects after restore', async () => {
    const { clock, client } = await connected();
    const reasons: string[] = [];
    client.onConnectionLost((event) => reasons.push(event.reason));
    await client.uploadProgram('//CNC_MEM/USER/PATH1/', 'O9001', Buffer.from('%\nO9001\nM30\n%\n'));
    client.loseConnection();
    client.loseConnection();
    expect(reasons).toHaveLength(1);
    expect(client.isConnected).toBe(false);
    expect((await rejection(client.read('status'))).errorName).toBe('MACHINE_NOT_CONNECTED');
    clock.now += HOUR_MS;
    expect((await rejection(client.connect())).errorName).toBe('MACHINE_NOT_CONNECTED');
    client.restoreConnection();
    expect((await rejection(client.read('status'))).errorName).toBe('MACHINE_NOT_CONNECTED');
    await client.connect();
    expect((await client.downloadProgram('//CNC_MEM/USER/PATH1/', 'O9001')).toString()).toContain('O9001');
    expect(reasons).toHaveLength(1);
  });

  it('restores a timed loss by the injected clock', async () => {
    const { clock, client } = await connected();
    let losses = 0;
    client.onConnectionLost(() => losses++);
    client.loseConnection(30_000);
    clock.now += 29_999;
    expect((await rejection(client.connect())).errorName).toBe('MACHINE_NOT_CONNECTED');
    clock.now += 1;
    await client.connect();
    await expect(client.read('count')).resolves.toHaveProperty('partsTotal');
    expect(losses).toBe(1);
  });

  it('drops periodically with connectionLoss', async () => {
    const { clock, client } = await connected({ connectionLoss: { everySec: 60, durationSec: 10 } });
    let losses = 0;
    client.onConnectionLost(() => losses++);
    clock.now = T0 + 49_999;
    await expect(client.read('status')).resolves.toHaveProperty('mode');
    clock.now = T0 + 50_000;
    expect((await rejection(client.read('status'))).errorName).toBe('MACHINE_NOT_CONNECTED');
    expect((await rejection(client.connect())).errorName).toBe('MACHINE_NOT_CONNECTED');
    expect(losses).toBe(1);
    clock.now = T0 + 60_000;
    await client.connect();
    await expect(client.read('status')).resolves.toHaveProperty('mode');
  });

  it('waits connectLatencyMs on a timer that close() cancels', async () => {
    vi.useFakeTimers();
    const slow = simulate({ connectLatencyMs: 1_000 });
    let done = false;
    const connecting = slow.client.connect().then(() => (done = true));
    await vi.advanceTimersByTimeAsync(999);
    expect(done).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    await connecting;
    expect(slow.client.isConnected).toBe(true);
    const aborted = simulate({ connectLatencyMs: 1_000 });
    const pending = aborted.client.connect();
    await aborted.client.close();
    expect((await rejection(pending)).errorName).toBe('MACHINE_NOT_CONNECTED');
    expect(vi.getTimerCount()).toBe(0);
  });

  it('answers after requestLatencyMs, and close() rejects requests in flight', async () => {
    vi.useFakeTimers();
    const { client } = await connected({ requestLatencyMs: 200 });
    let answered = false;
    const reading = client.read('status').then(() => (answered = true));
    await vi.advanceTimersByTimeAsync(199);
    expect(answered).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    await reading;
    expect(answered).toBe(true);
    const inFlight = client.read('count');
    await client.close();
    expect((await rejection(inFlight)).errorName).toBe('MACHINE_NOT_CONNECTED');
    expect(vi.getTimerCount()).toBe(0);
  });
});

describe('simulator programs', () => {
  it('lists O-number programs and serves the current one with its block', async () => {
    const { client } = await connected({ machineType: 'lathe' });
    const list = await client.read('programList');
    expect(list.length).toBeGreaterThanOrEqual(4);
    for (const entry of list) {
      expect(entry.name).toMatch(/^O\d{4}$/);
      expect(entry.dir).toBe('//CNC_MEM/USER/PATH1/');
      expect(entry.size).toBeGreaterThan(50);
    }
    const current = await client.read('currentProgram');
    expect(list.map((entry) => entry.name)).toContain(current.name);
    const text = current.content.toString('latin1');
    expect(text).toMatch(/^%\nO\d{4} \(/);
    expect(text).toContain('M30');
    expect(text).toMatch(/T\d{4}/);
    expect(current.block).toBeGreaterThanOrEqual(1);
    const [, second] = list;
    const from = Number(second?.name.slice(1));
    expect((await client.read('programList', { startPrgNo: from })).every((entry) => Number(entry.name.slice(1)) >= from)).toBe(true);
  });

  it('round-trips upload and download, and reports a missing program', async () => {
    const { client } = await connected();
    const content = Buffer.from('%\nO2500 (TEST PART)\nG21 G90\nM30\n%\n');
    await client.uploadProgram('//CNC_MEM/USER/PATH1', 'O2500', content);
    expect(await client.downloadProgram('//CNC_MEM/USER/PATH1/', 'O2500')).toEqual(content);
    const entry = (await client.read('programList')).find((file) => file.name === 'O2500');
    expect(entry).toMatchObject({ size: content.length, comment: 'TEST PART' });
    const current = await client.read('currentProgram');
    await client.uploadProgram(current.dir, current.name, content);
    expect((await client.read('currentProgram')).content).toEqual(content);
    const missing = await rejection(client.downloadProgram('//CNC_MEM/USER/PATH1/', 'O7777'));
    expect(missing.errorName).toBe('PROGRAM_NOT_FOUND');
  });
});

describe('simulator configSchema', () => {
  const schema = simulatorDriver.configSchema;

  it('applies defaults', () => {
    expect(schema.parse({})).toEqual({
      timeScale: 1, machineType: 'machiningCenter', system: 'FANUC', cycleTimeSec: 120,
      alarmRate: 1, setupRate: 1, estopRate: 1, runsLastProgram: false, connectLatencyMs: 0, requestLatencyMs: 0,
    });
  });

  it.each([
    [{ timeScale: 0 }, 'timeScale'],
    [{ machineType: 'router' }, 'machineType'],
    [{ seed: 1.5 }, 'seed'],
    [{ alarmRate: -1 }, 'alarmRate'],
    [{ families: ['status', 'coolant'] }, 'families'],
    [{ connectionLoss: { everySec: 10, durationSec: 10 } }, 'connectionLoss'],
  ])('rejects %j naming %s', (options, field) => {
    const result = schema.safeParse(options);
    expect(result.success).toBe(false);
    const issue = result.error?.issues[0];
    expect(issue?.path[0]).toBe(field);
    expect(issue?.message).toContain(field.replace('connectionLoss', 'durationSec'));
  });

  it('rejects unknown keys', () => {
    expect(schema.safeParse({ timescale: 2 }).error?.issues[0]?.message).toContain('timescale');
  });
});

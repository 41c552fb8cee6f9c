import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GatewayError } from '../../../core/interfaces/errors.js';
import type { ItemFamily } from '../../../core/driver-seam/driver.js';
import { MachineHistory } from '../../../core/roles/gateway/fleet/machine-history.js';
import { readMotion } from '../../../core/roles/gateway/fleet/motion.js';
import type { HistoryRow } from '../../../core/roles/gateway/history/writer.js';
import { simulatorDriver, SimulatorClient } from '../../../drivers/simulator/index.js';
import { FIRST_MOTION_SLOT } from '../../../plugins/mtconnect-agent/motion-items.js';
import { MachineReplay, type Observation, type ReplayRow } from '../../../plugins/mtconnect-agent/replay.js';
import { schemaErrors } from '../../fixtures/mtconnect/validate.js';
import { until } from '../../fixtures/until.js';
import { agentMachine, list, observationsOf, parseXml, startAgent, untilMachinesReported, type TestAgent } from './agent-fixture.js';

const silent = { now: () => Date.now() };

async function simulator(families?: ItemFamily[]): Promise<SimulatorClient> {
  const options = simulatorDriver.configSchema.parse({ seed: 7, machineType: 'mill', system: 'FANUC', ...(families ? { families } : {}) });
  const client = new SimulatorClient({ ...options, seed: 7 }, silent);
  await client.connect();
  return client;
}

describe('motion read beside the status sample', () => {
  it('reads only the families the driver declares: none of them, no motion at all', async () => {
    const none = await simulator(['status', 'alarm', 'count']);
    expect(await readMotion(none)).toBeUndefined();
    const positions = await simulator(['status', 'position']);
    const motion = await readMotion(positions);
    expect(Object.keys(motion ?? {})).toEqual(['axes']);
    expect(motion?.axes?.map((a) => a.axis)).toEqual((await positions.read('position')).map((a) => a.axis));
    const all = await simulator();
    expect(Object.keys((await readMotion(all)) ?? {}).sort()).toEqual(['axes', 'spindleLoad', 'spindleSpeed', 'toolNumber']);
    for (const c of [none, positions, all]) await c.close();
  });

  it('a family whose read fails is null (shown UNAVAILABLE), the others are read', async () => {
    const client = await simulator();
    const failing = {
      families: client.families,
      read: ((family: string) => (family === 'load' ? Promise.reject(new GatewayError('DRIVER_TIMEOUT', 'load read timed out')) : client.read(family as 'position'))) as SimulatorClient['read'],
    };
    const motion = await readMotion(failing);
    expect(motion?.spindleLoad).toBeNull();
    expect(typeof motion?.spindleSpeed).toBe('number');
    expect(motion?.axes?.length).toBeGreaterThan(0);
    // Loads of the axes only: the machine has no spindle load, not an UNAVAILABLE one.
    const axesOnly = {
      families: client.families,
      read: (async (family: string) => (family === 'load' ? (await client.read('load')).filter((l) => l.name !== 'S1') : client.read(family as 'position'))) as SimulatorClient['read'],
    };
    const withoutSpindle = await readMotion(axesOnly);
    expect(Object.keys(withoutSpindle ?? {}).sort()).toEqual(['axes', 'spindleSpeed', 'toolNumber']);
    await client.close();
  });

  it('the history gets a Motion row when a value changed, and none when nothing did', () => {
    const rows: HistoryRow[] = [];
    const history = new MachineHistory('M1', { push: (r) => rows.push(r) });
    const status = { cncStatus: 'STRT', adjustedStatus: 'RUNNING', alarmStatus: false, alarmLevel: 'none', mode: 'AUTO', programStatus: 'running', emergency: false, time: 0 } as const;
    const motion = { axes: [{ axis: 'X', machine: 1.5, unit: 'mm' as const }], spindleSpeed: 1200, toolNumber: 3 };
    history.onStatus({ status, alarms: [], motion }, 1);
    history.onStatus({ status, alarms: [], motion: { ...motion, axes: [{ axis: 'X', machine: 1.5, unit: 'mm' }] } }, 2);
    history.onStatus({ status, alarms: [], motion: { ...motion, spindleSpeed: 1300 } }, 3);
    history.onStatus({ status, alarms: [] }, 4);
    expect(rows.map((r) => [r.cls, r.ts])).toEqual([['CNCStatus', 1], ['Motion', 1], ['Motion', 3]]);
  });

  it('history.motion.minIntervalMs: a change within the interval waits for it, and is recorded then only if the reading still differs from the last row', () => {
    const rows: HistoryRow[] = [];
    const history = new MachineHistory('M1', { push: (r) => rows.push(r) }, 5000);
    const status = { cncStatus: 'STRT', adjustedStatus: 'RUNNING', alarmStatus: false, alarmLevel: 'none', mode: 'AUTO', programStatus: 'running', emergency: false, time: 0 } as const;
    const at = (x: number) => ({ axes: [{ axis: 'X', machine: x, unit: 'mm' as const }], toolNumber: 3 });
    const motionRows = () => rows.filter((r) => r.cls === 'Motion').map((r) => [r.ts, (r.data as { axes: { machine: number }[] }).axes[0]!.machine]);
    history.onStatus({ status, alarms: [], motion: at(1) }, 0);
    history.onStatus({ status, alarms: [], motion: at(2) }, 1000);
    history.onStatus({ status, alarms: [], motion: at(3) }, 4999);
    // The interval has passed: the latest reading, not the one at 1000.
    history.onStatus({ status, alarms: [], motion: at(3) }, 5000);
    // Back where the last row says within the interval, and still there after it: nothing to record.
    history.onStatus({ status, alarms: [], motion: at(4) }, 6000);
    history.onStatus({ status, alarms: [], motion: at(3) }, 10_000);
    expect(motionRows()).toEqual([[0, 1], [5000, 3]]);
  });
});

describe('history.motion.enabled: false', () => {
  let off: TestAgent;
  beforeAll(async () => {
    off = await startAgent({ history: { flushIntervalMs: 20, motion: { enabled: false } } });
    await untilMachinesReported(off);
  }, 60_000);
  afterAll(() => off?.stop());

  it('the status sample reads no axes, spindle or tool: no Motion rows, and the devices have no Axes', async () => {
    const db = off.tg.gateway.context.db;
    const fleet = off.tg.gateway.fleet;
    // Several status samples (every 200 ms) after the first, and still no Motion row.
    const sampledAt = () => fleet.snapshot('M01').cache.CNCStatus?.sampledAt ?? 0;
    const first = await until('a first status sample', sampledAt, (t) => t > 0);
    await until('three more status samples', sampledAt, (t) => t >= first + 600);
    expect((await db.get<{ n: number }>("SELECT COUNT(*) AS n FROM history WHERE class = 'Motion'"))!.n).toBe(0);
    expect((await db.get<{ n: number }>("SELECT COUNT(*) AS n FROM history WHERE class = 'CNCStatus'"))!.n).toBeGreaterThan(0);
    const devices = parseXml((await off.get('/probe')).body).MTConnectDevices.Devices;
    expect(list(devices.Device).map((d) => d.Components?.Axes)).toEqual(list(devices.Device).map(() => undefined));
  });
});

let seq = 0;
const row = (cls: string, data: Record<string, unknown>): ReplayRow => ({ seq: ++seq, machineID: 'M1', cls, ts: seq * 1000, data });
const brief = (os: Observation[]) => os.map((o) => `${o.item}@${o.seq % 100}=${o.level ?? ''}${o.value}`);
function run(replay: MachineReplay, r: ReplayRow): Observation[] {
  const out: Observation[] = [];
  replay.apply(r, (o) => out.push(o));
  return out;
}
const running = { cncStatus: 'STRT', adjustedStatus: 'RUNNING', alarmStatus: false, alarmLevel: 'none', mode: 'AUTO', programStatus: 'running', emergency: false, program: 'O1', time: 0 };

describe('MTConnect motion observations replayed from Motion rows', () => {
  it('a Motion row gives the values it changed at the motion slots; an inch axis in millimetres, a failed read UNAVAILABLE', () => {
    const r = new MachineReplay('M1');
    run(r, row('CNCStatus', running));
    run(r, row('State', { state: 'running', reason: 'running: x', connection: 'online' }));
    const axes = [{ axis: 'X', machine: 10, unit: 'inch' }, { axis: 'B', machine: 90, unit: 'deg' }];
    expect(brief(run(r, row('Motion', { axes, spindleSpeed: 800, spindleLoad: null, toolNumber: 4 })))).toEqual([
      `tool@${FIRST_MOTION_SLOT}=4`,
      `spindleSpeed@${FIRST_MOTION_SLOT + 1}=800`,
      `spindleLoad@${FIRST_MOTION_SLOT + 2}=UNAVAILABLE`,
      `axis:X@${FIRST_MOTION_SLOT + 3}=254`,
      `axis:B@${FIRST_MOTION_SLOT + 4}=90`,
    ]);
    expect(brief(run(r, row('Motion', { axes: [{ ...axes[0], machine: 11 }, axes[1]], spindleSpeed: 800, spindleLoad: 20, toolNumber: 4 })))).toEqual([
      `spindleLoad@${FIRST_MOTION_SLOT + 2}=20`,
      `axis:X@${FIRST_MOTION_SLOT + 3}=279.4`,
    ]);
    expect(r.motion.layout()).toEqual({ tool: true, spindleSpeed: true, spindleLoad: true, axes: [{ axis: 'X', unit: 'inch' }, { axis: 'B', unit: 'deg' }] });
  });

  it('axes read in another order are a new layout in which each keeps its item; a new axis is a new item and a new layout', () => {
    const r = new MachineReplay('M1');
    run(r, row('CNCStatus', running));
    run(r, row('State', { state: 'running', reason: 'running: x', connection: 'online' }));
    run(r, row('Motion', { axes: [{ axis: 'X', machine: 1, unit: 'mm' }, { axis: 'Y', machine: 2, unit: 'mm' }] }));
    const key = r.motion.layoutKey();
    // The same axes in another order, Y changed: only Y is observed, at the slot of its place in the new order.
    expect(brief(run(r, row('Motion', { axes: [{ axis: 'Y', machine: 3, unit: 'mm' }, { axis: 'X', machine: 1, unit: 'mm' }] })))).toEqual([`axis:Y@${FIRST_MOTION_SLOT + 3}=3`]);
    expect(r.motion.layoutKey()).not.toBe(key);
    // Back in the first order, nothing changed: nothing is observed, and the layout is the first one again.
    expect(brief(run(r, row('Motion', { axes: [{ axis: 'X', machine: 1, unit: 'mm' }, { axis: 'Y', machine: 3, unit: 'mm' }] })))).toEqual([]);
    expect(r.motion.layoutKey()).toBe(key);
    // A third axis: a new item at the next slot, and a new layout.
    expect(brief(run(r, row('Motion', { axes: [{ axis: 'X', machine: 1, unit: 'mm' }, { axis: 'Y', machine: 3, unit: 'mm' }, { axis: 'Z', machine: -4, unit: 'mm' }] })))).toEqual([`axis:Z@${FIRST_MOTION_SLOT + 5}=-4`]);
    expect(r.motion.layoutKey()).not.toBe(key);
    expect(r.motion.layout()?.axes.map((a) => a.axis)).toEqual(['X', 'Y', 'Z']);
  });

  it('the motion items are UNAVAILABLE while the status is not current, on the State row, and show their values again after', () => {
    const r = new MachineReplay('M1');
    run(r, row('CNCStatus', running));
    run(r, row('State', { state: 'running', reason: 'running: x', connection: 'online' }));
    run(r, row('Motion', { axes: [{ axis: 'X', machine: 5, unit: 'mm' }], toolNumber: 2 }));
    const offline = run(r, row('State', { state: 'offline', reason: 'offline: lost', connection: 'backoff' }));
    expect(brief(offline).filter((o) => /^(tool|axis)/.test(o))).toEqual([`tool@${FIRST_MOTION_SLOT}=UNAVAILABLE`, `axis:X@${FIRST_MOTION_SLOT + 3}=UNAVAILABLE`]);
    const back = run(r, row('State', { state: 'running', reason: 'running: x', connection: 'online' }));
    expect(brief(back).filter((o) => /^(tool|axis)/.test(o))).toEqual([`tool@${FIRST_MOTION_SLOT}=2`, `axis:X@${FIRST_MOTION_SLOT + 3}=5`]);
    // Every observation of a row has its own number: the alarms shown on a State row stay below the motion slots.
    expect(new Set(back.map((o) => o.seq)).size).toBe(back.length);
  });
});

describe('the agent serves the motion items the driver reads', () => {
  let agent: TestAgent;
  beforeAll(async () => {
    agent = await startAgent({
      machines: [agentMachine('M01'), agentMachine('M02', { driverOptions: { seed: 7, machineType: 'mill', system: 'FANUC', families: ['status', 'alarm', 'count', 'toolLife'] } })],
      history: { flushIntervalMs: 20, heartbeatSec: 3600 },
    });
    await untilMachinesReported(agent);
  }, 60_000);
  afterAll(() => agent?.stop());

  it('the probe has Axes, the spindle and TOOL_NUMBER for a machine whose driver reads them, none for one whose driver does not, valid against the 2.7 schema', async () => {
    const res = await until('M01 with axes in the probe', () => agent.get('/probe'), (r) => r.body.includes('M01_axes'));
    expect(await schemaErrors('Devices', res.body)).toEqual([]);
    const devices = list(parseXml(res.body).MTConnectDevices.Devices.Device);
    const m01 = devices.find((d) => d['@_name'] === 'M01');
    const m02 = devices.find((d) => d['@_name'] === 'M02');
    const linear = list(m01.Components.Axes.Components.Linear);
    expect(linear.length).toBeGreaterThan(0);
    const position = linear[0].DataItems.DataItem;
    expect([position['@_type'], position['@_subType'], position['@_units'], position['@_category']]).toEqual(['POSITION', 'ACTUAL', 'MILLIMETER', 'SAMPLE']);
    const spindle = list(m01.Components.Axes.Components.Rotary).find((r) => r['@_name'] === 'spindle');
    expect(list(spindle.DataItems.DataItem).map((d) => `${d['@_type']}/${d['@_units']}`)).toEqual(['ROTARY_VELOCITY/REVOLUTION/MINUTE', 'LOAD/PERCENT']);
    expect(m02.Components.Axes).toBeUndefined();
    expect(res.body).not.toContain('M02_tool');
    const json = JSON.parse((await agent.get('/M01/probe', 'application/json')).body) as unknown;
    expect(JSON.stringify(json)).toContain('"units":"MILLIMETER"');
  });

  it('/current and /sample carry the motion observations with sequence numbers from the history, valid against the 2.7 schema', async () => {
    const current = await until('M01 positions in /current', async () => (await agent.get('/M01/current')).body, (b) => observationsOf(b).some((o) => o.element === 'Position'));
    expect(await schemaErrors('Streams', current)).toEqual([]);
    const observed = observationsOf(current);
    const tool = observed.find((o) => o.element === 'ToolNumber');
    expect(tool?.value).toMatch(/^\d+$/);
    const speed = observed.find((o) => o.element === 'RotaryVelocity');
    expect((speed?.seq ?? 0) % 100).toBe(FIRST_MOTION_SLOT + 1);
    const sample = (await agent.get('/M01/sample?path=//DataItem[@type="POSITION"]&count=50')).body;
    expect(await schemaErrors('Streams', sample)).toEqual([]);
    const positions = observationsOf(sample);
    expect(positions.length).toBeGreaterThan(0);
    expect(positions.every((o) => o.element === 'Position' && (o.value === 'UNAVAILABLE' || Number.isFinite(Number(o.value))))).toBe(true);
    expect((await agent.get('/M02/current')).body).not.toContain('<Position');
  });
});

import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { parseConfig } from '../../core/roles/index.js';
import type { GatewayContext } from '../../core/roles/gateway/context.js';
import { DERIVED_STATES } from '../../core/roles/gateway/fleet/derive-state.js';
import { Gateway } from '../../core/roles/gateway/gateway.js';
import { definePlugin } from '../../core/runtime/plugin-host.js';
import { DRIVERS } from '../../drivers/registry.js';
import { SimulatorClient } from '../../drivers/simulator/index.js';
import { TEST_PLUGINS } from '../fixtures/gateway.js';
import { LIVE_READS, defineLiveReadInterfaces } from '../../plugins/gateway-api/live-reads.js';
import { simMachine } from '../fixtures/gateway.js';

type Body = { errorCode: number; errorMsg: string; data?: unknown; hint?: string };
type Data = Record<string, unknown>;

const liveReadsUnderTest = definePlugin<GatewayContext>({
  name: 'live-reads-under-test',
  dependsOn: ['gateway-api'],
  register(ctx) {
    // Once gateway-api defines the live reads itself, the test runs against its definitions.
    if (!ctx.interfaces.get('/api/cnc/readAlarm')) defineLiveReadInterfaces(ctx);
  },
});

const NO_TASKS = Object.fromEntries(['CNCStatus', 'Count', 'Cycle', 'TimeData', 'ToolLife', 'OEE'].map((t) => [t, { enabled: false }]));

let gateway: Gateway;
let dataDir: string;

async function get(url: string): Promise<{ status: number; body: Body }> {
  const res = await gateway.http.inject({ method: 'GET', url });
  return { status: res.statusCode, body: res.json() };
}

/** A successful read's data. */
async function read(name: string, query = 'machineID=A'): Promise<Data> {
  const res = await get(`/api/cnc/${name}?${query}`);
  expect(res.body.errorMsg).toBe('OK');
  expect(res.status).toBe(200);
  return res.body.data as Data;
}

function simulator(machineID: string): SimulatorClient {
  const client = gateway.fleet.client(machineID);
  if (!(client instanceof SimulatorClient)) throw new Error(`${machineID} is not a simulated machine`);
  return client;
}

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'gw-live-reads-'));
  const config = parseConfig({
    logLevel: 'silent',
    gateway: { dataDir, timeZone: 'UTC' },
    // Access control has its own tests; these are about the reads.
    security: { securityControl: false },
    machines: [
      simMachine('A'),
      simMachine('OFF', { isActive: false }),
      simMachine('NARROW', { driverOptions: { families: ['status'] } }),
      simMachine('SLOW', { tasks: NO_TASKS, driverOptions: { requestLatencyMs: 2000 }, connection: { requestTimeoutMs: 100 } }),
      simMachine('LOST', { connection: { backoffBaseMs: 60_000, backoffMaxMs: 60_000 } }),
    ],
  });
  gateway = await Gateway.create({ config, drivers: DRIVERS, plugins: [...TEST_PLUGINS, liveReadsUnderTest], logger: pino({ level: 'silent' }), env: {} });
  await vi.waitFor(
    () => {
      for (const id of ['A', 'NARROW', 'SLOW', 'LOST']) expect(gateway.fleet.connectionState(id)).toBe('online');
    },
    { timeout: 5000, interval: 20 },
  );
});

afterAll(async () => {
  await gateway?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

const NAMES = LIVE_READS.map((r) => r.name);

describe('live reads: success', () => {
  it('defines the twelve live reads under /api/cnc, each reading one item family', () => {
    expect(NAMES).toEqual([
      'readCNCStatusDetails', 'readAlarm', 'readPosition', 'readLoad', 'readFeedAndSpindle', 'readCurrentToolNumber',
      'readTimeData', 'readCount', 'readToolLife', 'readToolLifeDetails', 'readProgramList', 'readCurrentProgram',
    ]);
    for (const name of NAMES) expect(gateway.context.interfaces.get(`/api/cnc/${name}`)?.method).toBe('GET');
  });

  it('every live read answers the machineID and when it was read', async () => {
    for (const name of NAMES) {
      const before = Date.now();
      const data = await read(name);
      expect(data.machineID).toBe('A');
      expect(data.readAt).toBeGreaterThanOrEqual(before);
    }
  });

  it('readCNCStatusDetails gives the full status plus the derived state, reason and statusStale', async () => {
    const data = await read('readCNCStatusDetails');
    expect(['RUNNING', 'HOLD', 'STOPPED', 'RESET', 'EMERGENCY']).toContain(data.adjustedStatus);
    expect(data).toMatchObject({ cncStatus: expect.any(String), mode: expect.any(String), alarmLevel: expect.any(String), time: expect.any(Number) });
    expect(DERIVED_STATES).toContain(data.state);
    expect(data.reason).toMatch(new RegExp(`^${String(data.state)}: `));
    expect(data.statusStale).toBe(false);
  });

  it('readAlarm, readPosition and readLoad give lists shaped like the driver’s', async () => {
    const alarms = (await read('readAlarm')).alarms as Data[];
    expect(Array.isArray(alarms)).toBe(true);
    for (const alarm of alarms) expect(alarm).toMatchObject({ code: expect.any(String), level: expect.stringMatching(/warning|alarm|emergency/), since: expect.any(Number) });
    const axes = (await read('readPosition')).axes as Data[];
    expect(axes.map((a) => a.axis)).toEqual(simulator('A').machine.axes.map((a) => a.name));
    for (const axis of axes) expect(axis).toMatchObject({ absolute: expect.any(Number), machine: expect.any(Number), relative: expect.any(Number), distanceToGo: expect.any(Number) });
    const loads = (await read('readLoad')).loads as Data[];
    expect(loads.map((l) => l.name)).toContain('S1');
    for (const load of loads) expect(load.loadPercent).toEqual(expect.any(Number));
  });

  it('readFeedAndSpindle, readCurrentToolNumber, readTimeData and readCount give the driver’s figures', async () => {
    expect(await read('readFeedAndSpindle')).toMatchObject({ feedRate: expect.any(Number), feedOverride: expect.any(Number), spindleSpeed: expect.any(Number), spindleOverride: expect.any(Number), rapidOverride: expect.any(Number) });
    const tool = await read('readCurrentToolNumber');
    expect(simulator('A').machine.tools.map((t) => t.toolNum)).toContain(tool.toolNumber);
    const time = await read('readTimeData');
    expect(time).toMatchObject({ powerOnTime: expect.any(Number), operatingTime: expect.any(Number), cuttingTime: expect.any(Number), cycleTime: expect.any(Number) });
    expect(time.powerOnTime as number).toBeGreaterThanOrEqual(time.operatingTime as number);
    const count = await read('readCount');
    expect(count).toMatchObject({ partCount: expect.any(Number), partsTotal: expect.any(Number) });
  });

  it('readToolLife gives a compact record per tool and filters by toolNum; readToolLifeDetails adds every field and the remaining life', async () => {
    const all = (await read('readToolLife')).tools as Data[];
    expect(all.length).toBe(simulator('A').machine.tools.length);
    for (const t of all) expect(Object.keys(t).sort()).toEqual(['groupNum', 'remainingPercent', 'toolNum']);
    const first = all[0] as { toolNum: number };
    const one = (await read('readToolLife', `machineID=A&toolNum=${first.toolNum}`)).tools as Data[];
    expect(one.map((t) => t.toolNum)).toEqual([first.toolNum]);
    const details = (await read('readToolLifeDetails', 'machineID=A&channel=1')).tools as Data[];
    expect(details.length).toBe(all.length);
    for (const t of details) {
      expect(t).toMatchObject({ toolNum: expect.any(Number), groupNum: expect.any(Number), offsetNum: expect.any(Number), used: expect.any(Number), limit: expect.any(Number), unit: 'count', remainingPercent: expect.any(Number) });
      expect(t.remaining).toBe(Math.max(0, (t.limit as number) - (t.used as number)));
    }
  });

  it('readProgramList lists the program directory and honours startPrgNo; readCurrentProgram gives the whole selected program', async () => {
    const programs = (await read('readProgramList')).programs as Data[];
    expect(programs.length).toBeGreaterThan(0);
    const dir = simulator('A').machine.vendor.programDir;
    for (const p of programs) expect(p).toMatchObject({ dir, name: expect.any(String), size: expect.any(Number) });
    expect((await read('readProgramList', 'machineID=A&startPrgNo=99999999')).programs).toEqual([]);
    expect((await read('readProgramList', `machineID=A&dirAtCNC=${encodeURIComponent('//NOWHERE/')}`)).programs).toEqual([]);
    const current = await read('readCurrentProgram');
    expect(current).toMatchObject({ dir, name: expect.any(String) });
    expect(programs.map((p) => p.name)).toContain(current.name);
    const bytes = simulator('A').machine.download(dir, current.name as string) ?? Buffer.alloc(0);
    expect(current).toMatchObject({ content: bytes.toString('utf8'), encoding: 'utf-8', contentBase64: bytes.toString('base64'), size: bytes.length, sha256: createHash('sha256').update(bytes).digest('hex') });
  });
});

describe('live reads: failures', () => {
  it('GW-94 an unknown machineID answers 10003 with the hint to list the machines, on every live read', async () => {
    for (const name of NAMES) {
      const res = await get(`/api/cnc/${name}?machineID=ZZ`);
      expect([res.status, res.body.errorCode]).toEqual([404, 10003]);
      expect(res.body.errorMsg).toContain("'ZZ' does not exist");
      expect(res.body.hint).toMatch(/list_machines/);
    }
  });

  it('GW-94 an inactive machineID answers 10003 too, on every live read', async () => {
    for (const name of NAMES) {
      const res = await get(`/api/cnc/${name}?machineID=OFF`);
      expect([res.status, res.body.errorCode]).toEqual([404, 10003]);
      expect(res.body.errorMsg).toContain("'OFF' is inactive");
    }
  });

  it('a family the driver does not declare answers 2001 naming driver and family, never a made-up value', async () => {
    expect((await read('readCNCStatusDetails', 'machineID=NARROW')).adjustedStatus).toEqual(expect.any(String));
    for (const spec of LIVE_READS.filter((r) => r.family !== 'status')) {
      const res = await get(`/api/cnc/${spec.name}?machineID=NARROW`);
      expect([res.status, res.body.errorCode]).toEqual([200, 2001]);
      expect(res.body.errorMsg).toContain(`driver 'simulator' does not support item family '${spec.family}'`);
      expect(res.body.data).toBeUndefined();
    }
  });

  it('a controller that does not answer within connection.requestTimeoutMs answers 2004 DRIVER_TIMEOUT', async () => {
    const res = await get('/api/cnc/readCount?machineID=SLOW');
    expect([res.status, res.body.errorCode]).toEqual([200, 2004]);
    expect(res.body.errorMsg).toMatch(/machine 'SLOW' readCount got no answer within 100 ms/);
  });

  it('a machine that is not online answers 2002 at once with the connection error, without contacting it', async () => {
    const client = simulator('LOST');
    client.loseConnection();
    await vi.waitFor(() => expect(gateway.fleet.connectionState('LOST')).not.toBe('online'), { timeout: 5000, interval: 20 });
    const reads = vi.spyOn(client, 'read');
    for (const name of NAMES) {
      const res = await get(`/api/cnc/${name}?machineID=LOST`);
      expect([res.status, res.body.errorCode]).toEqual([200, 2002]);
      expect(res.body.errorMsg).toMatch(/machine 'LOST' connection is (backoff|offline|connecting).*(connection lost|link down) \(simulated\)/);
    }
    expect(reads).not.toHaveBeenCalled();
  });
});

describe('live reads: input', () => {
  it('GW-95 a missing machineID answers 400 naming the field, on every live read', async () => {
    for (const name of NAMES) {
      const res = await get(`/api/cnc/${name}`);
      expect([res.status, res.body.errorCode]).toEqual([400, 2]);
      expect(res.body.errorMsg).toMatch(/machineID: found nothing/);
    }
  });

  it('GW-95 a wrong type answers 400 naming the field: channel not a whole number ≥ 1, machineID given twice', async () => {
    for (const name of NAMES) {
      for (const [query, field] of [['machineID=A&channel=abc', 'channel'], ['machineID=A&channel=0', 'channel'], ['machineID=A&machineID=B', 'machineID']] as const) {
        const res = await get(`/api/cnc/${name}?${query}`);
        expect(res.status, `${name}?${query}`).toBe(400);
        expect(res.body.errorMsg).toMatch(new RegExp(`${field}: found`));
      }
    }
  });

  it('GW-95 the optional inputs are checked, and an input an interface does not take is named', async () => {
    for (const [url, pattern] of [
      ['/api/cnc/readToolLife?machineID=A&toolNum=x', /toolNum: found/],
      ['/api/cnc/readToolLifeDetails?machineID=A&groupNum=-1', /groupNum: found -1/],
      ['/api/cnc/readProgramList?machineID=A&startPrgNo=1.5', /startPrgNo: found 1.5/],
      ['/api/cnc/readAlarm?machineID=A&toolNum=1', /unknown field\(s\) 'toolNum'/],
      ['/api/cnc/readCurrentProgram?machineID=A&startPrgNo=1', /unknown field\(s\) 'startPrgNo'/],
    ] as const) {
      const res = await get(url);
      expect(res.status, url).toBe(400);
      expect(res.body.errorMsg).toMatch(pattern);
    }
  });
});

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { parseConfig } from '../../core/roles/index.js';
import type { GatewayContext } from '../../core/roles/gateway/context.js';
import { Gateway } from '../../core/roles/gateway/gateway.js';
import { definePlugin } from '../../core/runtime/plugin-host.js';
import { DRIVERS } from '../../drivers/registry.js';
import { TEST_PLUGINS } from '../fixtures/gateway.js';
import { defineTaskDataInterfaces } from '../../plugins/gateway-api/task-data.js';
import { groupTasksPlugin } from '../../plugins/group-tasks/index.js';
import { simMachine } from '../fixtures/gateway.js';

type Body = { errorCode: number; errorMsg: string; data?: unknown; hint?: string };
type Data = Record<string, unknown>;

const taskDataUnderTest = definePlugin<GatewayContext>({
  name: 'task-data-under-test',
  dependsOn: ['gateway-api'],
  register(ctx) {
    // Once gateway-api defines these itself, the test runs against its definitions.
    if (!ctx.interfaces.get('/api/task/readTaskData')) defineTaskDataInterfaces(ctx);
  },
});

const FAST = { enabled: true, intervalMs: 200 };
const OFF = { enabled: false };
/** Samples status, counts, timers and OEE quickly. */
const busy = (id: string, extra: Record<string, unknown> = {}) =>
  simMachine(id, { tasks: { CNCStatus: FAST, Count: FAST, TimeData: FAST, OEE: FAST }, idealCycleTimeSec: 60, ...extra });

let gateway: Gateway | undefined;
let dataDir: string | undefined;
afterEach(async () => {
  await gateway?.stop();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  gateway = undefined;
  dataDir = undefined;
});

async function start(raw: Record<string, unknown>): Promise<Gateway> {
  dataDir = mkdtempSync(join(tmpdir(), 'gw-task-data-'));
  // Access control has its own tests; these are about the task data.
  const config = parseConfig({ logLevel: 'silent', ...raw, security: { securityControl: false }, gateway: { dataDir, timeZone: 'UTC' } });
  // Group task data is served from the cache the group-tasks plugin refreshes.
  const plugins = [...TEST_PLUGINS.filter((p) => p.name !== groupTasksPlugin.name), groupTasksPlugin, taskDataUnderTest];
  gateway = await Gateway.create({ config, drivers: DRIVERS, plugins, logger: pino({ level: 'silent' }), env: {} });
  return gateway;
}

async function call(method: 'GET' | 'POST', url: string, body?: unknown): Promise<{ status: number; body: Body }> {
  if (!gateway) throw new Error('no gateway');
  const res = await gateway.http.inject({ method, url, ...(body === undefined ? {} : { payload: body as object }) });
  return { status: res.statusCode, body: res.json() };
}

/** Waits until every listed machine has a cached sample of every listed class. */
async function sampled(g: Gateway, ids: string[], classes: ('CNCStatus' | 'Count' | 'TimeData' | 'OEE')[]): Promise<void> {
  await vi.waitFor(
    () => {
      for (const id of ids) for (const cls of classes) expect(g.fleet.snapshot(id).cache[cls]?.sampledAt, `${id} ${cls}`).toBeDefined();
    },
    { timeout: 5000, interval: 20 },
  );
}

describe('readTaskData', () => {
  it('GW-91 answers the cached entry of one machine, shaped like a batchReadTaskData element, with the tag echoed', async () => {
    const g = await start({ machines: [busy('A')] });
    await sampled(g, ['A'], ['CNCStatus', 'Count']);
    const res = await call('GET', '/api/task/readTaskData?type=CNCStatus&machineID=A&tag=req-7');
    expect([res.status, res.body.errorCode]).toEqual([200, 0]);
    const entry = res.body.data as Data;
    expect(entry).toMatchObject({ machineID: 'A', type: 'CNCStatus', time: expect.any(Number), error: null, tag: 'req-7', statusStale: false });
    expect((entry.data as { status: { adjustedStatus: string } }).status.adjustedStatus).toMatch(/RUNNING|HOLD|STOPPED|RESET|EMERGENCY/);
    expect(entry.reason).toMatch(new RegExp(`^${String(entry.state)}: `));
    const [batch] = (await call('GET', '/api/task/batchReadTaskData?type=CNCStatus&machineIDs=A')).body.data as Data[];
    expect(Object.keys(entry).filter((k) => k !== 'tag').sort()).toEqual(Object.keys(batch ?? {}).sort());
    const count = (await call('GET', '/api/task/readTaskData?type=Count&machineID=A')).body.data as Data;
    expect(count).not.toHaveProperty('tag');
    expect(count.data).toMatchObject({ partCount: expect.any(Number), partsTotal: expect.any(Number) });
  });

  it('GW-91 a task that is not enabled fails the call with HTTP 200 and errorCode 1301', async () => {
    const g = await start({ machines: [busy('A', { tasks: { CNCStatus: FAST, Count: OFF } })] });
    await sampled(g, ['A'], ['CNCStatus']);
    const res = await call('GET', '/api/task/readTaskData?type=Count&machineID=A');
    expect([res.status, res.body.errorCode]).toEqual([200, 1301]);
    expect(res.body.errorMsg).toMatch(/machine 'A': task Count is disabled/);
    expect(res.body.hint).toMatch(/Enable the task/);
    expect(res.body.data).toBeUndefined();
  });

  it('GW-91 a task without a first sample fails the call with HTTP 200 and errorCode 1303', async () => {
    // The connection never completes during the test, so no task ever samples.
    await start({ machines: [busy('NR', { driverOptions: { connectLatencyMs: 60_000 } })] });
    const res = await call('GET', '/api/task/readTaskData?type=CNCStatus&machineID=NR');
    expect([res.status, res.body.errorCode]).toEqual([200, 1303]);
    expect(res.body.errorMsg).toMatch(/machine 'NR': no CNCStatus sample yet \(connection connecting/);
  });

  it('a class the driver cannot read fails with its cached 2001, naming driver and family', async () => {
    const g = await start({ machines: [busy('NT', { driverOptions: { families: ['status'] }, tasks: { CNCStatus: FAST, ToolLife: FAST } })] });
    await vi.waitFor(() => expect(g.fleet.snapshot('NT').cache.ToolLife?.error).toBeDefined(), { timeout: 5000, interval: 20 });
    const res = await call('GET', '/api/task/readTaskData?type=ToolLife&machineID=NT');
    expect([res.status, res.body.errorCode]).toEqual([200, 2001]);
    expect(res.body.errorMsg).toBe("The machine driver does not support this item. machine 'NT' ToolLife: driver 'simulator' does not support item family 'toolLife'");
  });

  it('GW-94 an unknown or inactive machineID answers 10003 with the hint to list the machines', async () => {
    await start({ machines: [busy('A'), busy('OFF', { isActive: false })] });
    for (const [id, text] of [['ZZ', "'ZZ' does not exist"], ['OFF', "'OFF' is inactive"]] as const) {
      const res = await call('GET', `/api/task/readTaskData?type=Count&machineID=${id}`);
      expect([res.status, res.body.errorCode]).toEqual([404, 10003]);
      expect(res.body.errorMsg).toContain(text);
      expect(res.body.hint).toMatch(/list_machines/);
    }
  });

  it('GW-54 GW-95 an invalid type, a wrong type or a missing field answers 400 naming the field and the valid values', async () => {
    await start({ machines: [busy('A')] });
    const cases: [string, RegExp][] = [
      ['/api/task/readTaskData?type=Banana&machineID=A', /type: found "Banana"; expected one of "CNCStatus"\|"Count"\|"Cycle"\|"TimeData"\|"ToolLife"\|"OEE"/],
      ['/api/task/readTaskData?type=Count', /machineID: found nothing/],
      ['/api/task/readTaskData?machineID=A', /type: found nothing/],
      ['/api/task/readTaskData?type=Count&machineID=A&machineID=B', /machineID: found \["A","B"\]; expected string/],
      ['/api/task/readTaskData?type=Count&machineID=A&tag=a&tag=b', /tag: found \["a","b"\]; expected string/],
      ['/api/task/readGroupTaskData?type=Count&groupID=g', /type: found "Count"; expected one of "GroupCount"\|"GroupCumulativeTime"\|"GroupOEE"/],
      ['/api/task/readGroupTaskData?type=GroupCount', /groupID: found nothing/],
      ['/api/task/readGroupTaskData?type=GroupCount&groupID=a&groupID=b', /groupID: found \["a","b"\]; expected string/],
    ];
    for (const [url, pattern] of cases) {
      const res = await call('GET', url);
      expect([res.status, res.body.errorCode], url).toEqual([400, 2]);
      expect(res.body.errorMsg).toMatch(pattern);
    }
  });
});

describe('readGroupTaskData', () => {
  const EVERY_SECOND = { enabled: true, intervalMs: 1000 };
  const groupFleet = {
    machines: [busy('A'), busy('B'), busy('C', { tasks: { CNCStatus: FAST, Count: OFF, TimeData: OFF, OEE: OFF } })],
    groups: [{ groupID: 'cell', name: 'Cell', machineIDs: ['A', 'B', 'C'], tasks: { GroupCount: EVERY_SECOND, GroupCumulativeTime: EVERY_SECOND, GroupOEE: EVERY_SECOND } }],
  };

  /** The group's cached figures of `type`, once a refresh has found a sample of every listed member. */
  async function refreshed(type: string, ids: string[], tag = ''): Promise<Data> {
    let data: Data = {};
    await vi.waitFor(
      async () => {
        data = (await call('GET', `/api/task/readGroupTaskData?type=${type}&groupID=cell${tag}`)).body.data as Data;
        expect((data?.members as { machineID: string }[] | undefined)?.map((m) => m.machineID)).toEqual(ids);
      },
      { timeout: 8000, interval: 50 },
    );
    return data;
  }

  it('GroupCount and GroupCumulativeTime add up the members’ caches; a member without data is listed with the reason', async () => {
    const g = await start(groupFleet);
    await sampled(g, ['A', 'B'], ['Count', 'TimeData']);
    const count = await refreshed('GroupCount', ['A', 'B'], '&tag=t1');
    expect(count).toMatchObject({ groupID: 'cell', type: 'GroupCount', tag: 't1', memberCount: 3 });
    const members = count.members as { machineID: string; partsTotal: number; partCount: number }[];
    expect(members.map((m) => m.machineID)).toEqual(['A', 'B']);
    expect(count.partsTotal).toBe(members.reduce((t, m) => t + m.partsTotal, 0));
    expect(count.partCount).toBe(members.reduce((t, m) => t + m.partCount, 0));
    expect(count.membersWithoutData).toEqual([{ machineID: 'C', errorCode: 1301, errorMsg: expect.stringContaining('Count') }]);

    const time = await refreshed('GroupCumulativeTime', ['A', 'B']);
    const rows = time.members as { machineID: string; powerOnTime: number; operatingTime: number; cuttingTime: number }[];
    expect(rows.map((m) => m.machineID)).toEqual(['A', 'B']);
    for (const field of ['powerOnTime', 'operatingTime', 'cuttingTime'] as const) {
      expect(time[field]).toBe(rows.reduce((t, m) => t + m[field], 0));
    }
    expect(time.powerOnTime as number).toBeGreaterThan(0);
    expect((time.membersWithoutData as { machineID: string }[]).map((m) => m.machineID)).toEqual(['C']);
  });

  it('GroupOEE adds times and counts and recomputes the factors from the sums', async () => {
    const g = await start(groupFleet);
    await sampled(g, ['A', 'B'], ['OEE']);
    const oee = await refreshed('GroupOEE', ['A', 'B']);
    const rows = oee.members as { machineID: string; plannedTimeSec: number; runningTimeSec: number; totalCount: number; goodCount: number }[];
    expect(rows.map((m) => m.machineID)).toEqual(['A', 'B']);
    const planned = rows.reduce((t, m) => t + m.plannedTimeSec, 0);
    const running = rows.reduce((t, m) => t + m.runningTimeSec, 0);
    const total = rows.reduce((t, m) => t + m.totalCount, 0);
    expect(oee).toMatchObject({ plannedTimeSec: planned, runningTimeSec: running, totalCount: total, goodCount: rows.reduce((t, m) => t + m.goodCount, 0) });
    expect(oee.availability).toBe(planned > 0 ? running / planned : null);
    expect(oee.quality).toBe(total > 0 ? 1 : null);
    expect(oee.performance).toBe(running > 0 ? Math.min(1, (60 * total) / running) : null);
    expect((oee.membersWithoutData as { machineID: string; errorCode: number }[])).toEqual([{ machineID: 'C', errorCode: 1301, errorMsg: expect.any(String) }]);
  });

  it('an unknown groupID answers 10005', async () => {
    await start(groupFleet);
    const res = await call('GET', '/api/task/readGroupTaskData?type=GroupCount&groupID=nope');
    expect([res.status, res.body.errorCode]).toEqual([404, 10005]);
    expect(res.body.errorMsg).toContain("'nope'");
  });
});

describe('task switch', () => {
  it('disabling a task restarts the actor: the setting is stored and the cache stops updating; enabling brings it back', async () => {
    const g = await start({ machines: [busy('A')] });
    await sampled(g, ['A'], ['CNCStatus', 'Count']);
    const off = await call('POST', '/api/config/task/update', { type: 'Count', enabled: false, machineID: 'A' });
    expect([off.status, off.body.errorCode]).toEqual([200, 0]);
    expect(off.body.data).toEqual([{ machineID: 'A', type: 'Count', enabled: false, intervalMs: 200, changed: true }]);
    const stored = (await call('GET', '/api/config/machine?machineID=A')).body.data as { tasks: Record<string, unknown> };
    expect(stored.tasks.Count).toEqual({ enabled: false, intervalMs: 200 });
    await vi.waitFor(async () => expect((await call('GET', '/api/task/readTaskData?type=Count&machineID=A')).body.errorCode).toBe(1301), { timeout: 5000, interval: 20 });

    // Five Count intervals pass on the restarted actor (its status keeps sampling) without a Count sample.
    const disabledAt = Date.now();
    await vi.waitFor(() => expect(g.fleet.snapshot('A').cache.CNCStatus?.sampledAt ?? 0).toBeGreaterThan(disabledAt + 1000), { timeout: 5000, interval: 50 });
    expect(g.fleet.snapshot('A').cache.Count?.sampledAt).toBeUndefined();

    const on = await call('POST', '/api/config/task/update', { type: 'Count', enabled: true, intervalMs: 300, machineID: 'A' });
    expect(on.body.data).toEqual([{ machineID: 'A', type: 'Count', enabled: true, intervalMs: 300, changed: true }]);
    expect(((await call('GET', '/api/config/machine?machineID=A')).body.data as { tasks: Record<string, unknown> }).tasks.Count).toEqual({ enabled: true, intervalMs: 300 });
    await vi.waitFor(async () => expect((await call('GET', '/api/task/readTaskData?type=Count&machineID=A')).body.errorCode).toBe(0), { timeout: 5000, interval: 20 });
  });

  it('a switch that changes nothing keeps the actor running', async () => {
    const g = await start({ machines: [busy('A')] });
    await sampled(g, ['A'], ['CNCStatus']);
    const since = g.fleet.snapshot('A').connection.since;
    const res = await call('POST', '/api/config/task/update', { type: 'CNCStatus', enabled: true, machineID: 'A' });
    expect(res.body.data).toEqual([{ machineID: 'A', type: 'CNCStatus', enabled: true, intervalMs: 200, changed: false }]);
    expect(g.fleet.snapshot('A').connection).toMatchObject({ state: 'online', since });
  });

  it('a groupID applies the switch to every member', async () => {
    await start({ machines: [busy('A'), busy('B'), busy('X')], groups: [{ groupID: 'cell', name: 'Cell', machineIDs: ['A', 'B'] }] });
    const res = await call('POST', '/api/config/task/update', { type: 'TimeData', enabled: false, groupID: 'cell' });
    expect((res.body.data as { machineID: string; enabled: boolean }[]).map((r) => [r.machineID, r.enabled])).toEqual([['A', false], ['B', false]]);
    const tasks = async (id: string) => ((await call('GET', `/api/config/machine?machineID=${id}`)).body.data as { tasks: { TimeData: { enabled: boolean } } }).tasks.TimeData.enabled;
    expect([await tasks('A'), await tasks('B'), await tasks('X')]).toEqual([false, false, true]);
    expect((await call('POST', '/api/config/task/update', { type: 'TimeData', enabled: false, groupID: 'nope' })).body.errorCode).toBe(10005);
    expect((await call('POST', '/api/config/task/update', { type: 'TimeData', enabled: false, machineID: 'nope' })).body.errorCode).toBe(10003);
  });

  it('GW-38 machineID and groupID together, or neither, are rejected listing the accepted forms', async () => {
    await start({ machines: [busy('A')], groups: [{ groupID: 'cell', name: 'Cell', machineIDs: ['A'] }] });
    const both = await call('POST', '/api/config/task/update', { type: 'Count', enabled: false, machineID: 'A', groupID: 'cell' });
    expect([both.status, both.body.errorCode]).toEqual([400, 2]);
    expect(both.body.errorMsg).toMatch(/groupID: found "cell"; give machineID or groupID, not both; accepted forms: \{type, enabled, intervalMs\?, machineID\} or \{type, enabled, intervalMs\?, groupID\}/);
    const neither = await call('POST', '/api/config/task/update', { type: 'Count', enabled: false });
    expect([neither.status, neither.body.errorCode]).toEqual([400, 2]);
    expect(neither.body.errorMsg).toMatch(/machineID: found nothing; give machineID or groupID; accepted forms/);
    expect(((await call('GET', '/api/config/machine?machineID=A')).body.data as { tasks: { Count: { enabled: boolean } } }).tasks.Count.enabled).toBe(true);
  });

  it('GW-95 a wrong type or a missing field answers 400 naming the field', async () => {
    await start({ machines: [busy('A')] });
    const cases: [unknown, RegExp][] = [
      [{ type: 'Count', enabled: 'yes', machineID: 'A' }, /enabled: found "yes"; expected boolean/],
      [{ type: 'Count', machineID: 'A' }, /enabled: found nothing/],
      [{ enabled: true, machineID: 'A' }, /type: found nothing/],
      [{ type: 'Banana', enabled: true, machineID: 'A' }, /type: found "Banana".*"CNCStatus".*"OEE"/],
      [{ type: 'Count', enabled: true, intervalMs: 50, machineID: 'A' }, /intervalMs: found 50; .*100/],
      [{ type: 'Count', enabled: true, machineID: 7 }, /machineID: found 7; expected string/],
    ];
    for (const [body, pattern] of cases) {
      const res = await call('POST', '/api/config/task/update', body);
      expect([res.status, res.body.errorCode], JSON.stringify(body)).toEqual([400, 2]);
      expect(res.body.errorMsg).toMatch(pattern);
    }
  });
});

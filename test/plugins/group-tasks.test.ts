import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { GROUP_TASK_CLASSES } from '../../core/roles/gateway/machine-config.js';
import { parseConfig } from '../../core/roles/index.js';
import { schedulePhase } from '../../core/roles/gateway/fleet/schedule-phase.js';
import { Gateway } from '../../core/roles/gateway/gateway.js';
import { DRIVERS } from '../../drivers/registry.js';
import { TEST_PLUGINS } from '../fixtures/gateway.js';
import { simMachine, TEST_ADMIN_PASSWORD } from '../fixtures/gateway.js';

type Body = { errorCode: number; errorMsg: string; data?: unknown; hint?: string };
type Data = Record<string, unknown>;
type Member = { machineID: string; time: number; partsTotal: number };

const FAST = { enabled: true, intervalMs: 200 };
/** Samples status and counts quickly. */
const counting = (id: string) => simMachine(id, { tasks: { CNCStatus: FAST, Count: FAST } });
/** A refresh interval so long that no refresh falls inside a test (given a phase of more than a minute). */
const DAY_MS = 86_400_000;
const everySecond = (cls: string) => ({ [cls]: { enabled: true, intervalMs: 1000 } });

interface GroupTaskGateway {
  gateway: Gateway;
  request(method: 'GET' | 'POST', url: string, body?: unknown): Promise<{ status: number; body: Body }>;
  /** `data` of a read that must succeed. */
  figures(type: string, groupID: string): Promise<Data>;
}

let running: { gateway: Gateway; dataDir: string } | undefined;
afterEach(async () => {
  await running?.gateway.stop();
  if (running) rmSync(running.dataDir, { recursive: true, force: true });
  running = undefined;
});

/** A real gateway with the group-tasks plugin (once, whether or not the gateway's plugin list registers it yet), called as the administrator. */
async function start(raw: Record<string, unknown>): Promise<GroupTaskGateway> {
  const dataDir = mkdtempSync(join(tmpdir(), 'gw-group-tasks-'));
  const config = parseConfig({ logLevel: 'silent', ...raw, gateway: { dataDir, timeZone: 'UTC' } });
  const plugins = TEST_PLUGINS;
  const gateway = await Gateway.create({ config, drivers: DRIVERS, plugins, logger: pino({ level: 'silent' }), env: { GATEWAY_ADMIN_PASSWORD: TEST_ADMIN_PASSWORD } });
  running = { gateway, dataDir };
  const login = await gateway.http.inject({ method: 'POST', url: '/api/auth/login', payload: { username: 'admin', password: TEST_ADMIN_PASSWORD } });
  const token = (login.json() as { data: { token: string } }).data.token;
  const request = async (method: 'GET' | 'POST', url: string, body?: unknown) => {
    const res = await gateway.http.inject({ method, url, headers: { authorization: `Bearer ${token}` }, ...(body === undefined ? {} : { payload: body as object }) });
    return { status: res.statusCode, body: res.json() as Body };
  };
  return {
    gateway,
    request,
    async figures(type, groupID) {
      const res = await request('GET', `/api/task/readGroupTaskData?type=${type}&groupID=${groupID}`);
      expect([res.status, res.body.errorCode], res.body.errorMsg).toEqual([200, 0]);
      return res.body.data as Data;
    },
  };
}

/** Waits until the group's cached GroupCount lists exactly `ids` as members with data. */
async function countedMembers(gw: GroupTaskGateway, groupID: string, ids: string[]): Promise<Data> {
  let figures: Data = {};
  await vi.waitFor(
    async () => {
      figures = await gw.figures('GroupCount', groupID);
      expect((figures.members as Member[]).map((m) => m.machineID)).toEqual(ids);
    },
    { timeout: 8000, interval: 50 },
  );
  return figures;
}

describe('group task data from the cache', () => {
  it('GW-54 GW-91 a group class answers 1303 before its first refresh, then the cached figures with the time they were computed', async () => {
    expect(schedulePhase('cell', DAY_MS)).toBeGreaterThan(60_000);
    const gw = await start({ machines: [counting('A')], groups: [{ groupID: 'cell', name: 'Cell', machineIDs: ['A'], tasks: { GroupCount: { intervalMs: DAY_MS } } }] });
    const before = await gw.request('GET', '/api/task/readGroupTaskData?type=GroupCount&groupID=cell');
    expect([before.status, before.body.errorCode]).toEqual([200, 1303]);
    expect(before.body.errorMsg).toBe(`Task data not ready. group 'cell': no GroupCount refresh yet (the task refreshes every ${DAY_MS} ms)`);
    expect(before.body.data).toBeUndefined();

    const switched = await gw.request('POST', '/api/config/task/update', { type: 'GroupCount', enabled: true, intervalMs: 1000, groupID: 'cell' });
    expect(switched.body.data).toEqual([{ groupID: 'cell', type: 'GroupCount', enabled: true, intervalMs: 1000, changed: true }]);
    expect(((await gw.request('GET', '/api/config/group?groupID=cell')).body.data as { tasks: Data }).tasks.GroupCount).toEqual({ enabled: true, intervalMs: 1000 });

    const figures = await countedMembers(gw, 'cell', ['A']);
    const cached = gw.gateway.context.groupTasks.entry('cell', 'GroupCount');
    expect(figures).toMatchObject({ groupID: 'cell', type: 'GroupCount', time: cached.sampledAt, memberCount: 1, error: null, membersWithoutData: [] });
    expect(figures.partsTotal).toBe((figures.members as Member[])[0]?.partsTotal);
    expect(figures.time as number).toBeGreaterThanOrEqual((figures.members as Member[])[0]?.time ?? Infinity);
  });

  it('GW-91 a disabled group task answers 1301 naming the setting; so does every class of an inactive group; an unknown group 10005', async () => {
    const gw = await start({
      machines: [counting('A')],
      groups: [
        { groupID: 'cell', name: 'Cell', machineIDs: ['A'], tasks: { GroupOEE: { enabled: false } } },
        { groupID: 'idle', name: 'Idle', isActive: false, machineIDs: ['A'] },
      ],
    });
    const disabled = await gw.request('GET', '/api/task/readGroupTaskData?type=GroupOEE&groupID=cell');
    expect([disabled.status, disabled.body.errorCode]).toEqual([200, 1301]);
    expect(disabled.body.errorMsg).toMatch(/group 'cell': task GroupOEE is disabled \(tasks\.GroupOEE\.enabled=false\); enable it with POST \/api\/config\/task\/update/);
    for (const cls of GROUP_TASK_CLASSES) {
      const inactive = await gw.request('GET', `/api/task/readGroupTaskData?type=${cls}&groupID=idle`);
      expect([inactive.status, inactive.body.errorCode], cls).toEqual([200, 1301]);
      expect(inactive.body.errorMsg).toMatch(/group 'idle' is inactive \(isActive=false\)/);
    }
    const unknown = await gw.request('GET', '/api/task/readGroupTaskData?type=GroupCount&groupID=nope');
    expect([unknown.status, unknown.body.errorCode]).toEqual([404, 10005]);
    expect(unknown.body.hint).toMatch(/list_groups/);
  });

  it('the cached figures do not change between refreshes, even when the members’ caches do', async () => {
    expect(schedulePhase('cell', DAY_MS)).toBeGreaterThan(60_000);
    const gw = await start({ machines: [counting('A')], groups: [{ groupID: 'cell', name: 'Cell', machineIDs: ['A'], tasks: everySecond('GroupCount') }] });
    await countedMembers(gw, 'cell', ['A']);
    // A longer interval restarts the schedule far from now and keeps the cached value.
    await gw.request('POST', '/api/config/task/update', { type: 'GroupCount', enabled: true, intervalMs: DAY_MS, groupID: 'cell' });
    const first = await gw.figures('GroupCount', 'cell');
    const memberTime = (first.members as Member[])[0]?.time ?? 0;
    await vi.waitFor(() => expect(gw.gateway.fleet.snapshot('A').cache.Count?.sampledAt ?? 0).toBeGreaterThan(memberTime + 400), { timeout: 5000, interval: 20 });
    expect(await gw.figures('GroupCount', 'cell')).toEqual(first);
  });

  it('a failed refresh is answered beside the last value, and cleared by the next success', async () => {
    expect(schedulePhase('cell', DAY_MS)).toBeGreaterThan(60_000);
    const gw = await start({ machines: [counting('A')], groups: [{ groupID: 'cell', name: 'Cell', machineIDs: ['A'], tasks: everySecond('GroupCount') }] });
    await countedMembers(gw, 'cell', ['A']);
    // No scheduled refresh may land between the failure and the read.
    await gw.request('POST', '/api/config/task/update', { type: 'GroupCount', enabled: true, intervalMs: DAY_MS, groupID: 'cell' });
    const good = await gw.figures('GroupCount', 'cell');
    expect(good.error).toBeNull();
    const failedAt = Date.now();
    gw.gateway.context.groupTasks.fail('cell', 'GroupCount', new Error('refresh broke'), failedAt);
    expect(await gw.figures('GroupCount', 'cell')).toEqual({ ...good, error: { errorCode: 1, errorMsg: 'Internal error.', at: failedAt } });

    await gw.request('POST', '/api/config/task/update', { type: 'GroupCount', enabled: true, intervalMs: 1000, groupID: 'cell' });
    await vi.waitFor(async () => expect((await gw.figures('GroupCount', 'cell')).error).toBeNull(), { timeout: 3000, interval: 50 });
  });
});

describe('group tasks follow the configuration live', () => {
  it('adding a member shows in the next answer, without a restart', async () => {
    const gw = await start({ machines: [counting('A'), counting('B')], groups: [{ groupID: 'cell', name: 'Cell', machineIDs: ['A'], tasks: everySecond('GroupCount') }] });
    await countedMembers(gw, 'cell', ['A']);
    await vi.waitFor(() => expect(gw.gateway.fleet.snapshot('B').cache.Count?.sampledAt).toBeDefined(), { timeout: 5000, interval: 20 });
    const saved = await gw.request('POST', '/api/config/group/update', { groupID: 'cell', machineIDs: ['A', 'B'] });
    expect(saved.body.errorCode).toBe(0);
    // The membership change refreshes at once: no answer describes the old member list.
    const figures = await gw.figures('GroupCount', 'cell');
    expect(figures.memberCount).toBe(2);
    expect((figures.members as Member[]).map((m) => m.machineID)).toEqual(['A', 'B']);
  });

  it('a member switched off moves to membersWithoutData at once, as inactive', async () => {
    const gw = await start({ machines: [counting('A'), counting('B')], groups: [{ groupID: 'cell', name: 'Cell', machineIDs: ['A', 'B'], tasks: everySecond('GroupCount') }] });
    await countedMembers(gw, 'cell', ['A', 'B']);
    expect((await gw.request('POST', '/api/config/machine/update', { machineID: 'B', isActive: false })).body.errorCode).toBe(0);
    const figures = await gw.figures('GroupCount', 'cell');
    expect((figures.members as Member[]).map((m) => m.machineID)).toEqual(['A']);
    expect(figures.membersWithoutData).toEqual([{ machineID: 'B', errorCode: 10002, errorMsg: 'The machine is inactive.' }]);
  });

  it('disabling a group task through the task switch answers 1301 at once and drops the cached value; enabling brings it back', async () => {
    const gw = await start({ machines: [counting('A')], groups: [{ groupID: 'cell', name: 'Cell', machineIDs: ['A'], tasks: everySecond('GroupCount') }] });
    await countedMembers(gw, 'cell', ['A']);
    const off = await gw.request('POST', '/api/config/task/update', { type: 'GroupCount', enabled: false, groupID: 'cell' });
    expect(off.body.data).toEqual([{ groupID: 'cell', type: 'GroupCount', enabled: false, intervalMs: 1000, changed: true }]);
    expect((await gw.request('GET', '/api/task/readGroupTaskData?type=GroupCount&groupID=cell')).body.errorCode).toBe(1301);
    expect(gw.gateway.context.groupTasks.entry('cell', 'GroupCount')).toEqual({});
    // The machines keep their own task settings: a group class switches the group only.
    expect(((await gw.request('GET', '/api/config/machine?machineID=A')).body.data as { tasks: { Count: Data } }).tasks.Count).toEqual(FAST);

    const same = await gw.request('POST', '/api/config/task/update', { type: 'GroupCount', enabled: false, groupID: 'cell' });
    expect(same.body.data).toEqual([{ groupID: 'cell', type: 'GroupCount', enabled: false, intervalMs: 1000, changed: false }]);
    await gw.request('POST', '/api/config/task/update', { type: 'GroupCount', enabled: true, groupID: 'cell' });
    await countedMembers(gw, 'cell', ['A']);
  });

  it('deleting a group stops its tasks: its cache is emptied and reads answer 10005', async () => {
    const gw = await start({ machines: [counting('A')], groups: [{ groupID: 'cell', name: 'Cell', machineIDs: ['A'], tasks: everySecond('GroupCount') }] });
    await countedMembers(gw, 'cell', ['A']);
    expect((await gw.request('POST', '/api/config/group/delete', { groupID: 'cell' })).body.errorCode).toBe(0);
    expect((await gw.request('GET', '/api/task/readGroupTaskData?type=GroupCount&groupID=cell')).body.errorCode).toBe(10005);
    for (const cls of GROUP_TASK_CLASSES) expect(gw.gateway.context.groupTasks.entry('cell', cls)).toEqual({});
  });
});

describe('group task switches', () => {
  it('GW-38 GW-95 a group class with machineID is refused naming the accepted combinations; nothing changes', async () => {
    const gw = await start({ machines: [counting('A')], groups: [{ groupID: 'cell', name: 'Cell', machineIDs: ['A'] }] });
    const res = await gw.request('POST', '/api/config/task/update', { type: 'GroupOEE', enabled: false, machineID: 'A' });
    expect([res.status, res.body.errorCode]).toEqual([400, 2]);
    expect(res.body.errorMsg).toContain('machineID: found "A"; type GroupOEE is a group class: give groupID, not machineID; accepted forms:');
    expect(res.body.errorMsg).toContain('a group class (GroupCount, GroupCumulativeTime, GroupOEE) takes groupID only');
    expect(((await gw.request('GET', '/api/config/group?groupID=cell')).body.data as { tasks: { GroupOEE: Data } }).tasks.GroupOEE.enabled).toBe(true);
  });

  it('GW-95 the type lists machine and group classes; a group interval under 1000 ms is refused naming intervalMs', async () => {
    const gw = await start({ machines: [counting('A')], groups: [{ groupID: 'cell', name: 'Cell', machineIDs: ['A'] }] });
    const banana = await gw.request('POST', '/api/config/task/update', { type: 'Banana', enabled: true, groupID: 'cell' });
    expect([banana.status, banana.body.errorCode]).toEqual([400, 2]);
    expect(banana.body.errorMsg).toMatch(/type: found "Banana"; expected one of "CNCStatus"\|"Count"\|"Cycle"\|"TimeData"\|"ToolLife"\|"OEE"\|"GroupCount"\|"GroupCumulativeTime"\|"GroupOEE"/);
    const fast = await gw.request('POST', '/api/config/task/update', { type: 'GroupCount', enabled: true, intervalMs: 500, groupID: 'cell' });
    expect([fast.status, fast.body.errorCode]).toEqual([400, 2]);
    expect(fast.body.errorMsg).toMatch(/intervalMs: found 500; for group class GroupCount: .*1000/);
    // A machine class still takes 500 ms.
    const machine = await gw.request('POST', '/api/config/task/update', { type: 'Count', enabled: true, intervalMs: 500, groupID: 'cell' });
    expect(machine.body.data).toEqual([{ machineID: 'A', type: 'Count', enabled: true, intervalMs: 500, changed: true }]);
  });

  it('a group class for an unknown group answers 10005', async () => {
    const gw = await start({ machines: [counting('A')] });
    const res = await gw.request('POST', '/api/config/task/update', { type: 'GroupCount', enabled: false, groupID: 'nope' });
    expect([res.status, res.body.errorCode]).toEqual([404, 10005]);
  });
});

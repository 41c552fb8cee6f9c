import { afterEach, describe, expect, it, vi } from 'vitest';
import { simMachine, startTestGateway, type TestGateway } from '../fixtures/gateway.js';

let gw: TestGateway | undefined;
afterEach(async () => {
  await gw?.stop();
  gw = undefined;
});

type Entry = { machineID: string; state: string; reason: string; statusStale: boolean; data: unknown; error: { errorCode: number; errorMsg: string } | null };

async function fleetState(g: TestGateway): Promise<Record<string, Entry>> {
  const res = await g.request('GET', '/api/task/batchReadTaskData?type=CNCStatus');
  expect(res.status).toBe(200);
  return Object.fromEntries((res.body.data as Entry[]).map((e) => [e.machineID, e]));
}

describe('gateway HTTP API (minimal)', () => {
  it('GW-01 serves the API under /api, with a health endpoint', async () => {
    gw = await startTestGateway({ machines: [simMachine('A')] });
    const res = await gw.request('GET', '/api/health');
    expect(res.status).toBe(200);
    expect(res.body.errorCode).toBe(0);
    expect(res.body.data).toMatchObject({ status: 'ok', machines: 1 });
  });

  it('GW-90 an unknown path answers errorCode and errorMsg from the error table', async () => {
    gw = await startTestGateway();
    const res = await gw.request('GET', '/api/nope');
    expect(res.status).toBe(404);
    expect(res.body).toMatchObject({ errorCode: 6, errorMsg: expect.stringContaining('/api/nope') });
  });

  it('GW-12 lists machines with their identity fields', async () => {
    gw = await startTestGateway({ machines: [simMachine('A', { ip: '10.0.0.5', port: 8193 })] });
    const res = await gw.request('GET', '/api/config/machines');
    const [row] = res.body.data as Record<string, unknown>[];
    expect(row).toMatchObject({ machineID: 'A', name: 'Machine A', system: 'FANUC', model: '0i-MF', machineType: 'mill', ip: '10.0.0.5', port: 8193, isActive: true });
  });

  it('GW-94 an unknown machineID answers 10003 GENERAL_MACHINE_ID_NOT_EXISTED with a hint to list the machines', async () => {
    gw = await startTestGateway({ machines: [simMachine('A')] });
    for (const url of ['/api/config/machine?machineID=ZZ', '/api/task/batchReadTaskData?type=CNCStatus&machineIDs=A,ZZ', '/api/task/batchReadErrors?machineIDs=ZZ']) {
      const res = await gw.request('GET', url);
      expect(res.status).toBe(404);
      expect(res.body.errorCode).toBe(10003);
      expect(res.body.errorMsg).toContain("'ZZ'");
      expect(res.body.hint).toMatch(/list_machines/);
    }
  });

  it('GW-14 password and fileServerPassword are write-only: never in any response', async () => {
    gw = await startTestGateway();
    const secret = 'S3cret-pa55';
    const fileSecret = 'F1le-pa55';
    const created = await gw.request('POST', '/api/config/machine/add', simMachine('P', { password: secret, fileServerPassword: fileSecret }));
    expect(created.status).toBe(200);
    const responses = [
      created.raw,
      (await gw.request('GET', '/api/config/machines')).raw,
      (await gw.request('GET', '/api/config/machine?machineID=P')).raw,
      (await gw.request('POST', '/api/config/machine/update', { machineID: 'P', name: 'renamed' })).raw,
      (await gw.request('POST', '/api/config/machine/add', simMachine('Q', { password: 12345 }))).raw,
    ];
    for (const raw of responses) {
      expect(raw).not.toContain(secret);
      expect(raw).not.toContain(fileSecret);
      expect(raw).not.toMatch(/"password"|"fileServerPassword"/);
    }
    expect(responses[4]).not.toContain('12345');
    const got = (await gw.request('GET', '/api/config/machine?machineID=P')).body.data as Record<string, unknown>;
    expect(got).toMatchObject({ passwordSet: true, fileServerPasswordSet: true, name: 'renamed' });
    // An update that does not mention the password keeps it; an empty string clears it.
    await gw.request('POST', '/api/config/machine/update', { machineID: 'P', password: '' });
    expect((await gw.request('GET', '/api/config/machine?machineID=P')).body.data).toMatchObject({ passwordSet: false, fileServerPasswordSet: true });
  });

  it('bad input answers 400 naming the field, what was found and what is accepted', async () => {
    gw = await startTestGateway();
    const res = await gw.request('POST', '/api/config/machine/add', simMachine('X', { port: 'abc', machineType: 'boat' }));
    expect(res.status).toBe(400);
    expect(res.body.errorCode).toBe(2);
    expect(res.body.errorMsg).toMatch(/port: found "abc"; expected number/);
    expect(res.body.errorMsg).toMatch(/machineType: found "boat".*lathe.*machiningCenter/);
    const driver = await gw.request('POST', '/api/config/machine/add', simMachine('Y', { driver: 'telepathy' }));
    expect(driver.body.errorMsg).toMatch(/driver: found 'telepathy'; accepted: simulator/);
    const options = await gw.request('POST', '/api/config/machine/add', simMachine('Y', { driverOptions: { timeScale: 0 } }));
    expect(options.status).toBe(400);
    expect(options.body.errorMsg).toMatch(/driverOptions\.timeScale/);
    const type = await gw.request('GET', '/api/task/batchReadTaskData?type=Banana');
    expect(type.status).toBe(400);
    expect(type.body.errorMsg).toMatch(/type: found "Banana".*CNCStatus.*ToolLife/);
    const json = await gw.gateway.http.inject({ method: 'POST', url: '/api/config/machine/add', headers: { 'content-type': 'application/json', authorization: `Bearer ${gw.adminToken}` }, payload: '{bad' });
    expect(json.statusCode).toBe(400);
    expect(json.json().errorCode).toBe(2);
    expect((await gw.request('GET', '/api/config/machines')).body.data).toEqual([]);
  });

  it('a duplicate machineID answers 409 with 10001 and changes nothing', async () => {
    gw = await startTestGateway({ machines: [simMachine('A')] });
    const res = await gw.request('POST', '/api/config/machine/add', simMachine('A', { name: 'impostor' }));
    expect(res.status).toBe(409);
    expect(res.body.errorCode).toBe(10001);
    expect(((await gw.request('GET', '/api/config/machine?machineID=A')).body.data as { name: string }).name).toBe('Machine A');
  });

  it('GW-22 the fleet is visible with derived states and reasons, served from the actor caches', async () => {
    gw = await startTestGateway({
      machines: [
        simMachine('RUN'),
        simMachine('OFF', { isActive: false }),
        simMachine('NOSTATUS', { tasks: { CNCStatus: { enabled: false, intervalMs: 1000 } } }),
      ],
    });
    const g = gw;
    await vi.waitFor(async () => expect((await fleetState(g)).RUN?.data).not.toBeNull(), { timeout: 5000, interval: 50 });
    const fleet = await fleetState(g);
    expect(['running', 'idle', 'alarm', 'setup']).toContain(fleet.RUN?.state);
    expect(fleet.RUN?.reason).toMatch(new RegExp(`^${fleet.RUN?.state}: `));
    expect(fleet.OFF).toMatchObject({ state: 'inactive', statusStale: false, data: null });
    expect(fleet.NOSTATUS).toMatchObject({ state: 'noData', reason: expect.stringMatching(/not enabled/) });
    expect(fleet.NOSTATUS?.error?.errorCode).toBe(1301);
    const errors = await g.request('GET', '/api/task/batchReadErrors');
    const byId = Object.fromEntries((errors.body.data as { machineID: string; connection: { state: string; errorCode: number } }[]).map((e) => [e.machineID, e]));
    expect(byId.RUN?.connection).toMatchObject({ state: 'online', errorCode: 0 });
    expect(byId.OFF?.connection.state).toBe('stopped');
  });

  it('a task class the driver lacks is a clear error, never a made-up value', async () => {
    gw = await startTestGateway({
      machines: [simMachine('NT', { driverOptions: { families: ['status', 'alarm', 'count', 'timeData'] }, tasks: { ToolLife: { enabled: true, intervalMs: 200 } } })],
    });
    const g = gw;
    await vi.waitFor(
      async () => {
        const res = await g.request('GET', '/api/task/batchReadTaskData?type=ToolLife&machineIDs=NT');
        const [entry] = res.body.data as Entry[];
        expect(entry?.error?.errorCode).toBe(2001);
        expect(entry?.error?.errorMsg).toMatch(/driver 'simulator' does not support item family 'toolLife'/);
        expect(entry?.data).toBeNull();
      },
      { timeout: 5000, interval: 50 },
    );
  });

  it('adding, deactivating, editing and deleting a machine starts, stops and restarts its actor live', async () => {
    gw = await startTestGateway({ machines: [simMachine('A')], groups: [{ groupID: 'cell', name: 'Cell', machineIDs: ['A'] }] });
    const g = gw;
    expect((await g.request('POST', '/api/config/machine/add', simMachine('B'))).status).toBe(200);
    expect(g.gateway.fleet.has('B')).toBe(true);
    await vi.waitFor(async () => expect(g.gateway.fleet.connectionState('B')).toBe('online'), { timeout: 5000, interval: 20 });

    await g.request('POST', '/api/config/machine/update', { machineID: 'B', isActive: false });
    expect(g.gateway.fleet.connectionState('B')).toBe('stopped');
    expect((await fleetState(g)).B?.state).toBe('inactive');
    expect(((await g.request('GET', '/api/config/machines')).body.data as { machineID: string }[]).map((m) => m.machineID)).toEqual(['A', 'B']);

    await g.request('POST', '/api/config/machine/update', { machineID: 'B', isActive: true, tasks: { CNCStatus: { intervalMs: 300 } } });
    const machine = (await g.request('GET', '/api/config/machine?machineID=B')).body.data as { tasks: { CNCStatus: { intervalMs: number; enabled: boolean } } };
    expect(machine.tasks.CNCStatus).toEqual({ enabled: true, intervalMs: 300 });
    await vi.waitFor(async () => expect(g.gateway.fleet.connectionState('B')).toBe('online'), { timeout: 5000, interval: 20 });

    await g.request('POST', '/api/config/machine/delete', { machineID: 'A' });
    expect(g.gateway.fleet.has('A')).toBe(false);
    expect((await g.request('GET', '/api/config/group?groupID=cell')).body.data).toMatchObject({ machineIDs: [] });
    expect((await g.request('GET', '/api/config/machine?machineID=A')).body.errorCode).toBe(10003);
  });

  it('GW-13 groups hold member machineIDs; unknown members and groupIDs are rejected', async () => {
    gw = await startTestGateway({ machines: [simMachine('A'), simMachine('B')] });
    expect((await gw.request('POST', '/api/config/group/add', { groupID: 'g1', name: 'G1', machineIDs: ['A'] })).status).toBe(200);
    const bad = await gw.request('POST', '/api/config/group/add', { groupID: 'g2', name: 'G2', machineIDs: ['A', 'NOPE'] });
    expect(bad.body.errorCode).toBe(10003);
    expect(bad.body.errorMsg).toContain("'NOPE'");
    await gw.request('POST', '/api/config/group/update', { groupID: 'g1', machineIDs: ['A', 'B'] });
    expect((await gw.request('GET', '/api/config/groups')).body.data).toEqual([expect.objectContaining({ groupID: 'g1', name: 'G1', isActive: true, machineIDs: ['A', 'B'] })]);
    const missing = await gw.request('GET', '/api/config/group?groupID=zz');
    expect([missing.status, missing.body.errorCode]).toEqual([404, 10005]);
    await gw.request('POST', '/api/config/group/delete', { groupID: 'g1' });
    expect((await gw.request('GET', '/api/config/groups')).body.data).toEqual([]);
  });
});

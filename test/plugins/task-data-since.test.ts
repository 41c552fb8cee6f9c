import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { healthEntry, taskDataEntry } from '../../core/roles/gateway/fleet/entries.js';
import type { SimulatorClient } from '../../drivers/simulator/client.js';
import { simMachine, startTestGateway, type TestGateway } from '../fixtures/gateway.js';

/**
 * `sinceRevision` on the two fleet batch reads (a gateway extension,
 * docs/api.md): without it the answer is the specified array; with it, only
 * the entries changed after that revision, with the machines removed since.
 */

type Changes = { revision: number; full: boolean; entries: { machineID: string; [field: string]: unknown }[]; removed: string[] };

let gw: TestGateway;
beforeAll(async () => {
  gw = await startTestGateway({
    machines: [
      simMachine('A', { tasks: { CNCStatus: { enabled: true, intervalMs: 5000 } } }),
      simMachine('B', { tasks: { CNCStatus: { enabled: true, intervalMs: 5000 } } }),
      simMachine('OFF', { isActive: false }),
    ],
  });
  await vi.waitFor(() => expect(gw.gateway.fleet.snapshot('B').cache.CNCStatus?.sampledAt).toBeDefined(), { timeout: 8000, interval: 20 });
});
afterAll(() => gw.stop());

const get = async (url: string) => {
  const res = await gw.request('GET', url);
  return { ...res, data: res.body.data };
};
const since = async (path: string, revision: number, extra = '') => (await get(`${path}${path.includes('?') ? '&' : '?'}sinceRevision=${revision}${extra}`)).data as Changes;
const STATUS = '/api/task/batchReadTaskData?type=CNCStatus';
const ERRORS = '/api/task/batchReadErrors';

describe('batch reads with sinceRevision', () => {
  it('without sinceRevision the answers are the arrays of every machine, as before', async () => {
    const status = await get(STATUS);
    const errors = await get(ERRORS);
    expect(status.status).toBe(200);
    const fleet = gw.gateway.fleet;
    expect(status.data).toEqual(['A', 'B', 'OFF'].map((id) => JSON.parse(JSON.stringify(taskDataEntry(fleet.snapshot(id), 'CNCStatus'))) as unknown));
    expect(errors.data).toEqual(['A', 'B', 'OFF'].map((id) => JSON.parse(JSON.stringify(healthEntry(fleet.snapshot(id)))) as unknown));
    expect((await get('/api/task/batchReadTaskData?type=Count')).data).toHaveLength(3);
  });

  it('answers everything (full) to a revision it cannot answer, then only what changed', async () => {
    const first = await since(STATUS, 0);
    expect(first).toMatchObject({ full: true, removed: [] });
    expect(first.entries.map((e) => e.machineID)).toEqual(['A', 'B', 'OFF']);
    expect(first.revision).toBe(gw.gateway.fleet.rows.revision);
    // A machine renamed is a change of that machine only.
    expect((await gw.request('POST', '/api/config/machine/update', { machineID: 'OFF', name: 'Renamed' })).status).toBe(200);
    await vi.waitFor(async () => expect((await since(STATUS, first.revision)).entries.map((e) => e.machineID)).toContain('OFF'), { timeout: 2000, interval: 20 });
    const now = await since(STATUS, first.revision);
    expect(now.full).toBe(false);
    // Asked again from the revision it gave: only machines sampled or changed since.
    const again = await since(STATUS, now.revision);
    expect(again.entries.every((e) => gw.gateway.fleet.rows.get(e.machineID)!.statusRevision > now.revision)).toBe(true);
    expect(again.entries.map((e) => e.machineID)).not.toContain('OFF');
  });

  it('names the machines removed since, and a machineIDs filter still applies', async () => {
    const before = (await since(STATUS, 0)).revision;
    expect((await gw.request('POST', '/api/config/machine/add', simMachine('GONE', { isActive: false }))).status).toBe(200);
    expect((await gw.request('POST', '/api/config/machine/delete', { machineID: 'GONE' })).status).toBe(200);
    await vi.waitFor(async () => expect((await since(STATUS, before)).removed).toEqual(['GONE']), { timeout: 2000, interval: 20 });
    expect((await since(ERRORS, before)).removed).toEqual(['GONE']);
    const filtered = await since(STATUS, 0, '&machineIDs=B');
    expect(filtered).toMatchObject({ full: true, removed: [] });
    expect(filtered.entries.map((e) => e.machineID)).toEqual(['B']);
    expect((await since(STATUS, before, '&machineIDs=A,B')).removed).toEqual([]);
  });

  it('batchReadErrors answers a machine whose connection changed', async () => {
    const { revision } = await since(ERRORS, 0);
    (gw.gateway.fleet.client('A') as SimulatorClient).loseConnection();
    await vi.waitFor(async () => expect((await since(ERRORS, revision)).entries.map((e) => e.machineID)).toEqual(['A']), { timeout: 5000, interval: 20 });
    const entry = (await since(ERRORS, revision)).entries[0] as unknown as { connection: { state: string } };
    expect(entry.connection.state).not.toBe('online');
    (gw.gateway.fleet.client('A') as SimulatorClient).restoreConnection();
  });

  it('GW-95 refuses a bad sinceRevision, naming it and what it accepts', async () => {
    for (const bad of ['-1', 'x', '1.5', '9007199254740993']) {
      const res = await get(`${STATUS}&sinceRevision=${bad}`);
      expect(res.status, bad).toBe(400);
      expect(res.body.errorMsg, bad).toMatch(/sinceRevision/);
    }
    const other = await get('/api/task/batchReadTaskData?type=Count&sinceRevision=0');
    expect(other.status).toBe(400);
    expect(other.body.errorMsg).toContain('sinceRevision: accepted only with type CNCStatus; found type Count');
  });
});

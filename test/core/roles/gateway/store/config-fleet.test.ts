import { afterEach, describe, expect, it } from 'vitest';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { loadConfig } from '../../../../../core/roles/index.js';
import { Gateway } from '../../../../../core/roles/gateway/gateway.js';
import { DRIVERS } from '../../../../../drivers/registry.js';
import { GATEWAY_PLUGINS } from '../../../../../core/roles/gateway/compose.js';
import { simMachine, TEST_ADMIN_PASSWORD } from '../../../../fixtures/gateway.js';

interface Started {
  gateway: Gateway;
  /** Messages the gateway logged. */
  log: string[];
  call(url: string, body?: object): Promise<{ status: number; data: unknown }>;
}

let running: Started | undefined;
afterEach(async () => {
  await running?.gateway.stop();
  running = undefined;
});

/** Writes `config` to `<dir>/<name>` and starts a gateway from it, as `npm start -- --config FILE` does. */
async function startFromFile(dir: string, name: string, config: object): Promise<Started> {
  const file = join(dir, name);
  writeFileSync(file, JSON.stringify({ logLevel: 'info', gateway: { dataDir: join(dir, 'data'), timeZone: 'UTC' }, mtconnect: { host: '127.0.0.1', port: 0 }, ...config }));
  const { config: parsed } = loadConfig(['--config', file], {});
  const log: string[] = [];
  const logger = pino({ level: 'info' }, { write: (line: string) => void log.push((JSON.parse(line) as { msg: string }).msg) });
  const gateway = await Gateway.create({ config: parsed, drivers: DRIVERS, plugins: GATEWAY_PLUGINS, logger, env: { GATEWAY_ADMIN_PASSWORD: TEST_ADMIN_PASSWORD } });
  const login = await gateway.http.inject({ method: 'POST', url: '/api/auth/login', payload: { username: 'admin', password: TEST_ADMIN_PASSWORD } });
  const token = (login.json() as { data?: { token?: string } }).data?.token ?? '';
  running = {
    gateway,
    log,
    async call(url, body) {
      const res = await gateway.http.inject({ method: body ? 'POST' : 'GET', url, ...(body ? { payload: body } : {}), headers: { authorization: `Bearer ${token}` } });
      return { status: res.statusCode, data: (res.json() as { data: unknown }).data };
    },
  };
  return running;
}

async function stop(): Promise<void> {
  await running?.gateway.stop();
  running = undefined;
}

function machineIDs(data: unknown): string[] {
  return (data as { machineID: string }[]).map((m) => m.machineID).sort();
}

describe('the config file and the stored fleet', () => {
  it('a config file applies the machines and groups it names at every start, keeps the others, and says what it did', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gw-config-fleet-'));
    let gw = await startFromFile(dir, 'first.json', {
      machines: [simMachine('A', { ip: '10.0.0.1' }), simMachine('B')],
      groups: [{ groupID: 'g1', name: 'Hall 1', machineIDs: ['A'] }],
    });
    expect(gw.gateway.context.announcements).toEqual(expect.arrayContaining(['config first.json: added 2 machines (A, B), updated 0, unchanged 0', 'config first.json: added 1 group (g1), updated 0, unchanged 0']));
    // Through the API: a machine the config does not name, and an edit of one it does.
    expect((await gw.call('/api/config/machine/add', simMachine('C'))).status).toBe(200);
    expect((await gw.call('/api/config/machine/update', { machineID: 'B', name: 'Renamed in the API' })).status).toBe(200);
    await stop();

    // The same data directory with another config, as `npm start -- --config plant.json` would.
    gw = await startFromFile(dir, 'plant.json', {
      machines: [simMachine('A', { ip: '10.0.0.2' }), simMachine('B'), simMachine('X')],
      groups: [{ groupID: 'g1', name: 'Hall 1', machineIDs: ['A', 'X'] }],
    });
    const expected = [
      'config plant.json: added 1 machine (X), updated 2 (A: ip; B: name), unchanged 0',
      'config plant.json: added 0 groups, updated 1 (g1: machineIDs), unchanged 0',
      'kept 1 machine not in the config: C',
    ];
    expect(gw.gateway.context.announcements).toEqual(expect.arrayContaining(expected));
    expect(gw.log).toEqual(expect.arrayContaining(expected));
    const machines = (await gw.call('/api/config/machines')).data as { machineID: string; ip: string; name: string }[];
    expect(machineIDs(machines)).toEqual(['A', 'B', 'C', 'X']);
    expect(machines.find((m) => m.machineID === 'A')?.ip).toBe('10.0.0.2');
    expect(machines.find((m) => m.machineID === 'B')?.name).toBe('Machine B');
    // The API shows which machines the config manages, so an edit of one is not a surprise at the next start.
    expect(Object.fromEntries((machines as unknown as { machineID: string; managedBy: string }[]).map((m) => [m.machineID, m.managedBy]))).toEqual({ A: 'config', B: 'config', C: 'api', X: 'config' });
    const edited = await gw.call('/api/config/machine/update', { machineID: 'A', name: 'edited' });
    expect(edited.data).toMatchObject({ machineID: 'A', managedBy: 'config' });
    expect(((await gw.call('/api/config/group?groupID=g1')).data as { machineIDs: string[] }).machineIDs).toEqual(['A', 'X']);
    expect(gw.gateway.fleet.has('X')).toBe(true);
    // A machine the config names, deleted through the API, comes back at the next start.
    expect((await gw.call('/api/config/machine/delete', { machineID: 'X' })).status).toBe(200);
    await stop();

    gw = await startFromFile(dir, 'plant.json', {
      machines: [simMachine('A', { ip: '10.0.0.2' }), simMachine('B'), simMachine('X')],
      groups: [{ groupID: 'g1', name: 'Hall 1', machineIDs: ['A', 'X'] }],
    });
    expect(gw.gateway.context.announcements).toEqual(
      expect.arrayContaining(['config plant.json: added 1 machine (X), updated 1 (A: name), unchanged 1', 'config plant.json: added 0 groups, updated 1 (g1: machineIDs), unchanged 0', 'kept 1 machine not in the config: C']),
    );
    expect(machineIDs((await gw.call('/api/config/machines')).data)).toEqual(['A', 'B', 'C', 'X']);
  });

  it('a credential the config entry leaves out keeps the value set through the API', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gw-config-fleet-'));
    let gw = await startFromFile(dir, 'plant.json', { machines: [simMachine('A')] });
    expect((await gw.call('/api/config/machine/update', { machineID: 'A', password: 'set-in-the-api' })).status).toBe(200);
    await stop();
    gw = await startFromFile(dir, 'plant.json', { machines: [simMachine('A')] });
    expect(gw.gateway.context.announcements).toContain('config plant.json: added 0 machines, updated 0, unchanged 1');
    expect(gw.gateway.context.store.getMachine('A').password).toBe('set-in-the-api');
    expect((await gw.call('/api/config/machine?machineID=A')).data).toMatchObject({ passwordSet: true });
  });

  it('a config that names no machines leaves the stored fleet as it is, and says so', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gw-config-fleet-'));
    await startFromFile(dir, 'plant.json', { machines: [simMachine('A'), simMachine('B')] });
    await stop();
    const gw = await startFromFile(dir, 'empty.json', {});
    const line = 'config empty.json names no machines or groups: the 2 stored machines and 0 groups are used as they are';
    expect(gw.gateway.context.announcements).toContain(line);
    expect(gw.log).toContain(line);
    expect(machineIDs((await gw.call('/api/config/machines')).data)).toEqual(['A', 'B']);
  });
});

import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { configNotices } from '../../core/config/config.js';
import { loadConfig } from '../../core/roles/index.js';
import type { RunningSimulator } from '../../drivers/protocol-simulator.js';
import { SIMULATOR_PLANS, startSimulators } from '../../drivers/simulators.js';
import { startTestGateway, type TestGateway } from '../fixtures/gateway.js';
import { modbusClient } from './modbus/helpers.js';

const CONFIG_FILE = new URL('../../config/simulators.json', import.meta.url);
type MachineEntry = { machineID: string; driver: string; ip: string; port: number; driverOptions: unknown; tasks: Record<string, { enabled: boolean }> };
const shipped = JSON.parse(readFileSync(CONFIG_FILE, 'utf8')) as { machines: MachineEntry[]; groups: unknown[] };

describe('the protocol simulators and config/simulators.json', () => {
  let running: RunningSimulator[] = [];
  let tg: TestGateway | undefined;

  beforeAll(async () => {
    running = await startSimulators([], { portFor: () => 0 });
  }, 60_000);

  afterAll(async () => {
    await tg?.stop();
    await Promise.all(running.map((s) => s.close()));
  });

  it('config/simulators.json is a valid gateway config', () => {
    expect(() => loadConfig(['--config', CONFIG_FILE.pathname], {})).not.toThrow();
  });

  it('config/simulators.json uses the current spellings: loading it gives no deprecation notice', () => {
    expect(configNotices(loadConfig(['--config', CONFIG_FILE.pathname], {}).config)).toEqual([]);
  });

  it('every simulated machine has an entry that reads it through its simulator on the documented port', () => {
    for (const sim of running) {
      const plan = SIMULATOR_PLANS.find((p) => p.scheme === sim.scheme);
      expect(plan).toBeDefined();
      for (const machine of plan?.machines ?? []) {
        const expected: Record<string, unknown> = { ...sim.machineConfig(machine), port: plan?.port };
        const entry = shipped.machines.find((m) => m.machineID === machine.machineID);
        expect(entry, machine.machineID).toMatchObject({ driver: expected.driver, ip: expected.ip, port: expected.port, driverOptions: expected.driverOptions });
      }
    }
    expect(shipped.machines).toHaveLength(SIMULATOR_PLANS.reduce((n, p) => n + p.machines.length, 0));
  });

  it("docs/drivers/modbus.md's smallest machine entry reads a machine of the Modbus simulator on its documented port", async () => {
    const doc = readFileSync(new URL('../../docs/drivers/modbus.md', import.meta.url), 'utf8');
    const block = /smallest working machine entry[\s\S]*?```json\n(.*)\n```/.exec(doc)?.[1];
    expect(block).toBeDefined();
    const entry = JSON.parse(block as string) as MachineEntry;
    const plan = SIMULATOR_PLANS.find((p) => p.scheme === 'modbus');
    const sim = running.find((r) => r.scheme === 'modbus');
    expect({ driver: entry.driver, port: entry.port }).toEqual({ driver: 'modbus', port: plan?.port });
    // The same entry, on the port this test's simulator took.
    const client = modbusClient(sim?.port as number, entry.driverOptions as Record<string, unknown>);
    try {
      await client.connect();
      expect(['RUNNING', 'HOLD', 'STOPPED', 'RESET', 'EMERGENCY']).toContain((await client.read('status')).adjustedStatus);
    } finally {
      await client.close();
    }
  });

  it('GW-22 a gateway on config/simulators.json reads every machine through real protocol traffic', async () => {
    const portOf = new Map(running.flatMap((sim) => (SIMULATOR_PLANS.find((p) => p.scheme === sim.scheme)?.machines ?? []).map((m) => [m.machineID, sim.port] as const)));
    const machines = shipped.machines.map((m) => ({ ...m, port: portOf.get(m.machineID) }));
    tg = await startTestGateway({ machines, groups: shipped.groups });
    const gateway = tg;
    await expect
      .poll(
        () =>
          machines.filter((m) => {
            const view = gateway.gateway.fleet.snapshot(m.machineID);
            return view.connection.state === 'online' && view.cache.CNCStatus?.sampledAt !== undefined && !['offline', 'noData'].includes(view.derived.state);
          }).length,
        { timeout: 30_000, interval: 100 },
      )
      .toBe(machines.length);
    for (const m of machines) {
      const res = await gateway.request('GET', `/api/cnc/readCNCStatusDetails?machineID=${m.machineID}`);
      expect(res.body.errorCode, `${m.machineID}: ${res.raw}`).toBe(0);
      expect(['RUNNING', 'HOLD', 'STOPPED', 'RESET', 'EMERGENCY']).toContain((res.body.data as { adjustedStatus?: string }).adjustedStatus);
    }
  }, 60_000);
});

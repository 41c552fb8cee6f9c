import { afterEach, describe, expect, it } from 'vitest';
import type { SimulatedMachineSpec } from '../../../drivers/protocol-simulator.js';
import { startModbusSimulator } from '../../../drivers/modbus/simulator.js';
import { SimulatedMachine } from '../../../drivers/simulator/model.js';
import { modbusDriver } from '../../../drivers/modbus/index.js';
import { modbusClient } from './helpers.js';

const T0 = Date.UTC(2025, 0, 6, 6, 0, 0);
const SPECS: SimulatedMachineSpec[] = [
  { machineID: 'MB-LATHE', seed: 11, machineType: 'lathe', system: 'SIEMENS 840D', timeScale: 1 },
  { machineID: 'MB-MC', seed: 12, machineType: 'machiningCenter', system: 'FANUC 0i-MF', timeScale: 1 },
];

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** The model the simulator serves for `spec`, on the same clock. */
function model(spec: SimulatedMachineSpec, now: () => number): SimulatedMachine {
  return new SimulatedMachine({ seed: spec.seed, timeScale: 1, machineType: spec.machineType, system: spec.system, cycleTimeSec: 120, alarmRate: 1, setupRate: 1, estopRate: 1 }, now);
}

describe('modbus simulator', () => {
  it('serves each machine at its own unit id and gives a machine config the driver accepts', async () => {
    const sim = await startModbusSimulator({ machines: SPECS });
    cleanups.push(() => sim.close());
    expect(sim.port).toBeGreaterThan(0);
    const config = sim.machineConfig(SPECS[1] as SimulatedMachineSpec);
    expect(config).toMatchObject({ driver: 'modbus', ip: '127.0.0.1', port: sim.port, driverOptions: { unitId: 2 } });
    expect(modbusDriver.configSchema.safeParse(config.driverOptions).success).toBe(true);
    expect(sim.describe().join('\n')).toContain('unit id 1: MB-LATHE');
  });

  it('reads through the default map what the machine model says, family by family', async () => {
    const clock = { now: T0 };
    const now = () => clock.now;
    const sim = await startModbusSimulator({ machines: SPECS, now });
    cleanups.push(() => sim.close());
    for (const [i, spec] of SPECS.entries()) {
      const client = modbusClient(sim.port, { unitId: i + 1 }, now);
      cleanups.push(() => client.close());
      await client.connect();
      clock.now = T0; // the simulator built its machines at T0
      const machine = model(spec, now);
      for (const at of [0, 95_000, 3_600_000, 5_400_000]) {
        clock.now = T0 + at;
        expect(await client.read('status')).toEqual({ ...machine.status(), time: clock.now });
        expect(await client.read('feedAndSpindle')).toEqual(machine.feedAndSpindle());
        expect(await client.read('toolNumber')).toEqual(machine.toolNumber());
        expect(await client.read('count')).toEqual(machine.count());
        const times = machine.timeData();
        expect(await client.read('timeData')).toEqual({ ...times, cycleTime: expect.closeTo(times.cycleTime, 5) as number });
        expect(await client.read('load')).toEqual(machine.loads());
        const positions = await client.read('position');
        expect(positions.map((p) => [p.axis, p.unit])).toEqual(machine.positions().map((p) => [p.axis, p.unit]));
        machine.positions().forEach((expected, axis) => expect(positions[axis]?.machine).toBeCloseTo(expected.machine, 2));
        // Alarm times travel as whole seconds.
        const alarms = machine.alarms().map((alarm) => ({ ...alarm, since: Math.floor(alarm.since / 1000) * 1000 }));
        expect(await client.read('alarm')).toEqual(alarms);
      }
    }
  });

  it('shows alarms and emergencies over time', async () => {
    const clock = { now: T0 };
    const now = () => clock.now;
    const spec: SimulatedMachineSpec = { machineID: 'MB-BUSY', seed: 3, machineType: 'mill', system: 'OKUMA' };
    const sim = await startModbusSimulator({ machines: [spec], now });
    cleanups.push(() => sim.close());
    const client = modbusClient(sim.port, { unitId: 1 }, now);
    cleanups.push(() => client.close());
    await client.connect();
    const seen = new Set<string>();
    // Every 10 simulated minutes over two days: enough for alarms, warnings and the other states.
    for (let at = 0; at < 2 * 86_400_000; at += 600_000) {
      clock.now = T0 + at;
      const status = await client.read('status');
      seen.add(status.adjustedStatus);
      if (status.alarmLevel !== 'none') {
        const alarms = await client.read('alarm');
        expect(alarms.length).toBeGreaterThan(0);
        seen.add(`alarm:${status.alarmLevel}`);
      }
    }
    expect(seen).toContain('RUNNING');
    expect(seen).toContain('alarm:warning');
    expect([...seen].some((s) => s === 'alarm:alarm' || s === 'alarm:emergency')).toBe(true);
  });
});

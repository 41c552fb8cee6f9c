/**
 * The Cycle task reads two families, timeData (the running cycle's time) and
 * count (last cycle time, program, parts): a register map without a
 * timeData section fails it just as one without count does
 * (docs/drivers/modbus.md, troubleshooting).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { StateTally } from '../../../core/roles/gateway/fleet/state-tally.js';
import { TASK_SAMPLERS } from '../../../core/roles/gateway/fleet/task-samplers.js';
import { DEFAULT_REGISTER_MAP } from '../../../drivers/modbus/default-map.js';
import { startModbusSimulator } from '../../../drivers/modbus/simulator.js';
import { modbusClient, rejection } from './helpers.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

describe('modbus Cycle task', () => {
  it('needs a timeData section as well as count: without it the task fails naming timeData', async () => {
    const sim = await startModbusSimulator({ machines: [{ machineID: 'MB-1', seed: 5, machineType: 'mill', system: 'FANUC' }] });
    cleanups.push(() => sim.close());
    const { timeData: _dropped, ...withoutTimeData } = DEFAULT_REGISTER_MAP;
    const ctx = (client: ReturnType<typeof modbusClient>) => ({ client, hadAlarms: false, readMotion: true, tally: new StateTally(Date.now(), 'UTC'), idealCycleTimeSec: undefined, now: Date.now() });

    const full = modbusClient(sim.port, { unitId: 1 });
    cleanups.push(() => full.close());
    await full.connect();
    expect((await TASK_SAMPLERS.Cycle(ctx(full))).currentCycleTimeSec).toBeGreaterThanOrEqual(0);

    const partial = modbusClient(sim.port, { unitId: 1, map: withoutTimeData });
    cleanups.push(() => partial.close());
    await partial.connect();
    expect(partial.families.has('count')).toBe(true);
    const error = await rejection(TASK_SAMPLERS.Cycle(ctx(partial)));
    expect(error.errorName).toBe('DRIVER_FAMILY_UNSUPPORTED');
    expect(error.message).toContain("driver 'modbus' does not support item family 'timeData'");
  });
});

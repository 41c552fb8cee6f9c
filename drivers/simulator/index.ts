/**
 * The `simulator` driver: deterministic simulated CNC machines for the default
 * fleet, tests and benchmarks. See docs/drivers/simulator.md.
 */
import type { DriverFactory } from '../../core/driver-seam/driver.js';
import { SimulatorClient } from './client.js';
import { simulatorOptionsSchema, type SimulatorOptions } from './options.js';

export { SimulatorClient } from './client.js';
export { simulatorOptionsSchema } from './options.js';
export type { SimulatorOptions, SimulatorOptionsInput } from './options.js';
export type { MachinePhase } from './model.js';

/** A stable 32-bit FNV-1a hash, so every machine of a fleet gets its own reproducible seed. */
export function seedFromMachineId(machineID: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < machineID.length; i++) {
    hash ^= machineID.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash | 0;
}

export const simulatorDriver: DriverFactory<SimulatorOptions> = {
  scheme: 'simulator',
  description: 'Deterministic simulated CNC machine (status, alarms, parts, tools, programs) for demos, tests and benchmarks',
  configSchema: simulatorOptionsSchema,
  create(machine, deps) {
    const seed = machine.driverOptions.seed ?? seedFromMachineId(machine.machineID);
    return new SimulatorClient({ ...machine.driverOptions, seed }, deps);
  },
};

/**
 * The `modbus` driver: CNC machines (or their PLCs) that expose status,
 * counters and timers in Modbus TCP registers, read through a register map.
 * See docs/drivers/modbus.md. modbus-serial is loaded on the first connect.
 */
import type { DriverFactory } from '../../core/driver-seam/driver.js';
import { ModbusClient } from './client.js';
import { modbusOptionsSchema, type ModbusOptions } from './options.js';

export { ModbusClient } from './client.js';
export { modbusOptionsSchema, DEFAULT_MAP } from './options.js';
export type { ModbusOptions, ModbusOptionsInput } from './options.js';

export const modbusDriver: DriverFactory<ModbusOptions> = {
  scheme: 'modbus',
  description: 'Modbus TCP devices read through a register map (status, alarms, feed and spindle, tool, times, parts, axes, loads)',
  configSchema: modbusOptionsSchema,
  create(machine, deps) {
    return new ModbusClient(machine, machine.driverOptions, deps);
  },
};

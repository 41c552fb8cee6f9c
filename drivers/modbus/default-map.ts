/**
 * The register map the Modbus simulator serves and the driver uses when a
 * machine's driverOptions give none. Addresses are 0-based protocol
 * addresses. The table in docs/drivers/modbus.md lists the same layout.
 */
import { ALARM_LEVELS } from '../../core/driver-seam/driver.js';
import { AXIS_UNITS, EXECUTION_STATES, OPERATING_MODES, PROGRAM_STATUSES } from './register-map.js';

/** Codes 0, 1, 2… for the values of an enumeration, as a map item's `enum`. */
export function codes(values: readonly string[]): Record<string, string> {
  return Object.fromEntries(values.map((value, code) => [String(code), value]));
}

const holding = (address: number, type: string, extra: Record<string, unknown> = {}) => ({ function: 'holding', address, type, ...extra });
const input = (address: number, type: string, extra: Record<string, unknown> = {}) => ({ function: 'input', address, type, ...extra });
const text = (fn: 'holding' | 'input', address: number, length: number) => ({ function: fn, address, type: 'string', length });

/** Alarm slots in holding registers: code (8 chars), level, since (unix s), message (64 chars). */
const alarmSlot = (base: number) => ({
  code: text('holding', base, 4),
  level: holding(base + 4, 'uint16', { enum: { '1': 'warning', '2': 'alarm', '3': 'emergency' } }),
  since: holding(base + 5, 'uint32', { scale: 1000 }),
  message: text('holding', base + 10, 32),
});

/** Axis slots in input registers, 10 apart; positions are float32 with the low word first, as many PLCs store them. */
const axisSlot = (base: number) => ({
  name: text('input', base, 1),
  unit: input(base + 1, 'uint16', { enum: codes(AXIS_UNITS) }),
  absolute: input(base + 2, 'float32', { wordOrder: 'little' }),
  machine: input(base + 4, 'float32', { wordOrder: 'little' }),
  relative: input(base + 6, 'float32', { wordOrder: 'little' }),
  distanceToGo: input(base + 8, 'float32', { wordOrder: 'little' }),
});

const loadSlot = (base: number) => ({ name: text('input', base, 1), loadPercent: input(base + 1, 'int16') });

/** Slots the simulator fills; a slot whose name or code reads empty is skipped. */
export const DEFAULT_ALARM_SLOTS = 2;
export const DEFAULT_AXIS_SLOTS = 4;
export const DEFAULT_LOAD_SLOTS = 5;

export const DEFAULT_REGISTER_MAP = {
  status: {
    adjustedStatus: holding(0, 'uint16', { enum: codes(EXECUTION_STATES) }),
    mode: holding(1, 'uint16', { enum: codes(OPERATING_MODES) }),
    programStatus: holding(2, 'uint16', { enum: codes(PROGRAM_STATUSES) }),
    alarmLevel: holding(3, 'uint16', { enum: codes(ALARM_LEVELS) }),
    cncStatus: text('holding', 10, 8),
    program: text('holding', 20, 8),
    emergency: { function: 'discreteInputs', address: 0, type: 'bool' },
    alarmStatus: { function: 'discreteInputs', address: 1, type: 'bool' },
  },
  toolNumber: { toolNumber: holding(4, 'uint16'), offsetNumber: holding(5, 'uint16') },
  alarms: Array.from({ length: DEFAULT_ALARM_SLOTS }, (_, i) => alarmSlot(100 + 50 * i)),
  feedAndSpindle: {
    feedRate: input(0, 'float32'),
    spindleSpeed: input(2, 'float32'),
    feedOverride: input(4, 'uint16'),
    spindleOverride: input(5, 'uint16'),
    rapidOverride: input(6, 'uint16'),
  },
  timeData: {
    powerOnTime: input(10, 'uint32'),
    operatingTime: input(12, 'uint32'),
    cuttingTime: input(14, 'uint32'),
    cycleTime: input(16, 'uint32', { scale: 0.1 }),
  },
  count: {
    partCount: input(20, 'uint32'),
    partsRequired: input(22, 'uint32'),
    partsTotal: input(24, 'uint32'),
    lastCycleTime: input(26, 'uint32', { scale: 0.1 }),
    program: text('input', 28, 8),
  },
  axes: Array.from({ length: DEFAULT_AXIS_SLOTS }, (_, i) => axisSlot(100 + 10 * i)),
  loads: Array.from({ length: DEFAULT_LOAD_SLOTS }, (_, i) => loadSlot(200 + 2 * i)),
};

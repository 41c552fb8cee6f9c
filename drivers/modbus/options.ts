/** `driverOptions` of a machine using the `modbus` scheme. See docs/drivers/modbus.md. */
import { z } from 'zod';
import { DEFAULT_REGISTER_MAP } from './default-map.js';
import { BIT_FUNCTIONS } from './register-items.js';
import { registerMapSchema, sectionItems, type RegisterMap } from './register-map.js';

/** Modbus protocol limits of one read request. */
export const MAX_REGISTERS_PER_READ = 125;
export const MAX_BITS_PER_READ = 2000;

const millis = (field: string, min: number, fallback: number) =>
  z
    .int({ error: `${field} must be a whole number of milliseconds` })
    .min(min, { error: `${field} must be at least ${min}` })
    .max(60_000, { error: `${field} must be at most 60000` })
    .default(fallback);

const count = (field: string, min: number, max: number, fallback: number) =>
  z
    .int({ error: `${field} must be a whole number from ${min} to ${max}` })
    .min(min, { error: `${field} must be at least ${min}` })
    .max(max, { error: `${field} must be at most ${max}` })
    .default(fallback);

/** The default map, parsed once: every machine without its own map shares it, and its read plans. */
export const DEFAULT_MAP: RegisterMap = registerMapSchema.parse(DEFAULT_REGISTER_MAP);

export const modbusOptionsSchema = z
  .strictObject({
    unitId: count('unitId', 0, 255, 1),
    connectTimeoutMs: millis('connectTimeoutMs', 50, 3000),
    requestTimeoutMs: millis('requestTimeoutMs', 20, 1000),
    maxGapRegisters: count('maxGapRegisters', 0, MAX_REGISTERS_PER_READ - 1, 8),
    maxRegistersPerRead: count('maxRegistersPerRead', 1, MAX_REGISTERS_PER_READ, MAX_REGISTERS_PER_READ),
    maxGapBits: count('maxGapBits', 0, MAX_BITS_PER_READ - 1, 32),
    maxBitsPerRead: count('maxBitsPerRead', 1, MAX_BITS_PER_READ, MAX_BITS_PER_READ),
    map: registerMapSchema.optional(),
  }, { error: 'driverOptions must be an object' })
  .superRefine((options, ctx) => {
    if (!options.map) return;
    for (const section of Object.keys(options.map) as (keyof RegisterMap)[]) {
      for (const { path, item } of sectionItems(options.map, section)) {
        const bits = BIT_FUNCTIONS.has(item.function);
        const limit = bits ? options.maxBitsPerRead : options.maxRegistersPerRead;
        if (item.width > limit) {
          ctx.addIssue({
            code: 'custom',
            path: ['map', ...path, 'length'],
            input: item.width,
            message: `the item spans ${item.width} registers, more than one read carries (${bits ? 'maxBitsPerRead' : 'maxRegistersPerRead'} ${limit})`,
          });
        }
      }
    }
  })
  .transform(({ map, ...rest }) => ({ ...rest, map: map ?? DEFAULT_MAP }));

/** Parsed Modbus options (defaults applied; `map` is the default map when none was given). */
export type ModbusOptions = z.output<typeof modbusOptionsSchema>;
/** Modbus options as written in a machine config. */
export type ModbusOptionsInput = z.input<typeof modbusOptionsSchema>;

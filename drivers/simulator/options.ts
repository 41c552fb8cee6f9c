/** `driverOptions` of the `simulator` driver (docs/drivers/simulator.md). */
import { z } from 'zod';
import { ITEM_FAMILIES } from '../../core/driver-seam/driver.js';
import { MACHINE_TYPES } from './catalog.js';

const rate = (field: string) =>
  z
    .number({ error: `${field} must be a number` })
    .min(0, { error: `${field} must be 0 or more` })
    .max(100, { error: `${field} must be at most 100` })
    .default(1);

const latency = (field: string) =>
  z
    .number({ error: `${field} must be a number of milliseconds` })
    .int({ error: `${field} must be a whole number of milliseconds` })
    .min(0, { error: `${field} must be 0 or more` })
    .max(60_000, { error: `${field} must be at most 60000` })
    .default(0);

/** `driverOptions` of a machine using the `simulator` scheme. */
export const simulatorOptionsSchema = z.strictObject({
  seed: z.int({ error: 'seed must be an integer' }).optional(),
  timeScale: z
    .number({ error: 'timeScale must be a number' })
    .positive({ error: 'timeScale must be greater than 0' })
    .max(100_000, { error: 'timeScale must be at most 100000' })
    .default(1),
  machineType: z.enum(MACHINE_TYPES, { error: `machineType must be one of ${MACHINE_TYPES.join(', ')}` }).default('machiningCenter'),
  system: z.string({ error: 'system must be a string' }).trim().min(1, { error: 'system must not be empty' }).default('FANUC'),
  cycleTimeSec: z
    .number({ error: 'cycleTimeSec must be a number' })
    .min(5, { error: 'cycleTimeSec must be at least 5' })
    .max(86_400, { error: 'cycleTimeSec must be at most 86400' })
    .default(120),
  alarmRate: rate('alarmRate'),
  setupRate: rate('setupRate'),
  estopRate: rate('estopRate'),
  programDir: z
    .string({ error: 'programDir must be a string such as //CNC_MEM/USER/PATH1/' })
    .min(1, { error: 'programDir must not be empty' })
    .max(1024, { error: 'programDir must be at most 1024 characters' })
    .regex(/^[^\p{Cc}]*$/u, { error: 'programDir must not contain control characters' })
    .refine((dir) => !dir.split(/[\\/]/).includes('..'), { error: "programDir must not contain '..' segments" })
    .optional(),
  runsLastProgram: z.boolean({ error: 'runsLastProgram must be true or false' }).default(false),
  families: z
    .array(z.enum(ITEM_FAMILIES, { error: `families entries must be one of ${ITEM_FAMILIES.join(', ')}` }))
    .min(1, { error: 'families must list at least one family' })
    .optional(),
  connectLatencyMs: latency('connectLatencyMs'),
  requestLatencyMs: latency('requestLatencyMs'),
  connectionLoss: z
    .strictObject({
      everySec: z.number({ error: 'connectionLoss.everySec must be a number' }).positive({ error: 'connectionLoss.everySec must be greater than 0' }),
      durationSec: z.number({ error: 'connectionLoss.durationSec must be a number' }).positive({ error: 'connectionLoss.durationSec must be greater than 0' }),
    })
    .refine((loss) => loss.durationSec < loss.everySec, {
      error: 'connectionLoss.durationSec must be shorter than everySec',
      path: ['durationSec'],
    })
    .optional(),
});

/** Parsed simulator options (defaults applied). */
export type SimulatorOptions = z.output<typeof simulatorOptionsSchema>;
/** Simulator options as written in a machine config. */
export type SimulatorOptionsInput = z.input<typeof simulatorOptionsSchema>;

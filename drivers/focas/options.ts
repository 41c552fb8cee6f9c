/** `driverOptions` of a machine using the `focas` scheme (see docs/drivers/focas.md). */
import { z } from 'zod';
import type { ItemFamily } from '../../core/driver-seam/driver.js';

/** The families the FOCAS bridge protocol v1 can serve; `toolNumber` has no call in v1. */
export const FOCAS_FAMILIES = [
  'status', 'alarm', 'position', 'load', 'feedAndSpindle', 'timeData', 'count', 'toolLife', 'programList', 'currentProgram', 'programFiles',
] as const satisfies readonly ItemFamily[];

const millis = (field: string, min: number, max: number, fallback: number) =>
  z
    .number({ error: `${field} must be a number of milliseconds between ${min} and ${max}` })
    .int({ error: `${field} must be a whole number of milliseconds` })
    .min(min, { error: `${field} must be at least ${min}` })
    .max(max, { error: `${field} must be at most ${max}` })
    .default(fallback);

export const focasOptionsSchema = z.strictObject({
  /** The CNC's name on the bridge; optional when the bridge fronts exactly one CNC. */
  cnc: z
    .string({ error: 'cnc must be the name of a CNC served by the bridge (a string)' })
    .trim()
    .min(1, { error: 'cnc must not be empty' })
    .max(128, { error: 'cnc must be at most 128 characters' })
    .optional(),
  requestTimeoutMs: millis('requestTimeoutMs', 50, 60_000, 1000),
  connectTimeoutMs: millis('connectTimeoutMs', 50, 60_000, 3000),
  /** Directory the CNC's program memory is reported under (cnc_rdprogdir3 has no directories). */
  programDir: z
    .string({ error: 'programDir must be a string such as //CNC_MEM/USER/PATH1/' })
    .regex(/^\/\/[^/]+\/.*\/$/, { error: 'programDir must look like //CNC_MEM/USER/PATH1/ (start with //, end with /)' })
    .default('//CNC_MEM/USER/PATH1/'),
  /** Restricts the declared families, e.g. for a CNC without the tool life management option. */
  families: z
    .array(z.enum(FOCAS_FAMILIES, { error: `families entries must be one of ${FOCAS_FAMILIES.join(', ')}` }), {
      error: `families must be a list of ${FOCAS_FAMILIES.join(', ')}`,
    })
    .min(1, { error: 'families must list at least one family' })
    .optional(),
});

/** Parsed focas options (defaults applied). */
export type FocasOptions = z.output<typeof focasOptionsSchema>;
/** Focas options as written in a machine config. */
export type FocasOptionsInput = z.input<typeof focasOptionsSchema>;

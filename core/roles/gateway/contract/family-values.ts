/**
 * What a driver reads for each item family (core/driver-seam/driver.ts `FamilyValues`)
 * as zod schemas: the live reads' answers are made of them, and the drivers'
 * conformance suite checks every driver's values against them. The type
 * checks below keep these schemas equal to the TypeScript shapes.
 */
import { z } from 'zod';
import { ACTIVE_ALARM_LEVELS, ALARM_LEVELS, EXECUTION_STATES, OPERATING_MODES, type FamilyValues, type ReadableFamily } from '../../../driver-seam/driver.js';

type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;

const number = z.number();
const text = z.string();

const status = z.strictObject({
  cncStatus: text,
  adjustedStatus: z.enum(EXECUTION_STATES),
  alarmStatus: z.boolean(),
  alarmLevel: z.enum(ALARM_LEVELS),
  mode: z.enum(OPERATING_MODES),
  programStatus: z.enum(['running', 'stopped', 'hold', 'none']),
  emergency: z.boolean(),
  program: text.optional(),
  time: number.describe('controller time of the sample, unix ms'),
});

const alarm = z.array(z.strictObject({ code: text, message: text, level: z.enum(ACTIVE_ALARM_LEVELS), since: number }));

const position = z.array(z.strictObject({
  axis: text, absolute: number, machine: number, relative: number, distanceToGo: number, unit: z.enum(['mm', 'inch', 'deg']),
}));

const load = z.array(z.strictObject({ name: text, loadPercent: number }));

const feedAndSpindle = z.strictObject({ feedRate: number, feedOverride: number, spindleSpeed: number, spindleOverride: number, rapidOverride: number });

const toolNumber = z.strictObject({ toolNumber: number, offsetNumber: number.optional() });

const timeData = z.strictObject({ powerOnTime: number, operatingTime: number, cuttingTime: number, cycleTime: number });

const count = z.strictObject({
  partCount: number, partsRequired: number.optional(), partsTotal: number, lastCycleTime: number.optional(), program: text.optional(),
});

const toolLife = z.array(z.strictObject({
  toolNum: number, groupNum: number, offsetNum: number, used: number, limit: number, unit: z.enum(['count', 'minutes']), remainingPercent: number,
}));

const programList = z.array(z.strictObject({ dir: text, name: text, size: number, modified: number.optional(), comment: text.optional() }));

const currentProgram = z.strictObject({ dir: text, name: text, content: z.instanceof(Buffer), block: number.optional() });

type Shapes = { [F in ReadableFamily]: z.ZodType<FamilyValues[F]> };

/** Each readable family's value shape. */
export const FAMILY_VALUES = {
  status, alarm, position, load, feedAndSpindle, toolNumber, timeData, count, toolLife, programList, currentProgram,
} satisfies Shapes;

// And the other way round: every value of the TypeScript shape passes its schema's types, and
// each schema has exactly the fields of its shape, optional ones included.
type Outputs = { [F in ReadableFamily]: z.output<(typeof FAMILY_VALUES)[F]> };
type Fields<T> = T extends readonly (infer E)[] ? keyof E : keyof T;
type FieldsMatch = { [F in ReadableFamily]: Same<Fields<Outputs[F]>, Fields<FamilyValues[F]>> }[ReadableFamily];
const sameShapes: Same<Outputs, FamilyValues> = true;
const sameFields: Same<FieldsMatch, true> = true;
void sameShapes;
void sameFields;

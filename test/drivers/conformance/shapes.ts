/**
 * The shape of each family's value (core/driver.ts `FamilyValues`) as zod
 * schemas, so the conformance suite can check what a driver returns at run
 * time: no field missing or of another kind, no field the shape does not
 * have, words only from the normalised sets. The type checks below keep
 * these schemas equal to the TypeScript shapes.
 */
import { z } from 'zod';
import {
  ACTIVE_ALARM_LEVELS, ALARM_LEVELS,
  type ExecutionState, type FamilyValues, type OperatingMode, type ReadableFamily,
} from '../../../core/driver.js';

const EXECUTION_STATES = ['RUNNING', 'HOLD', 'STOPPED', 'RESET', 'EMERGENCY'] as const satisfies readonly ExecutionState[];
const OPERATING_MODES = ['AUTO', 'MDI', 'MANUAL', 'JOG', 'HANDLE', 'EDIT', 'REF', 'REMOTE', 'UNKNOWN'] as const satisfies readonly OperatingMode[];

type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
// Every word of the types is listed: these fail to compile when core/driver.ts gains one.
const everyState: Same<(typeof EXECUTION_STATES)[number], ExecutionState> = true;
const everyMode: Same<(typeof OPERATING_MODES)[number], OperatingMode> = true;
void everyState;
void everyMode;

const number = z.number();
const text = z.string();

const status = z
  .strictObject({
    cncStatus: text,
    adjustedStatus: z.enum(EXECUTION_STATES),
    alarmStatus: z.boolean(),
    alarmLevel: z.enum(ALARM_LEVELS),
    mode: z.enum(OPERATING_MODES),
    programStatus: z.enum(['running', 'stopped', 'hold', 'none']),
    emergency: z.boolean(),
    program: text.optional(),
    time: number,
  })
  // An engaged emergency stop reads the same through every driver (docs/derived-states.md, "Emergency stop").
  .refine((s) => !s.emergency || (s.adjustedStatus === 'EMERGENCY' && s.alarmLevel === 'emergency' && s.alarmStatus), {
    error: 'an engaged emergency stop must read adjustedStatus EMERGENCY, alarmLevel emergency and alarmStatus true',
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
export const FAMILY_SHAPES = {
  status, alarm, position, load, feedAndSpindle, toolNumber, timeData, count, toolLife, programList, currentProgram,
} satisfies Shapes;

// And the other way round: every value of the TypeScript shape passes its schema's types, and
// each schema has exactly the fields of its shape, optional ones included.
type Outputs = { [F in ReadableFamily]: z.output<(typeof FAMILY_SHAPES)[F]> };
type Fields<T> = T extends readonly (infer E)[] ? keyof E : keyof T;
type FieldsMatch = { [F in ReadableFamily]: Same<Fields<Outputs[F]>, Fields<FamilyValues[F]>> }[ReadableFamily];
const sameShapes: Same<Outputs, FamilyValues> = true;
const sameFields: Same<FieldsMatch, true> = true;
void sameShapes;
void sameFields;

/** Every family a client can be asked to read. */
export const READABLE_FAMILIES = Object.keys(FAMILY_SHAPES) as ReadableFamily[];

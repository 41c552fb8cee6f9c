/**
 * Answers of the gateway's fleet interfaces, shared by several entries of the
 * contract (contract/): the machine and group lists, the fleet snapshot's
 * entries, the running program and the error log. The schemas are what the
 * OpenAPI document shows; the test suite checks every answer against them.
 */
import { z } from 'zod';
import { isBase64, ProgramBytes } from '../../values/program-bytes.js';
import { FAMILY_VALUES } from './contract/family-values.js';
import { CONNECTION_STATES, DERIVED_STATES } from './fleet/derive-state.js';
import { MACHINE_TASK_CLASSES, groupConfigSchema, machineConfigSchema, machineIdSchema } from './machine-config.js';

/** A machine as GET /api/config/machines lists it: credentials replaced by whether each is set, and who manages it. */
export const listedMachineSchema = machineConfigSchema.omit({ password: true, fileServerPassword: true }).extend({
  passwordSet: z.boolean(),
  fileServerPasswordSet: z.boolean(),
  managedBy: z.enum(['config', 'api']).describe('config: the config file names the machine, and the next start replaces edits made through the API'),
});
export type ListedMachine = z.output<typeof listedMachineSchema>;

/** A CNCStatus sample: the driver's status family (contract/family-values.ts). */
export const cncStatusSchema = FAMILY_VALUES.status;

const statusSampleSchema = z.strictObject({
  status: cncStatusSchema,
  alarms: FAMILY_VALUES.alarm,
});

const shortfallSchema = z.strictObject({ errorCode: z.number().int(), errorMsg: z.string() }).describe('why there is no usable sample: inactive, task disabled, the latest attempt failed, or none yet');

/** A CNCStatus entry of batchReadTaskData: the cached sample with the derived state. */
export const statusEntrySchema = z.strictObject({
  machineID: z.string(),
  type: z.literal('CNCStatus'),
  time: z.number().nullable().describe('when the sample was taken, unix ms'),
  data: statusSampleSchema.nullable(),
  error: shortfallSchema.nullable(),
  state: z.enum(DERIVED_STATES),
  reason: z.string(),
  statusStale: z.boolean(),
});
export type StatusEntry = z.output<typeof statusEntrySchema>;

/** A batchReadTaskData entry of a class other than CNCStatus: its cached sample as the class gives it. */
export const otherTaskEntrySchema = z.strictObject({
  machineID: z.string(),
  type: z.enum(MACHINE_TASK_CLASSES.filter((c) => c !== 'CNCStatus') as [Exclude<(typeof MACHINE_TASK_CLASSES)[number], 'CNCStatus'>, ...Exclude<(typeof MACHINE_TASK_CLASSES)[number], 'CNCStatus'>[]]),
  time: z.number().nullable().describe('when the sample was taken, unix ms'),
  data: z.unknown().describe('the cached sample of the class (docs/api.md, "Task data")'),
  error: shortfallSchema.nullable(),
});
export const taskDataEntrySchema = z.discriminatedUnion('type', [statusEntrySchema, otherTaskEntrySchema]);
export type TaskDataEntry = z.output<typeof taskDataEntrySchema>;

/** A batchReadErrors entry: connection health and the latest error of each task. */
export const healthEntrySchema = z.strictObject({
  machineID: z.string(),
  connection: z.strictObject({
    state: z.enum(CONNECTION_STATES),
    since: z.number().nullable(),
    attempts: z.number().int(),
    errorCode: z.number().int(),
    error: z.string().nullable(),
  }),
  tasks: z.partialRecord(z.enum(MACHINE_TASK_CLASSES), z.strictObject({ errorCode: z.number().int(), errorMsg: z.string(), at: z.number() })),
});
export type HealthEntry = z.output<typeof healthEntrySchema>;

/** The answer with `sinceRevision`: the entries changed after it. */
const changesSchema = <E extends z.ZodType>(entry: E) =>
  z
    .strictObject({
      revision: z.number().int().describe('the fleet revision of this answer: pass it as sinceRevision next time'),
      full: z.boolean().describe('true: entries holds every machine asked for, and the caller replaces what it holds (the revision given is too old, or from an earlier run of the gateway)'),
      entries: z.array(entry).describe('the entries of the machines changed after sinceRevision (every machine when full)'),
      removed: z.array(machineIdSchema).describe('machines removed after sinceRevision'),
    })
    .describe('with sinceRevision');

export const batchReadTaskDataOutput = z.union([z.array(taskDataEntrySchema), changesSchema(statusEntrySchema)]);
export const batchReadErrorsOutput = z.union([z.array(healthEntrySchema), changesSchema(healthEntrySchema)]);
export type Changes<E> = { revision: number; full: boolean; entries: E[]; removed: string[] };

/**
 * Program bytes: ProgramBytes in the process, base64 text in JSON. Parsing an
 * answer read over HTTP turns the text into ProgramBytes, so both links hand
 * their callers the same type.
 */
export const programBytesOutput = z
  .custom<ProgramBytes | string>((v) => v instanceof ProgramBytes || (typeof v === 'string' && isBase64(v)), { error: 'expected program bytes (base64 in JSON)' })
  .transform((v) => (v instanceof ProgramBytes ? v : new ProgramBytes(Buffer.from(v, 'base64'))))
  .meta({ type: 'string', contentEncoding: 'base64', description: 'the program\'s bytes, as base64' } as Record<string, unknown>);

export const currentProgramOutput = z.strictObject({
  machineID: z.string(),
  readAt: z.number().describe('unix ms'),
  dir: z.string(),
  name: z.string(),
  block: z.number().optional().describe('the block being executed, when known'),
  content: z.string().optional(),
  encoding: z.enum(['utf-8', 'windows-1252']).optional(),
  contentBase64: programBytesOutput,
  size: z.number().int(),
  sha256: z.string(),
});

/** A resolved time window: unix seconds, ISO text in the gateway's zone, and the zone. */
export const timeWindowSchema = z.strictObject({ startUnix: z.number().int(), endUnix: z.number().int(), start: z.string(), end: z.string(), timeZone: z.string() });

export const errorLogOutput = z.strictObject({
  window: timeWindowSchema,
  total: z.number().int(),
  returned: z.number().int(),
  truncated: z.boolean(),
  data: z.array(
    z.strictObject({
      time: z.number().describe('unix ms'),
      path: z.string(),
      errorCode: z.number().int(),
      errorName: z.string(),
      errorMsg: z.string(),
      user: z.string().nullable(),
      sourceIp: z.string().nullable(),
      correlationId: z.string().optional(),
    }),
  ),
});

export const machineListOutput = z.array(listedMachineSchema);
export const groupListOutput = z.array(groupConfigSchema);

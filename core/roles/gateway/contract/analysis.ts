/** The gateway's analysis interfaces: OEE, alarm, count, cycle and overall figures of a machine or a group over a window (docs/analysis.md). */
import { z } from 'zod';
import { defineEntry, queryBool, queryInt } from '../../../interfaces/registry.js';
import { TIME_PARAM_FORMS, TIME_PARAM_SUMMARY } from '../../../interfaces/time-params.js';
import { timeWindowSchema } from '../api-outputs.js';
import { groupIdSchema, machineIdSchema } from '../machine-config.js';

/** What an analysis computes. */
export const ANALYSIS_KINDS = ['oee', 'alarm', 'count', 'cycle', 'overall'] as const;

/** The longest window an analysis reads, in days (exclusive). */
export const MAX_WINDOW_DAYS = 31;

// The form of start/end is checked by resolveWindow in the handler, after the machine or group: an unknown
// machineID answers 10003 whatever the window, like every other interface.
const timeInput = z.union([z.string(), z.number()], { error: `expected one time value; accepted: ${TIME_PARAM_FORMS}` });

const commonInput = {
  kind: z.enum(ANALYSIS_KINDS).describe('oee, alarm, count, cycle or overall (see docs/analysis.md)'),
  start: timeInput.describe(`window start, required: ${TIME_PARAM_SUMMARY}`),
  end: timeInput.optional().describe(`window end (exclusive), default now; the window must be shorter than ${MAX_WINDOW_DAYS} days`),
  interval: queryInt()
    .min(1)
    .max(MAX_WINDOW_DAYS * 86_400)
    .optional()
    .describe('split the window into sub-windows of this many seconds, counted from start (at most 1,000 sub-windows)'),
  enableCountPerProgram: queryBool().optional().describe('count and overall: split the part count by program'),
};

const figures = z.looseObject({}).describe('the figures of the kind, by sub-window when interval is given (docs/analysis.md, one section per kind)');

export const ANALYSIS = {
  machine: defineEntry({
    path: '/api/analysis/machine',
    method: 'GET',
    summary:
      'Analysis of one machine’s history over a window shorter than 31 days: kind oee (availability × performance × quality), alarm (counts, durations, top alarms, MTBF, MTTR), count (parts), cycle (cycle-time statistics) or overall (time per state and SEMI E10 bucket plus all of these). `interval` splits the window into sub-windows whose figures add up to the whole.',
    tags: ['analysis'],
    input: z
      .object({ ...commonInput, machineID: machineIdSchema.describe('the machine; GET /api/config/machines lists them') })
      .strict(),
    output: z.strictObject({ kind: z.enum(ANALYSIS_KINDS), machineID: z.string(), window: timeWindowSchema, data: figures }),
    errors: ['GENERAL_MACHINE_ID_NOT_EXISTED'],
  }),
  group: defineEntry({
    path: '/api/analysis/group',
    method: 'GET',
    summary:
      'The same analysis for a group as if it were one machine: its members’ times and counts added per sub-window and the ratios recomputed from the sums, each member’s own figures under members, and members without data in the window (or inactive) under membersWithoutData.',
    tags: ['analysis'],
    input: z
      .object({ ...commonInput, groupID: groupIdSchema.describe('the group; GET /api/config/groups lists them') })
      .strict(),
    output: z.strictObject({ kind: z.enum(ANALYSIS_KINDS), groupID: z.string(), window: timeWindowSchema, data: figures }),
    errors: ['GENERAL_GROUP_ID_NOT_EXISTED'],
  }),
};

/** The gateway's history interfaces: one machine's or group's rows, the free-form query, and retention (docs/history.md). */
import { z } from 'zod';
import { defineEntry, queryBool, queryInt, queryList } from '../../../interfaces/registry.js';
import { TIME_PARAM_SUMMARY } from '../../../interfaces/time-params.js';
import { timeWindowSchema } from '../api-outputs.js';
import { HISTORY_CLASSES } from '../fleet/machine-history.js';
import { FILTER_FIELDS_TEXT, FILTER_OPERATORS, filterProblem, isProjectionField, MAX_LIST_VALUES, PROJECTION_FIELDS_TEXT, type HistoryFilter } from '../history/query.js';
import { groupIdSchema, machineIdSchema } from '../machine-config.js';

/**
 * A start/end value. Its form is checked by resolveWindow in the handler, after the machine or group,
 * so that an unknown machineID answers 10003 whatever the window, as on every other interface.
 */
export const timeInput = z.union([z.string(), z.number()], { error: `expected a string or a number: ${TIME_PARAM_SUMMARY}` });

const readInputShape = {
  type: z
    .string()
    .min(1)
    .max(64)
    .describe(`data class: ${HISTORY_CLASSES.join(', ')}, or another class recorded for the machine; an unknown class lists the valid ones`),
  start: timeInput.describe(`window start (inclusive), required: ${TIME_PARAM_SUMMARY}`),
  end: timeInput.optional().describe(`window end (exclusive), default now: ${TIME_PARAM_SUMMARY}`),
  limit: queryInt().min(0).default(200).describe('rows to return at most (default 200; 0 = no limit: the answer is then as large as its rows)'),
  newestFirst: queryBool().default(false).describe('true: the most recent rows first; default false: oldest first'),
  afterSeq: queryInt()
    .min(0)
    .optional()
    .describe('only rows recorded after this seq; to continue an oldest-first answer that reached its limit, pass the seq of its last row'),
};

/** Tables the query interface reads; nothing else in the database is reachable through it. */
export const QUERY_TABLES = ['history'] as const;
export const MAX_FILTERS = 10;
export const MAX_FIELDS = 20;

const WHERE_FORM = `a JSON array of up to ${MAX_FILTERS} {field, op, value}, e.g. [{"field":"data.state","op":"=","value":"alarm"}]`;

const filterSchema = z
  .object({
    field: z.string().max(200).describe(`accepted: ${FILTER_FIELDS_TEXT}`),
    op: z.string().max(16).describe(`accepted: ${FILTER_OPERATORS.join(', ')}`),
    value: z.union([
      z.string().max(1024),
      z.number(),
      z.boolean(),
      z.null(),
      z.array(z.union([z.string().max(1024), z.number(), z.boolean()])).max(MAX_LIST_VALUES),
    ]),
  })
  .strict()
  .superRefine((filter, issues) => {
    const problem = filterProblem(filter as HistoryFilter);
    if (problem) issues.addIssue({ code: 'custom', path: [problem.key], input: filter[problem.key], message: problem.accepted });
  });

/** A query string carries `where` as JSON text; a JSON body or an internal call passes the array itself. */
function parseJsonText(value: unknown): unknown {
  if (typeof value !== 'string') return value;
  try {
    return JSON.parse(value) as unknown;
  } catch {
    return value;
  }
}

export const dbQueryInput = z
  .object({
    table: z.enum(QUERY_TABLES).default('history').describe('the table to read; only history'),
    machineIDs: queryList(machineIdSchema)
      .pipe(z.array(z.string()).max(1000))
      .optional()
      .describe('machines to read, comma-separated; default: every machine with history (deleted machines included)'),
    classes: queryList(z.string().min(1).max(64))
      .pipe(z.array(z.string()).max(100))
      .optional()
      .describe('data classes, comma-separated; default: every class recorded'),
    start: timeInput.describe(`window start (inclusive), required: ${TIME_PARAM_SUMMARY}`),
    end: timeInput.optional().describe(`window end (exclusive), default now: ${TIME_PARAM_SUMMARY}`),
    where: z
      .preprocess(parseJsonText, z.array(filterSchema, { error: `expected ${WHERE_FORM}` }).max(MAX_FILTERS))
      .optional()
      .describe(`conditions, all of which a row must meet. In a query string: ${WHERE_FORM} (JSON, not comma-separated). Fields: ${FILTER_FIELDS_TEXT}. Ops: ${FILTER_OPERATORS.join(', ')}`),
    fields: queryList(z.string().max(200).refine(isProjectionField, { message: `accepted: ${PROJECTION_FIELDS_TEXT}` }))
      .pipe(z.array(z.string()).max(MAX_FIELDS))
      .optional()
      .describe(`what each row carries besides seq, time and timeText; default machineID, class, data. Accepted: ${PROJECTION_FIELDS_TEXT}`),
    order: z.enum(['asc', 'desc']).default('asc').describe('by time: asc = oldest first (default), desc = newest first'),
    limit: queryInt().min(0).default(200).describe('rows to return at most (default 200; 0 = no limit)'),
    afterSeq: queryInt().min(0).optional().describe('only rows recorded after this seq'),
  })
  .strict();

const order = z.enum(['oldestFirst', 'newestFirst']);
const historyRow = z.strictObject({
  seq: z.number().int(),
  time: z.number().describe('unix ms'),
  timeText: z.string().describe('the time in the gateway time zone, ISO 8601 with its offset'),
  data: z.unknown().describe('the row as the data class recorded it; null when none'),
});
const readAnswer = { window: timeWindowSchema, order, count: z.number().int(), limitReached: z.boolean().describe('more rows existed than limit') };

const retentionLimits = z.strictObject({ maxAgeDays: z.number(), maxRows: z.number().int() });

export const HISTORY = {
  machine: defineEntry({
    path: '/api/history/machine',
    method: 'GET',
    summary:
      'History rows of one machine and data class over [start, end): oldest first (newestFirst=true for the most recent; it needs authorisation for /api/db/query too, as query_history does), at most `limit` (default 200, 0 = all); limitReached tells that more rows existed. Inactive machines keep their history readable.',
    tags: ['history'],
    input: z
      .object({ machineID: machineIdSchema.describe('the machine; GET /api/config/machines lists them'), ...readInputShape })
      .strict(),
    output: z.strictObject({ type: z.string(), machineID: z.string(), ...readAnswer, data: z.array(historyRow) }),
    errors: ['GENERAL_MACHINE_ID_NOT_EXISTED'],
  }),
  group: defineEntry({
    path: '/api/history/group',
    method: 'GET',
    summary:
      'History rows of one data class for every member machine of a group, merged in time order, each with its machineID; `limit` applies to the merged answer. Same inputs and answer as /api/history/machine.',
    tags: ['history'],
    input: z.object({ groupID: groupIdSchema.describe('the group; GET /api/config/groups lists them'), ...readInputShape }).strict(),
    output: z.strictObject({ type: z.string(), groupID: z.string(), machineIDs: z.array(z.string()), ...readAnswer, data: z.array(historyRow.extend({ machineID: z.string() })) }),
    errors: ['GENERAL_GROUP_ID_NOT_EXISTED'],
  }),
  query: defineEntry({
    path: '/api/db/query',
    method: 'GET',
    summary:
      'Free-form, read-only history query: machines, classes, a time window, conditions on seq, machineID, class and data.<path> fields, a projection, time order (asc/desc) and a limit. A structured request, never SQL; see docs/history.md.',
    tags: ['history'],
    input: dbQueryInput,
    output: z.strictObject({
      table: z.enum(QUERY_TABLES),
      machineIDs: z.array(z.string()),
      classes: z.array(z.string()).nullable(),
      window: timeWindowSchema,
      order: z.enum(['asc', 'desc']),
      count: z.number().int(),
      limitReached: z.boolean(),
      data: z.array(z.looseObject({ seq: z.number().int(), time: z.number(), timeText: z.string() }).describe('and the fields asked for: machineID, class, data, data.<path>')),
    }),
    errors: ['GENERAL_MACHINE_ID_NOT_EXISTED'],
  }),
  retention: defineEntry({
    path: '/api/history/retention',
    method: 'GET',
    summary:
      'The history retention policy (maxAgeDays and maxRows per data class, else the default; 0 = no limit), the interval, the next run and the last run: when, how long, rows deleted per class.',
    tags: ['history'],
    input: z.object({}).strict(),
    output: z.strictObject({
      policy: z.strictObject({ intervalSec: z.number(), default: retentionLimits, classes: z.record(z.string(), retentionLimits) }),
      batchRows: z.number().int(),
      running: z.boolean(),
      nextRunAtMs: z.number().nullable(),
      nextRunAt: z.string().nullable(),
      lastRun: z
        .strictObject({
          startedAtMs: z.number(),
          finishedAtMs: z.number(),
          durationMs: z.number(),
          deleted: z.record(z.string(), z.strictObject({ byAge: z.number().int(), byRows: z.number().int() })),
          totalDeleted: z.number().int(),
          batches: z.number().int(),
          interrupted: z.boolean(),
          startedAt: z.string(),
          finishedAt: z.string(),
          error: z.string().nullable(),
        })
        .nullable(),
    }),
    errors: [],
  }),
};

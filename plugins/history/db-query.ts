/**
 * GET /api/db/query: the free-form historical query interface (the one the
 * MCP tool query_history uses with newestFirst, GW-65). It is read-only by
 * construction: the request is a structure, not SQL; the builder in
 * core/roles/gateway/history/query.ts turns it into a parameterised SELECT over
 * whitelisted tables, columns, operators and JSON paths; and the statement
 * runs on the database's read-only (query_only) connection.
 */
import { z } from 'zod';
import { machineIdSchema } from '../../core/roles/gateway/machine-config.js';
import type { GatewayContext } from '../../core/roles/gateway/context.js';
import { GatewayError, quoteList } from '../../core/errors.js';
import { queryInt, queryList } from '../../core/interfaces.js';
import { hasHistory, historyClasses, historyMachineIDs } from '../../core/roles/gateway/history/catalog.js';
import {
  FILTER_FIELDS_TEXT,
  FILTER_OPERATORS,
  filterProblem,
  isDataPath,
  isProjectionField,
  MAX_LIST_VALUES,
  PROJECTION_FIELDS_TEXT,
  type HistoryFilter,
} from '../../core/roles/gateway/history/query.js';
import { readHistoryPage, type HistoryReadSpec, type StoredHistoryRow } from '../../core/roles/gateway/history/stream.js';
import { TIME_PARAM_SUMMARY } from '../../core/time-params.js';
import { assertClasses } from './classes.js';
import { historyWindow, timeInput } from './history-reads.js';
import { timeTextFormatter } from './time-text.js';

/** Tables the query interface reads; nothing else in the database is reachable through it. */
export const QUERY_TABLES = ['history'] as const;
export const MAX_FILTERS = 10;
export const MAX_FIELDS = 20;
const DEFAULT_FIELDS = ['machineID', 'class', 'data'];

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

/** The machines to read: those asked for, each known to the store or to the history table; or all with history. */
async function queriedMachines(ctx: GatewayContext, machineIDs: readonly string[] | undefined): Promise<string[]> {
  if (!machineIDs) return historyMachineIDs(ctx.db);
  const unknown: string[] = [];
  for (const id of machineIDs) {
    if (!ctx.store.hasMachine(id) && !(await hasHistory(ctx.db, id))) unknown.push(id);
  }
  if (unknown.length) {
    throw new GatewayError('GENERAL_MACHINE_ID_NOT_EXISTED', `machineIDs: unknown ${quoteList(unknown)} (neither configured nor in the history)`);
  }
  return [...new Set(machineIDs)];
}

export function defineDbQueryInterface(ctx: GatewayContext): void {
  ctx.interfaces.define({
    path: '/api/db/query',
    method: 'GET',
    summary:
      'Free-form, read-only history query: machines, classes, a time window, conditions on seq, machineID, class and data.<path> fields, a projection, time order (asc/desc) and a limit. A structured request, never SQL; see docs/history.md.',
    tags: ['history'],
    input: dbQueryInput,
    handler: async (input) => {
      const machines = await queriedMachines(ctx, input.machineIDs);
      const { window, startMs, endMs } = historyWindow(ctx, input);
      if (input.classes) await assertClasses(ctx.db, 'classes', input.classes, machines);
      const sources: { machineID: string; cls: string }[] = [];
      for (const machineID of machines) {
        const classes = input.classes ? [...new Set(input.classes)] : await historyClasses(ctx.db, machineID);
        for (const cls of classes) sources.push({ machineID, cls });
      }
      const fields = [...new Set(input.fields ?? DEFAULT_FIELDS)];
      const dataPaths = fields.filter(isDataPath);
      const spec: HistoryReadSpec = {
        sources,
        startMs,
        endMs,
        order: input.order,
        afterSeq: input.afterSeq,
        filters: input.where as HistoryFilter[] | undefined,
        withData: fields.includes('data'),
        dataPaths,
      };
      const timeText = timeTextFormatter(ctx.timeZone);
      const toRow = (row: StoredHistoryRow): Record<string, unknown> => {
        const out: Record<string, unknown> = { seq: row.seq, time: row.ts, timeText: timeText(row.ts) };
        if (fields.includes('machineID')) out.machineID = row.machineID;
        if (fields.includes('class')) out.class = row.cls;
        if (row.data !== undefined) out.data = row.data;
        dataPaths.forEach((path, i) => {
          out[path] = row.paths?.[i] ?? null;
        });
        return out;
      };
      const page = await readHistoryPage(ctx.db, spec, input.limit, toRow);
      return {
        table: input.table,
        machineIDs: machines,
        classes: input.classes ?? null,
        window,
        order: input.order,
        count: page.rows.length,
        limitReached: page.limitReached,
        data: page.rows,
      };
    },
  });
}

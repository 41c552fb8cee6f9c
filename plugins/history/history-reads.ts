/**
 * Machine and group-machine history: the rows of one data class over a time
 * window, oldest first unless `newestFirst`, cut at `limit` (GW-60). The
 * group interface merges its members' rows into one time order. machineID and
 * groupID belong to separate interfaces, so they cannot be confused.
 */
import { z } from 'zod';
import { groupIdSchema, machineIdSchema } from '../../core/roles/gateway/machine-config.js';
import type { GatewayContext } from '../../core/roles/gateway/context.js';
import { GatewayError, quote } from '../../core/errors.js';
import { queryBool, queryInt, type CallContext } from '../../core/interfaces.js';
import { readHistoryPage, type HistoryReadSpec, type StoredHistoryRow } from '../../core/roles/gateway/history/stream.js';
import { resolveWindow, TIME_PARAM_SUMMARY, windowMs, type TimeWindow } from '../../core/time-params.js';
import { assertClasses, HISTORY_CLASSES } from './classes.js';
import { timeTextFormatter } from './time-text.js';

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

type ReadInput = z.output<z.ZodObject<typeof readInputShape>>;

/** The interface whose permission newest-first reads need (GW-65). */
export const NEWEST_FIRST_PERMISSION = '/api/db/query';

/**
 * One rule for newest-first history, whichever way it is asked for: it is a
 * free-form query, so the caller must be authorised for /api/db/query (GW-65
 * says so for the MCP tool, which calls that interface; the HTTP history
 * interfaces apply the same check themselves).
 */
function authorizeNewestFirst(ctx: GatewayContext, call: CallContext): void {
  const query = ctx.interfaces.get(NEWEST_FIRST_PERMISSION);
  if (!query) return;
  try {
    ctx.interfaces.accessPolicy.authorize(call.principal, query);
  } catch (err) {
    if (err instanceof GatewayError && err.errorName === 'FORBIDDEN') {
      throw new GatewayError('FORBIDDEN', `newestFirst=true is a query through ${NEWEST_FIRST_PERMISSION}, which is not in the authorised API list of '${call.principal.username ?? ''}'; read oldest first, or ask an administrator for ${NEWEST_FIRST_PERMISSION}`);
    }
    throw err;
  }
}

/** The window of a history read: [start, end); without `end`, everything recorded up to this moment. */
export function historyWindow(ctx: GatewayContext, input: { start: string | number; end?: string | number | undefined }): {
  window: TimeWindow;
  startMs: number;
  endMs: number;
} {
  const now = ctx.now();
  const window = resolveWindow({ start: input.start, ...(input.end === undefined ? {} : { end: input.end }) }, { timeZone: ctx.timeZone, now, requireStart: true });
  const { startMs, endMs } = windowMs(window);
  // The window object shows whole seconds; the rows of the current second still belong to "now".
  return { window, startMs, endMs: input.end === undefined ? now + 1 : endMs };
}

/** Rows as answered: time in unix ms and as ISO text in the gateway zone, data parsed. */
function rowMapper(ctx: GatewayContext, withMachine: boolean): (row: StoredHistoryRow) => Record<string, unknown> {
  const timeText = timeTextFormatter(ctx.timeZone);
  return (row) => ({
    seq: row.seq,
    ...(withMachine ? { machineID: row.machineID } : {}),
    time: row.ts,
    timeText: timeText(row.ts),
    data: row.data ?? null,
  });
}

async function readClass(ctx: GatewayContext, call: CallContext, machineIDs: readonly string[], input: ReadInput, withMachine: boolean) {
  if (input.newestFirst) authorizeNewestFirst(ctx, call);
  const { window, startMs, endMs } = historyWindow(ctx, input);
  await assertClasses(ctx.db, 'type', [input.type], machineIDs);
  const spec: HistoryReadSpec = {
    sources: machineIDs.map((machineID) => ({ machineID, cls: input.type })),
    startMs,
    endMs,
    order: input.newestFirst ? 'desc' : 'asc',
    afterSeq: input.afterSeq,
    withData: true,
  };
  const page = await readHistoryPage(ctx.db, spec, input.limit, rowMapper(ctx, withMachine));
  return {
    window,
    order: input.newestFirst ? ('newestFirst' as const) : ('oldestFirst' as const),
    count: page.rows.length,
    limitReached: page.limitReached,
    data: page.rows,
  };
}

export function defineHistoryReadInterfaces(ctx: GatewayContext): void {
  ctx.interfaces.define({
    path: '/api/history/machine',
    method: 'GET',
    summary:
      'History rows of one machine and data class over [start, end): oldest first (newestFirst=true for the most recent; it needs authorisation for /api/db/query too, as query_history does), at most `limit` (default 200, 0 = all); limitReached tells that more rows existed. Inactive machines keep their history readable.',
    tags: ['history'],
    input: z
      .object({ machineID: machineIdSchema.describe('the machine; GET /api/config/machines lists them'), ...readInputShape })
      .strict(),
    handler: async (input, call) => {
      // History outlives activity: an inactive machine's rows stay readable; only an unknown machineID is refused.
      if (!ctx.store.hasMachine(input.machineID)) {
        throw new GatewayError('GENERAL_MACHINE_ID_NOT_EXISTED', `machineID ${quote(input.machineID)} does not exist`);
      }
      const answer = await readClass(ctx, call, [input.machineID], input, false);
      return { type: input.type, machineID: input.machineID, ...answer };
    },
  });

  ctx.interfaces.define({
    path: '/api/history/group',
    method: 'GET',
    summary:
      'History rows of one data class for every member machine of a group, merged in time order, each with its machineID; `limit` applies to the merged answer. Same inputs and answer as /api/history/machine.',
    tags: ['history'],
    input: z.object({ groupID: groupIdSchema.describe('the group; GET /api/config/groups lists them'), ...readInputShape }).strict(),
    handler: async (input, call) => {
      const group = ctx.store.getGroup(input.groupID);
      const answer = await readClass(ctx, call, group.machineIDs, input, true);
      return { type: input.type, groupID: input.groupID, machineIDs: group.machineIDs, ...answer };
    },
  });
}

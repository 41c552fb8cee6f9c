/**
 * Machine and group-machine history: the rows of one data class over a time
 * window, oldest first unless `newestFirst`, cut at `limit` (GW-60). The
 * group interface merges its members' rows into one time order. machineID and
 * groupID belong to separate interfaces, so they cannot be confused.
 */
import { z } from 'zod';
import { HISTORY } from '../../core/roles/gateway/contract/history.js';
import type { GatewayContext } from '../../core/roles/gateway/context.js';
import { GatewayError, quote } from '../../core/interfaces/errors.js';
import type { CallContext } from '../../core/interfaces/registry.js';
import { readHistoryPage, type HistoryReadSpec, type StoredHistoryRow } from '../../core/roles/gateway/history/stream.js';
import { resolveWindow, windowMs, type TimeWindow } from '../../core/interfaces/time-params.js';
import { assertClasses } from './classes.js';
import { timeTextFormatter } from './time-text.js';

type ReadInput = Omit<z.output<typeof HISTORY.machine.input>, 'machineID'>;

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

/** Rows as answered: time in unix ms and as ISO text in the gateway zone, data parsed; a group's rows name their machine. */
function rowMapper(ctx: GatewayContext) {
  const timeText = timeTextFormatter(ctx.timeZone);
  const row = (r: StoredHistoryRow) => ({ seq: r.seq, time: r.ts, timeText: timeText(r.ts), data: r.data ?? null });
  return { row, withMachine: (r: StoredHistoryRow) => ({ seq: r.seq, machineID: r.machineID, time: r.ts, timeText: timeText(r.ts), data: r.data ?? null }) };
}

async function readClass<R>(ctx: GatewayContext, call: CallContext, machineIDs: readonly string[], input: ReadInput, toRow: (row: StoredHistoryRow) => R) {
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
  const page = await readHistoryPage(ctx.db, spec, input.limit, toRow);
  return {
    window,
    order: input.newestFirst ? ('newestFirst' as const) : ('oldestFirst' as const),
    count: page.rows.length,
    limitReached: page.limitReached,
    data: page.rows,
  };
}

export function defineHistoryReadInterfaces(ctx: GatewayContext): void {
  ctx.interfaces.implement(HISTORY.machine, {
    handler: async (input, call) => {
      // History outlives activity: an inactive machine's rows stay readable; only an unknown machineID is refused.
      if (!ctx.store.hasMachine(input.machineID)) {
        throw new GatewayError('GENERAL_MACHINE_ID_NOT_EXISTED', `machineID ${quote(input.machineID)} does not exist`);
      }
      const answer = await readClass(ctx, call, [input.machineID], input, rowMapper(ctx).row);
      return { type: input.type, machineID: input.machineID, ...answer };
    },
  });

  ctx.interfaces.implement(HISTORY.group, {
    handler: async (input, call) => {
      const group = ctx.store.getGroup(input.groupID);
      const answer = await readClass(ctx, call, group.machineIDs, input, rowMapper(ctx).withMachine);
      return { type: input.type, groupID: input.groupID, machineIDs: group.machineIDs, ...answer };
    },
  });
}

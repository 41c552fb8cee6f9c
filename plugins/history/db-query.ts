/**
 * GET /api/db/query: the free-form historical query interface (the one the
 * MCP tool query_history uses with newestFirst, GW-65). It is read-only by
 * construction: the request is a structure, not SQL; the builder in
 * core/roles/gateway/history/query.ts turns it into a parameterised SELECT over
 * whitelisted tables, columns, operators and JSON paths; and the statement
 * runs on the database's read-only (query_only) connection.
 */
import type { GatewayContext } from '../../core/roles/gateway/context.js';
import { GatewayError, quoteList } from '../../core/interfaces/errors.js';
import { HISTORY } from '../../core/roles/gateway/contract/history.js';
import { hasHistory, historyClasses, historyMachineIDs } from '../../core/roles/gateway/history/catalog.js';
import { isDataPath, type HistoryFilter } from '../../core/roles/gateway/history/query.js';
import { readHistoryPage, type HistoryReadSpec, type StoredHistoryRow } from '../../core/roles/gateway/history/stream.js';
import { assertClasses } from './classes.js';
import { historyWindow } from './history-reads.js';
import { timeTextFormatter } from './time-text.js';

const DEFAULT_FIELDS = ['machineID', 'class', 'data'];

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
  ctx.interfaces.implement(HISTORY.query, {
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
      const toRow = (row: StoredHistoryRow) => {
        const out: { seq: number; time: number; timeText: string; [field: string]: unknown } = { seq: row.seq, time: row.ts, timeText: timeText(row.ts) };
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

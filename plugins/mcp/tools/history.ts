/** The tools over time windows: analyze and query_history. */
import { z } from 'zod';
import { ANALYSIS } from '../../../core/roles/gateway/contract/analysis.js';
import { CONFIGURATION } from '../../../core/roles/gateway/contract/configuration.js';
import { HISTORY } from '../../../core/roles/gateway/contract/history.js';
import { defineTool, defined, oneTarget, type ToolCaller, type ToolDefinition } from '../tool-runtime.js';
import { end, groupID, machineID, start } from './params.js';

export const HISTORY_TOOLS: readonly ToolDefinition[] = [
  defineTool({
    name: 'analyze',
    title: 'Analyze a time window',
    description:
      'Statistics over a time window (shorter than 31 days) for a machine or a group: kind oee, alarm, count, cycle or overall. interval (seconds) splits the window into sub-windows. Returns {kind, machineID or groupID, window, data}.',
    input: z
      .object({
        kind: z.enum(['oee', 'alarm', 'count', 'cycle', 'overall']).describe('oee, alarm, count, cycle or overall'),
        start,
        end,
        machineID: machineID.optional(),
        groupID: groupID.optional(),
        interval: z.number().int().min(60).optional().describe('sub-window length in seconds (optional)'),
        enableCountPerProgram: z.boolean().optional().describe('count only: split parts per program (default false)'),
      })
      .strict(),
    primary: ANALYSIS.machine,
    async run(input, caller) {
      const target = oneTarget(ANALYSIS.machine, input);
      const { machineID: _m, groupID: _g, ...rest } = input;
      const result = target.kind === 'machine'
        ? await caller.call(ANALYSIS.machine, defined({ ...rest, machineID: target.id }))
        : await caller.call(ANALYSIS.group, defined({ ...rest, groupID: target.id }));
      const { window, data } = result;
      return { kind: input.kind, [`${target.kind}ID`]: target.id, window, data };
    },
  }),
  defineTool({
    name: 'query_history',
    title: 'Query history',
    description:
      'Historical rows of a machine or of a group’s machines. Data classes include CNCStatus, AlarmLog, AlarmHistory, Count, OEE, State and Heartbeat. Oldest first by default; newestFirst=true returns the most recent rows. Returns {type, machineID or groupID, window, order, count, limitReached, data}.',
    input: z
      .object({
        type: z.string().min(1).max(64).describe('data class, e.g. CNCStatus, AlarmLog, AlarmHistory, Count, OEE, State, Heartbeat'),
        start,
        end,
        machineID: machineID.optional(),
        groupID: groupID.optional(),
        limit: z.number().int().min(0).default(200).describe('maximum rows (default 200; 0 = unlimited)'),
        newestFirst: z.boolean().default(false).describe('true returns the most recent rows first (default false)'),
      })
      .strict(),
    primary: HISTORY.machine,
    async run(input, caller) {
      const target = oneTarget(HISTORY.machine, input);
      if (input.newestFirst) return queryNewestFirst(caller, input, target);
      const window = { type: input.type, start: input.start, end: input.end, limit: input.limit };
      const result = target.kind === 'machine'
        ? await caller.call(HISTORY.machine, defined({ ...window, machineID: target.id }))
        : await caller.call(HISTORY.group, defined({ ...window, groupID: target.id }));
      // The answer starts with type and the machineID or groupID: the tool's own head.
      return result;
    },
  }),
];

/** newestFirst goes through the free-form query interface with fixed filters (GW-65). */
async function queryNewestFirst(
  caller: ToolCaller,
  input: { type: string; start: string | number; end?: string | number | undefined; limit: number },
  target: { kind: 'machine' | 'group'; id: string },
) {
  let machineIDs = [target.id];
  if (target.kind === 'group') {
    const group = await caller.call(CONFIGURATION.group, { groupID: target.id });
    machineIDs = group.machineIDs;
  }
  const result = await caller.call(HISTORY.query, defined({ table: 'history' as const, machineIDs, classes: [input.type], start: input.start, end: input.end, order: 'desc' as const, limit: input.limit }));
  const { window, count, limitReached, data } = result;
  return { type: input.type, [`${target.kind}ID`]: target.id, window, order: 'newestFirst', count, limitReached, data };
}

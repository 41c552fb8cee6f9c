/**
 * The 13 read-only MCP tools. Each is written against interface paths only;
 * the registry runs them with the caller's identity. Schemas are written for
 * an LLM: every parameter says its type, default, accepted values and where
 * its IDs come from.
 */
import { z } from 'zod';
import { GROUP_TASK_CLASSES, MACHINE_TASK_CLASSES, groupIdSchema, machineIdSchema } from '../../core/roles/gateway/machine-config.js';
import { GatewayError, quote } from '../../core/errors.js';
import { TIME_PARAM_SUMMARY, timeParamSchema } from '../../core/time-params.js';
import { defineTool, defined, oneTarget, ToolFailure, type ToolCaller, type ToolDefinition } from './tool-runtime.js';
import { fleetStatus } from './fleet-status.js';

const machineID = machineIdSchema.describe('machineID from list_machines');
const groupID = groupIdSchema.describe('groupID from list_groups');
const start = timeParamSchema.describe(`Window start in the gateway time zone: ${TIME_PARAM_SUMMARY}`);
const end = timeParamSchema.optional().describe(`Window end (default now): ${TIME_PARAM_SUMMARY}`);

export const READ_MACHINE_ITEMS = {
  status: '/api/cnc/readCNCStatusDetails',
  alarm: '/api/cnc/readAlarm',
  position: '/api/cnc/readPosition',
  load: '/api/cnc/readLoad',
  feedAndSpindle: '/api/cnc/readFeedAndSpindle',
  toolNumber: '/api/cnc/readCurrentToolNumber',
  timeData: '/api/cnc/readTimeData',
  count: '/api/cnc/readCount',
} as const;
type ReadMachineItem = keyof typeof READ_MACHINE_ITEMS;
const ITEM_NAMES = Object.keys(READ_MACHINE_ITEMS) as [ReadMachineItem, ...ReadMachineItem[]];

export const SYSTEM_SECTIONS = {
  gateway: '/api/system/gateway-info',
  core: '/api/system/info',
  license: '/api/system/license-info',
  services: '/api/system/service-status',
  time: '/api/system/time-zone',
  hardware: '/api/system/hardware-resources',
} as const;

/** Fields of gateway information never returned through MCP (GW-14), whatever the interface gives. */
const HIDDEN_GATEWAY_FIELDS = ['accessToken'];

const ALL_CLASSES = [...MACHINE_TASK_CLASSES, ...GROUP_TASK_CLASSES] as const;

async function sections(caller: ToolCaller, paths: Record<string, string>) {
  const out: Record<string, unknown> = {};
  const errors: Record<string, string> = {};
  await Promise.all(
    Object.entries(paths).map(async ([key, path]) => {
      const r = await caller.section(path);
      if (r.ok) out[key] = r.data;
      else errors[key] = r.message;
    }),
  );
  return { out, errors };
}

/** list_machines answers by the machine list they were made from. */
const machineLists = new WeakMap<object, Readonly<{ count: number; machines: Record<string, unknown>[] }>>();

export const TOOLS: readonly ToolDefinition[] = [
  defineTool({
    name: 'list_machines',
    title: 'List machines',
    description: 'Identity of every machine: machineID, name, system, model, machineType, ip, port, isActive. Start here to get machineIDs.',
    input: z.object({}).strict(),
    primaryPath: '/api/config/machines',
    async run(_input, caller) {
      const machines = await caller.call<Record<string, unknown>[]>('/api/config/machines');
      // The interface hands out the same list until the fleet changes; so does this tool, frozen, so its text is reused.
      let listed = machineLists.get(machines);
      if (!listed) {
        const rows = machines.map((m) => ({
          machineID: m.machineID,
          name: m.name,
          system: m.system,
          model: m.model,
          machineType: m.machineType,
          ip: m.ip,
          port: m.port,
          isActive: m.isActive,
        }));
        listed = Object.freeze({ count: rows.length, machines: rows });
        machineLists.set(machines, listed);
      }
      return listed;
    },
  }),
  defineTool({
    name: 'list_groups',
    title: 'List groups',
    description: 'Every machine group with its member machineIDs. Use the groupID with get_fleet_status, read_task_data, analyze or query_history.',
    input: z.object({}).strict(),
    primaryPath: '/api/config/groups',
    async run(_input, caller) {
      const groups = await caller.call<Record<string, unknown>[]>('/api/config/groups');
      const rows = groups.map((g) => ({ groupID: g.groupID, name: g.name, isActive: g.isActive, machineIDs: g.machineIDs }));
      return { count: rows.length, groups: rows };
    },
  }),
  defineTool({
    name: 'get_machine',
    title: 'Get machine configuration',
    description: 'Full configuration of one machine (driver, tasks, intervals, connection policy), credentials excluded.',
    input: z.object({ machineID }).strict(),
    primaryPath: '/api/config/machine',
    run: (input, caller) => caller.body('/api/config/machine', input),
  }),
  defineTool({
    name: 'get_fleet_status',
    title: 'Fleet status',
    description:
      'Latest cached status and connection health of every machine, or of one group’s members, without contacting the machines. Per machine: connection, status, the derived state (running, idle, alarm, setup, offline, noData, inactive) with its reason, and statusStale; plus counts by state. Needs the CNCStatus task (machines without it show noData).',
    input: z.object({ groupID: groupID.optional().describe('groupID from list_groups; omit for all machines') }).strict(),
    primaryPath: '/api/task/batchReadTaskData',
    run: (input, caller) => fleetStatus(caller, input.groupID),
  }),
  defineTool({
    name: 'read_task_data',
    title: 'Read cached task data',
    description: `Latest cached sample of one data class, from the gateway's cache (no machine contact). Machine classes (with machineID): ${MACHINE_TASK_CLASSES.join(', ')}. Group classes (with groupID): ${GROUP_TASK_CLASSES.join(', ')}. Give exactly one of machineID or groupID.`,
    input: z
      .object({
        type: z.enum(ALL_CLASSES).describe(`Data class. Machine: ${MACHINE_TASK_CLASSES.join(', ')}. Group: ${GROUP_TASK_CLASSES.join(', ')}`),
        machineID: machineID.optional(),
        groupID: groupID.optional(),
        tag: z.string().max(256).optional().describe('free label echoed back (optional)'),
      })
      .strict(),
    primaryPath: '/api/task/readTaskData',
    async run(input, caller) {
      const target = oneTarget('/api/task/readTaskData', input);
      const isGroupClass = (GROUP_TASK_CLASSES as readonly string[]).includes(input.type);
      if (target.kind === 'machine' && isGroupClass) {
        throw new ToolFailure('/api/task/readTaskData', new GatewayError('INVALID_PARAMETER', `type: found ${quote(input.type)}; with machineID the accepted values are ${MACHINE_TASK_CLASSES.join(', ')}`));
      }
      if (target.kind === 'group' && !isGroupClass) {
        throw new ToolFailure('/api/task/readGroupTaskData', new GatewayError('INVALID_PARAMETER', `type: found ${quote(input.type)}; with groupID the accepted values are ${GROUP_TASK_CLASSES.join(', ')}`));
      }
      return target.kind === 'machine'
        ? caller.body('/api/task/readTaskData', defined({ type: input.type, machineID: target.id, tag: input.tag }))
        : caller.body('/api/task/readGroupTaskData', defined({ type: input.type, groupID: target.id, tag: input.tag }));
    },
  }),
  defineTool({
    name: 'read_machine',
    title: 'Read live machine data',
    description: `Live read of items from one machine (contacts it). Items: ${ITEM_NAMES.join(', ')}; default status and alarm. Each item is returned under its own key; failed items are listed under errors.`,
    input: z
      .object({
        machineID,
        items: z.array(z.enum(ITEM_NAMES)).min(1).optional().describe(`items to read, any of ${ITEM_NAMES.join(', ')} (default ["status","alarm"])`),
        channel: z.number().int().min(1).optional().describe('controller path/channel, 1-based (optional)'),
      })
      .strict(),
    primaryPath: '/api/cnc/readCNCStatusDetails',
    async run(input, caller) {
      const items = [...new Set(input.items ?? (['status', 'alarm'] as ReadMachineItem[]))];
      const out: Record<string, unknown> = { machineID: input.machineID };
      const errors: Record<string, string> = {};
      const failures: { path: string; error: GatewayError }[] = [];
      await Promise.all(
        items.map(async (item) => {
          const path = READ_MACHINE_ITEMS[item];
          const r = await caller.section(path, defined({ machineID: input.machineID, channel: input.channel }));
          if (r.ok) out[item] = r.data;
          else {
            errors[item] = r.message;
            failures.push({ path, error: r.error });
          }
        }),
      );
      // An unknown machine is not a per-item failure: the whole call is wrong.
      const first = failures[0];
      if (first && failures.length === items.length && failures.every((f) => f.error.errorCode === 10003)) throw new ToolFailure(first.path, first.error);
      if (Object.keys(errors).length) out.errors = errors;
      return out;
    },
  }),
  defineTool({
    name: 'read_tool_life',
    title: 'Read tool life',
    description: 'Tool life from the machine (contacts it). Omit toolNum, groupNum and offsetNum to read all tools; detailed=true returns the detailed record.',
    input: z
      .object({
        machineID,
        toolNum: z.number().int().min(0).optional().describe('tool number (optional)'),
        groupNum: z.number().int().min(0).optional().describe('tool group number (optional)'),
        offsetNum: z.number().int().min(0).optional().describe('offset number (optional)'),
        detailed: z.boolean().optional().describe('true for the detailed record (default false)'),
      })
      .strict(),
    primaryPath: '/api/cnc/readToolLife',
    run({ detailed, ...rest }, caller) {
      return caller.body(detailed ? '/api/cnc/readToolLifeDetails' : '/api/cnc/readToolLife', defined(rest));
    },
  }),
  defineTool({
    name: 'list_programs',
    title: 'List part programs',
    description: 'Part program files on a machine (contacts it).',
    input: z
      .object({
        machineID,
        dirAtCNC: z.string().max(1024).optional().describe('directory on the controller, e.g. //CNC_MEM/USER/PATH1/ (optional)'),
        subDir: z.string().max(1024).optional().describe('sub-directory (optional)'),
        startPrgNo: z.number().int().min(0).optional().describe('first program number to list (optional)'),
      })
      .strict(),
    primaryPath: '/api/cnc/readProgramList',
    run: (input, caller) => caller.body('/api/cnc/readProgramList', defined(input)),
  }),
  defineTool({
    name: 'read_current_program',
    title: 'Read the running program',
    description:
      'The program the machine is running: directory, file name and content (contacts it). Content is text: UTF-8, or Windows-1252 for bytes that are not UTF-8 (encoding says which); size and sha256 are of the exact bytes. Content longer than maxChars is cut and flagged truncated, with totalChars.',
    input: z
      .object({
        machineID,
        dirAtCNC: z.string().max(1024).optional().describe('directory on the controller (optional)'),
        subDir: z.string().max(1024).optional().describe('sub-directory (optional)'),
        maxChars: z.number().int().min(0).default(20000).describe('maximum characters of content (default 20000; 0 = unlimited)'),
      })
      .strict(),
    primaryPath: '/api/cnc/readCurrentProgram',
    async run({ maxChars, ...rest }, caller) {
      // The bytes (contentBase64) stay out: they would carry the whole program past maxChars, and the text names every byte.
      const { contentBase64: _bytes, ...program } = await caller.call<{ dir: string; name: string; content: string; encoding: string; contentBase64: unknown; size: number; sha256: string; block?: number }>(
        '/api/cnc/readCurrentProgram',
        defined(rest),
      );
      const totalChars = program.content.length;
      const truncated = maxChars > 0 && totalChars > maxChars;
      return { ...program, content: truncated ? program.content.slice(0, maxChars) : program.content, truncated, totalChars };
    },
  }),
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
    primaryPath: '/api/analysis/machine',
    async run(input, caller) {
      const target = oneTarget('/api/analysis/machine', input);
      const path = target.kind === 'machine' ? '/api/analysis/machine' : '/api/analysis/group';
      const { machineID: _m, groupID: _g, ...rest } = input;
      const result = await caller.call<Record<string, unknown>>(path, defined({ ...rest, [`${target.kind}ID`]: target.id }));
      const { window, kind: _k, machineID: _rm, groupID: _rg, ...data } = result;
      return { kind: input.kind, [`${target.kind}ID`]: target.id, window, data: 'data' in data ? data.data : data };
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
    primaryPath: '/api/history/machine',
    async run(input, caller) {
      const target = oneTarget('/api/history/machine', input);
      if (input.newestFirst) return queryNewestFirst(caller, input, target);
      const path = target.kind === 'machine' ? '/api/history/machine' : '/api/history/group';
      const result = await caller.call<Record<string, unknown>>(
        path,
        defined({ type: input.type, start: input.start, end: input.end, limit: input.limit, [`${target.kind}ID`]: target.id }),
      );
      return { type: input.type, [`${target.kind}ID`]: target.id, ...result };
    },
  }),
  defineTool({
    name: 'get_system_info',
    title: 'Gateway system information',
    description:
      'One call for the gateway: identity and alias, core version, license, services (status and queues), time (current time, time zone, offset) and hardware (resource usage); includeNetwork=true adds network adapters. Failed sections are listed under errors.',
    input: z.object({ includeNetwork: z.boolean().default(false).describe('true adds network adapters (default false)') }).strict(),
    primaryPath: '/api/system/info',
    async run(input, caller) {
      const paths: Record<string, string> = { ...SYSTEM_SECTIONS, ...(input.includeNetwork ? { network: '/api/system/network-adapters' } : {}) };
      const { out, errors } = await sections(caller, paths);
      if (out.gateway && typeof out.gateway === 'object') {
        out.gateway = Object.fromEntries(Object.entries(out.gateway).filter(([k]) => !HIDDEN_GATEWAY_FIELDS.includes(k)));
      }
      return Object.keys(errors).length ? { ...out, errors } : out;
    },
  }),
  defineTool({
    name: 'get_error_log',
    title: 'Gateway error log',
    description: 'The gateway’s interface error log; limit keeps the most recent rows. Returns {window, total, returned, truncated, data}.',
    input: z
      .object({
        start: timeParamSchema.optional().describe(`Window start (default: since the gateway started): ${TIME_PARAM_SUMMARY}`),
        end,
        limit: z.number().int().min(0).default(200).describe('most recent rows to return (default 200; 0 = all in the window)'),
      })
      .strict(),
    primaryPath: '/api/log/error',
    run: (input, caller) => caller.call('/api/log/error', defined(input)),
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
    const group = await caller.call<{ machineIDs: string[] }>('/api/config/group', { groupID: target.id });
    machineIDs = group.machineIDs;
  }
  const result = await caller.call<Record<string, unknown>>(
    '/api/db/query',
    defined({ table: 'history', machineIDs, classes: [input.type], start: input.start, end: input.end, order: 'desc', limit: input.limit }),
  );
  const { window, count, limitReached, data } = result;
  return { type: input.type, [`${target.kind}ID`]: target.id, window, order: 'newestFirst', count, limitReached, data };
}

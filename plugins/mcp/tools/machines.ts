/** The tools about machines and groups: the lists, one machine's configuration, live reads and tool life. */
import { z } from 'zod';
import type { GatewayError } from '../../../core/interfaces/errors.js';
import type { InterfaceEntry } from '../../../core/interfaces/registry.js';
import { CONFIGURATION } from '../../../core/roles/gateway/contract/configuration.js';
import { LIVE_READS } from '../../../core/roles/gateway/contract/live-reads.js';
import { defineTool, defined, projectedOnce, ToolFailure, type ToolDefinition } from '../tool-runtime.js';
import type { ListedMachine } from '../../../core/roles/gateway/api-outputs.js';
import { machineID } from './params.js';

export const READ_MACHINE_ITEMS = {
  status: LIVE_READS.readCNCStatusDetails,
  alarm: LIVE_READS.readAlarm,
  position: LIVE_READS.readPosition,
  load: LIVE_READS.readLoad,
  feedAndSpindle: LIVE_READS.readFeedAndSpindle,
  toolNumber: LIVE_READS.readCurrentToolNumber,
  timeData: LIVE_READS.readTimeData,
  count: LIVE_READS.readCount,
} satisfies Record<string, InterfaceEntry>;
type ReadMachineItem = keyof typeof READ_MACHINE_ITEMS;
const ITEM_NAMES = Object.keys(READ_MACHINE_ITEMS) as [ReadMachineItem, ...ReadMachineItem[]];

/** list_machines' answer from the configuration's list, which is the same frozen list until the fleet changes: made and serialised once per list. */
const listMachines = projectedOnce((machines: readonly ListedMachine[]) => {
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
  return { count: rows.length, machines: rows };
});

export const MACHINE_TOOLS: readonly ToolDefinition[] = [
  defineTool({
    name: 'list_machines',
    title: 'List machines',
    description: 'Identity of every machine: machineID, name, system, model, machineType, ip, port, isActive. Start here to get machineIDs.',
    input: z.object({}).strict(),
    primary: CONFIGURATION.machines,
    async run(_input, caller) {
      return listMachines(await caller.call(CONFIGURATION.machines));
    },
  }),
  defineTool({
    name: 'list_groups',
    title: 'List groups',
    description: 'Every machine group with its member machineIDs. Use the groupID with get_fleet_status, read_task_data, analyze or query_history.',
    input: z.object({}).strict(),
    primary: CONFIGURATION.groups,
    async run(_input, caller) {
      const groups = await caller.call(CONFIGURATION.groups);
      const rows = groups.map((g) => ({ groupID: g.groupID, name: g.name, isActive: g.isActive, machineIDs: g.machineIDs }));
      return { count: rows.length, groups: rows };
    },
  }),
  defineTool({
    name: 'get_machine',
    title: 'Get machine configuration',
    description: 'Full configuration of one machine (driver, tasks, intervals, connection policy), credentials excluded.',
    input: z.object({ machineID }).strict(),
    primary: CONFIGURATION.machine,
    run: (input, caller) => caller.body(CONFIGURATION.machine, input),
  }),
];

export const LIVE_READ_TOOLS: readonly ToolDefinition[] = [
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
    primary: LIVE_READS.readCNCStatusDetails,
    async run(input, caller) {
      const items = [...new Set(input.items ?? (['status', 'alarm'] as ReadMachineItem[]))];
      const out: Record<string, unknown> = { machineID: input.machineID };
      const errors: Record<string, string> = {};
      const failures: { entry: InterfaceEntry; error: GatewayError }[] = [];
      await Promise.all(
        items.map(async (item) => {
          const entry = READ_MACHINE_ITEMS[item];
          const r = await caller.section(entry, defined({ machineID: input.machineID, channel: input.channel }));
          if (r.ok) out[item] = r.data;
          else {
            errors[item] = r.message;
            failures.push({ entry, error: r.error });
          }
        }),
      );
      // An unknown machine is not a per-item failure: the whole call is wrong.
      const first = failures[0];
      if (first && failures.length === items.length && failures.every((f) => f.error.errorCode === 10003)) throw new ToolFailure(first.entry.path, first.error);
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
    primary: LIVE_READS.readToolLife,
    run({ detailed, ...rest }, caller) {
      return detailed ? caller.body(LIVE_READS.readToolLifeDetails, defined(rest)) : caller.body(LIVE_READS.readToolLife, defined(rest));
    },
  }),
];

/** get_fleet_status: the fleet's cached status and health (fleet-status.ts). */
import { z } from 'zod';
import { TASK_DATA } from '../../../core/roles/gateway/contract/task-data.js';
import { defineTool, type ToolDefinition } from '../tool-runtime.js';
import { fleetStatus } from '../fleet-status.js';
import { groupID } from './params.js';

export const FLEET_TOOLS: readonly ToolDefinition[] = [
  defineTool({
    name: 'get_fleet_status',
    title: 'Fleet status',
    description:
      'Latest cached status and connection health of every machine, or of one group’s members, without contacting the machines. Per machine: connection, status, the derived state (running, idle, alarm, setup, offline, noData, inactive) with its reason, and statusStale; plus counts by state. Needs the CNCStatus task (machines without it show noData).',
    input: z.object({ groupID: groupID.optional().describe('groupID from list_groups; omit for all machines') }).strict(),
    primary: TASK_DATA.batchReadTaskData,
    run: (input, caller) => fleetStatus(caller, input.groupID),
  }),
];

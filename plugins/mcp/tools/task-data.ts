/** read_task_data: one cached sample of a machine's or a group's data class. */
import { z } from 'zod';
import { GROUP_TASK_CLASSES, MACHINE_TASK_CLASSES } from '../../../core/roles/gateway/machine-config.js';
import { GatewayError, quote } from '../../../core/errors.js';
import { defineTool, defined, oneTarget, ToolFailure, type ToolDefinition } from '../tool-runtime.js';
import { groupID, machineID } from './params.js';

const ALL_CLASSES = [...MACHINE_TASK_CLASSES, ...GROUP_TASK_CLASSES] as const;

export const TASK_DATA_TOOLS: readonly ToolDefinition[] = [
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
];

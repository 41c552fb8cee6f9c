/** read_task_data: one cached sample of a machine's or a group's data class. */
import { z } from 'zod';
import { GROUP_TASK_CLASSES, MACHINE_TASK_CLASSES, type GroupTaskClass, type MachineTaskClass } from '../../../core/roles/gateway/machine-config.js';
import { GatewayError, quote } from '../../../core/interfaces/errors.js';
import { TASK_DATA } from '../../../core/roles/gateway/contract/task-data.js';
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
    primary: TASK_DATA.readTaskData,
    async run(input, caller) {
      const target = oneTarget(TASK_DATA.readTaskData, input);
      const isGroupClass = (GROUP_TASK_CLASSES as readonly string[]).includes(input.type);
      if (target.kind === 'machine' && isGroupClass) {
        throw new ToolFailure(TASK_DATA.readTaskData.path, new GatewayError('INVALID_PARAMETER', `type: found ${quote(input.type)}; with machineID the accepted values are ${MACHINE_TASK_CLASSES.join(', ')}`));
      }
      if (target.kind === 'group' && !isGroupClass) {
        throw new ToolFailure(TASK_DATA.readGroupTaskData.path, new GatewayError('INVALID_PARAMETER', `type: found ${quote(input.type)}; with groupID the accepted values are ${GROUP_TASK_CLASSES.join(', ')}`));
      }
      return target.kind === 'machine'
        ? caller.body(TASK_DATA.readTaskData, defined({ type: input.type as MachineTaskClass, machineID: target.id, tag: input.tag }))
        : caller.body(TASK_DATA.readGroupTaskData, defined({ type: input.type as GroupTaskClass, groupID: target.id, tag: input.tag }));
    },
  }),
];

/** The gateway's configuration interfaces: machines, groups and the task switch (docs/api.md, "Configuration"). */
import { z } from 'zod';
import { ITEM_FAMILIES } from '../../../driver-seam/driver.js';
import { defineEntry } from '../../../interfaces/registry.js';
import { groupListOutput, listedMachineSchema, machineListOutput } from '../api-outputs.js';
import { GROUP_TASK_CLASSES, MACHINE_TASK_CLASSES, groupConfigSchema, groupIdSchema, groupTasksSchema, machineIdSchema, machineTasksSchema, type GroupTaskClass } from '../machine-config.js';

const machineIDInput = z.object({ machineID: machineIdSchema }).strict();
const groupIDInput = z.object({ groupID: groupIdSchema }).strict();

const intervalMsInput = machineTasksSchema.shape.Count.unwrap().shape.intervalMs.unwrap();
const groupIntervalMs = groupTasksSchema.shape.GroupCount.unwrap().shape.intervalMs.unwrap();

/** Every task class the task switch takes: the machines' and the groups'. */
export const TASK_CLASSES = [...MACHINE_TASK_CLASSES, ...GROUP_TASK_CLASSES] as const;
export type TaskClass = (typeof TASK_CLASSES)[number];

export const isGroupClass = (type: TaskClass): type is GroupTaskClass => (GROUP_TASK_CLASSES as readonly string[]).includes(type);

const ACCEPTED_FORMS =
  'accepted forms: {type, enabled, intervalMs?, machineID} or {type, enabled, intervalMs?, groupID}; ' +
  `a machine class (${MACHINE_TASK_CLASSES.join(', ')}) takes either, with groupID meaning every member; ` +
  `a group class (${GROUP_TASK_CLASSES.join(', ')}) takes groupID only`;

const taskSwitchInput = z
  .object({
    type: z.enum(TASK_CLASSES),
    enabled: z.boolean(),
    intervalMs: intervalMsInput.optional().describe('sampling (machine class) or refresh (group class, at least 1000) interval in ms; omit to keep the current one'),
    machineID: machineIdSchema.optional().describe('one machine (machine classes only); or give groupID'),
    groupID: groupIdSchema.optional().describe('the group itself for a group class, every member for a machine class; or give machineID'),
  })
  .strict()
  .superRefine((body, check) => {
    if (body.machineID !== undefined && body.groupID !== undefined) {
      check.addIssue({ code: 'custom', path: ['groupID'], input: body.groupID, message: `give machineID or groupID, not both; ${ACCEPTED_FORMS}` });
    } else if (body.machineID === undefined && body.groupID === undefined) {
      check.addIssue({ code: 'custom', path: ['machineID'], input: undefined, message: `give machineID or groupID; ${ACCEPTED_FORMS}` });
    } else if (isGroupClass(body.type) && body.machineID !== undefined) {
      check.addIssue({ code: 'custom', path: ['machineID'], input: body.machineID, message: `type ${body.type} is a group class: give groupID, not machineID; ${ACCEPTED_FORMS}` });
    }
    if (isGroupClass(body.type) && body.intervalMs !== undefined) {
      const interval = groupIntervalMs.safeParse(body.intervalMs);
      for (const issue of interval.error?.issues ?? []) {
        check.addIssue({ code: 'custom', path: ['intervalMs'], input: body.intervalMs, message: `for group class ${body.type}: ${issue.message}` });
      }
    }
  });

const taskSetting = { enabled: z.boolean(), intervalMs: z.number().int(), changed: z.boolean().describe('false: the task already ran so, and nothing restarted') };

export const CONFIGURATION = {
  machines: defineEntry({
    path: '/api/config/machines',
    method: 'GET',
    summary: 'Every machine with its configuration, credentials excluded.',
    tags: ['configuration'],
    input: z.object({}).strict(),
    output: machineListOutput,
    errors: [],
  }),
  machine: defineEntry({
    path: '/api/config/machine',
    method: 'GET',
    summary: 'One machine’s full configuration, credentials excluded, with the item families its driver supports.',
    tags: ['configuration'],
    input: machineIDInput,
    output: listedMachineSchema.extend({ families: z.array(z.enum(ITEM_FAMILIES)).describe('the item families its driver supports; none while the machine is inactive') }),
    errors: ['GENERAL_MACHINE_ID_NOT_EXISTED'],
  }),
  addMachine: defineEntry({
    path: '/api/config/machine/add',
    method: 'POST',
    summary: 'Adds a machine; its actor starts at once when it is active.',
    tags: ['configuration'],
    input: z.record(z.string(), z.unknown()),
    output: listedMachineSchema,
    errors: ['GENERAL_MACHINE_ID_EXISTED'],
  }),
  updateMachine: defineEntry({
    path: '/api/config/machine/update',
    method: 'POST',
    summary: 'Changes fields of a machine; its actor restarts (or stops, when deactivated) at once.',
    tags: ['configuration'],
    input: z.looseObject({ machineID: machineIdSchema }),
    output: listedMachineSchema,
    errors: ['GENERAL_MACHINE_ID_NOT_EXISTED'],
  }),
  deleteMachine: defineEntry({
    path: '/api/config/machine/delete',
    method: 'POST',
    summary: 'Deletes a machine, stops its actor and removes it from its groups. Its history stays.',
    tags: ['configuration'],
    input: machineIDInput,
    output: z.strictObject({ machineID: z.string(), deleted: z.literal(true) }),
    errors: ['GENERAL_MACHINE_ID_NOT_EXISTED'],
  }),
  groups: defineEntry({
    path: '/api/config/groups',
    method: 'GET',
    summary: 'Every group with its member machineIDs.',
    tags: ['configuration'],
    input: z.object({}).strict(),
    output: groupListOutput,
    errors: [],
  }),
  group: defineEntry({
    path: '/api/config/group',
    method: 'GET',
    summary: 'One group with its member machineIDs.',
    tags: ['configuration'],
    input: groupIDInput,
    output: groupConfigSchema,
    errors: ['GENERAL_GROUP_ID_NOT_EXISTED'],
  }),
  addGroup: defineEntry({
    path: '/api/config/group/add',
    method: 'POST',
    summary: 'Adds a group.',
    tags: ['configuration'],
    input: z.record(z.string(), z.unknown()),
    output: groupConfigSchema,
    errors: ['GENERAL_GROUP_ID_EXISTED', 'GENERAL_MACHINE_ID_NOT_EXISTED'],
  }),
  updateGroup: defineEntry({
    path: '/api/config/group/update',
    method: 'POST',
    summary: 'Changes fields of a group; `machineIDs` replaces the member list.',
    tags: ['configuration'],
    input: z.looseObject({ groupID: groupIdSchema }),
    output: groupConfigSchema,
    errors: ['GENERAL_GROUP_ID_NOT_EXISTED', 'GENERAL_MACHINE_ID_NOT_EXISTED'],
  }),
  deleteGroup: defineEntry({
    path: '/api/config/group/delete',
    method: 'POST',
    summary: 'Deletes a group; its machines stay.',
    tags: ['configuration'],
    input: groupIDInput,
    output: z.strictObject({ groupID: z.string(), deleted: z.literal(true) }),
    errors: ['GENERAL_GROUP_ID_NOT_EXISTED'],
  }),
  switchTask: defineEntry({
    path: '/api/config/task/update',
    method: 'POST',
    summary:
      'Enables or disables a task and optionally sets its interval. A machine class (CNCStatus, Count, Cycle, TimeData, ToolLife, OEE) applies to one machine or every member of a group; each changed machine’s actor restarts at once. A group class (GroupCount, GroupCumulativeTime, GroupOEE) applies to the group’s own task, given by groupID; it is rescheduled at once.',
    tags: ['task data'],
    input: taskSwitchInput,
    output: z.array(
      z.union([
        z.strictObject({ machineID: z.string(), type: z.enum(MACHINE_TASK_CLASSES), ...taskSetting }),
        z.strictObject({ groupID: z.string(), type: z.enum(GROUP_TASK_CLASSES), ...taskSetting }),
      ]),
    ).describe('one entry per machine switched (a machine class), or the group’s own task (a group class)'),
    errors: ['GENERAL_MACHINE_ID_NOT_EXISTED', 'GENERAL_GROUP_ID_NOT_EXISTED'],
  }),
};

/**
 * The task switch: turns a task on or off (and sets its interval). A machine
 * class applies to one machine or to every member of a group: the change is
 * stored in the machine config and announced on the bus, so the fleet
 * restarts the actor with it at once, exactly as a machine update does. A
 * group class (GroupCount, ...) applies to the group's own task: stored in
 * the group config and announced as group.saved, which reschedules it.
 */
import { z } from 'zod';
import {
  GROUP_TASK_CLASSES,
  MACHINE_TASK_CLASSES,
  groupTasksSchema,
  machineTasksSchema,
  type GroupConfig,
  type GroupTaskClass,
  type MachineConfig,
  type MachineTaskClass,
  groupIdSchema,
  machineIdSchema,
} from '../../core/roles/gateway/machine-config.js';
import type { GatewayContext } from '../../core/roles/gateway/context.js';

/** tasks.<class>.intervalMs as the machine config accepts it, without its default. */
const intervalMsInput = machineTasksSchema.shape.Count.unwrap().shape.intervalMs.unwrap();
/** tasks.<class>.intervalMs as the group config accepts it (a longer minimum). */
const groupIntervalMs = groupTasksSchema.shape.GroupCount.unwrap().shape.intervalMs.unwrap();

/** Machine classes first: they are the common case, and listings start with them. */
const TASK_CLASSES = [...MACHINE_TASK_CLASSES, ...GROUP_TASK_CLASSES] as const;
type TaskClass = (typeof TASK_CLASSES)[number];

const isGroupClass = (type: TaskClass): type is GroupTaskClass => (GROUP_TASK_CLASSES as readonly string[]).includes(type);

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

/** What a switch sets: the enabled flag and the interval, the current one unless given. */
function nextTask(current: { enabled: boolean; intervalMs: number }, enabled: boolean, intervalMs: number | undefined) {
  const next = { enabled, intervalMs: intervalMs ?? current.intervalMs };
  return { next, changed: next.enabled !== current.enabled || next.intervalMs !== current.intervalMs };
}

export function defineTaskSwitchInterface(ctx: GatewayContext): void {
  const { store, bus } = ctx;

  async function switchMachines(type: MachineTaskClass, enabled: boolean, intervalMs: number | undefined, machineIDs: readonly string[]) {
    const results = [];
    for (const id of machineIDs) {
      const existing = store.getMachine(id);
      const { next, changed } = nextTask(existing.tasks[type], enabled, intervalMs);
      // An unchanged machine keeps its actor: a restart would drop its caches and today's OEE tally.
      if (changed) {
        const config: MachineConfig = { ...existing, tasks: { ...existing.tasks, [type]: next } };
        await store.updateMachine(config);
        bus.emit('machine.saved', { config, created: false });
      }
      results.push({ machineID: id, type, ...next, changed });
    }
    return results;
  }

  async function switchGroup(type: GroupTaskClass, enabled: boolean, intervalMs: number | undefined, groupID: string) {
    const existing = store.getGroup(groupID);
    const { next, changed } = nextTask(existing.tasks[type], enabled, intervalMs);
    // An unchanged group keeps its schedule and its cached value.
    if (changed) {
      const config: GroupConfig = { ...existing, tasks: { ...existing.tasks, [type]: next } };
      await store.updateGroup(config);
      bus.emit('group.saved', { config, created: false });
    }
    return [{ groupID, type, ...next, changed }];
  }

  ctx.interfaces.define({
    path: '/api/config/task/update',
    method: 'POST',
    summary:
      'Enables or disables a task and optionally sets its interval. A machine class (CNCStatus, Count, Cycle, TimeData, ToolLife, OEE) applies to one machine or every member of a group; each changed machine’s actor restarts at once. A group class (GroupCount, GroupCumulativeTime, GroupOEE) applies to the group’s own task, given by groupID; it is rescheduled at once.',
    tags: ['task data'],
    input: taskSwitchInput,
    handler: async ({ type, enabled, intervalMs, machineID, groupID }) => {
      if (isGroupClass(type)) return switchGroup(type, enabled, intervalMs, groupID ?? '');
      const machineIDs = machineID !== undefined ? [store.getMachine(machineID).machineID] : store.getGroup(groupID ?? '').machineIDs;
      return switchMachines(type, enabled, intervalMs, machineIDs);
    },
  });
}

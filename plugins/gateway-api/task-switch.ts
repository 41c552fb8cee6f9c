/**
 * The task switch: turns a data class's sampling task on or off (and sets its
 * interval) for one machine or every member of a group. The change is stored
 * in the machine config and announced on the bus, so the fleet restarts the
 * actor with it at once, exactly as a machine update does.
 */
import { z } from 'zod';
import { MACHINE_TASK_CLASSES, machineTasksSchema, type MachineConfig } from '../../config/schema.js';
import type { GatewayContext } from '../../core/context.js';

/** tasks.<class>.intervalMs as the machine config accepts it, without its default. */
const intervalMsInput = machineTasksSchema.shape.Count.unwrap().shape.intervalMs.unwrap();

const ACCEPTED_FORMS = 'accepted forms: {type, enabled, intervalMs?, machineID} or {type, enabled, intervalMs?, groupID}';

const taskSwitchInput = z
  .object({
    type: z.enum(MACHINE_TASK_CLASSES),
    enabled: z.boolean(),
    intervalMs: intervalMsInput.optional().describe('sampling interval in ms; omit to keep the current one'),
    machineID: z.string().min(1).optional().describe('one machine; or give groupID'),
    groupID: z.string().min(1).optional().describe('every member of this group; or give machineID'),
  })
  .strict()
  .superRefine((body, check) => {
    if (body.machineID !== undefined && body.groupID !== undefined) {
      check.addIssue({ code: 'custom', path: ['groupID'], input: body.groupID, message: `give machineID or groupID, not both; ${ACCEPTED_FORMS}` });
    } else if (body.machineID === undefined && body.groupID === undefined) {
      check.addIssue({ code: 'custom', path: ['machineID'], input: undefined, message: `give machineID or groupID; ${ACCEPTED_FORMS}` });
    }
  });

export function defineTaskSwitchInterface(ctx: GatewayContext): void {
  const { store, bus } = ctx;

  ctx.interfaces.define({
    path: '/api/config/task/update',
    method: 'POST',
    summary:
      'Enables or disables the sampling task of one data class (and optionally sets its interval) for one machine or every member of a group; each changed machine’s actor restarts at once.',
    tags: ['task data'],
    input: taskSwitchInput,
    handler: async ({ type, enabled, intervalMs, machineID, groupID }) => {
      const machineIDs = machineID !== undefined ? [store.getMachine(machineID).machineID] : store.getGroup(groupID ?? '').machineIDs;
      const results = [];
      for (const id of machineIDs) {
        const existing = store.getMachine(id);
        const current = existing.tasks[type];
        const next = { enabled, intervalMs: intervalMs ?? current.intervalMs };
        // An unchanged machine keeps its actor: a restart would drop its caches and today's OEE tally.
        const changed = next.enabled !== current.enabled || next.intervalMs !== current.intervalMs;
        if (changed) {
          const config: MachineConfig = { ...existing, tasks: { ...existing.tasks, [type]: next } };
          await store.updateMachine(config);
          bus.emit('machine.saved', { config, created: false });
        }
        results.push({ machineID: id, type, ...next, changed });
      }
      return results;
    },
  });
}

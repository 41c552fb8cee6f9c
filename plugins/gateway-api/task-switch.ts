/**
 * The task switch: turns a task on or off (and sets its interval). A machine
 * class applies to one machine or to every member of a group: the change is
 * stored in the machine config and announced on the bus, so the fleet
 * restarts the actor with it at once, exactly as a machine update does. A
 * group class (GroupCount, ...) applies to the group's own task: stored in
 * the group config and announced as group.saved, which reschedules it.
 */
import type { GroupConfig, GroupTaskClass, MachineConfig, MachineTaskClass } from '../../core/roles/gateway/machine-config.js';
import { CONFIGURATION, isGroupClass } from '../../core/roles/gateway/contract/configuration.js';
import type { GatewayContext } from '../../core/roles/gateway/context.js';

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

  ctx.interfaces.implement(CONFIGURATION.switchTask, {
    handler: async ({ type, enabled, intervalMs, machineID, groupID }) => {
      if (isGroupClass(type)) return switchGroup(type, enabled, intervalMs, groupID ?? '');
      const machineIDs = machineID !== undefined ? [store.getMachine(machineID).machineID] : store.getGroup(groupID ?? '').machineIDs;
      return switchMachines(type, enabled, intervalMs, machineIDs);
    },
  });
}

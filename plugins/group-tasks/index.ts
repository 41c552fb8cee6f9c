/**
 * Drives the group task cache (ctx.groupTasks): starts the schedules of every
 * active group at boot, follows group and machine changes from the bus
 * without a restart, and clears every timer at shutdown. The interfaces read
 * the cache; this plugin only writes it.
 */
import type { GatewayContext } from '../../core/roles/gateway/context.js';
import type { GroupMember } from '../../core/roles/gateway/fleet/group-aggregates.js';
import { GroupTaskScheduler } from '../../core/roles/gateway/fleet/group-tasks.js';
import { definePlugin } from '../../core/runtime/plugin-host.js';

export const groupTasksPlugin = definePlugin<GatewayContext>({
  name: 'group-tasks',
  dependsOn: ['machine-actors'],
  register({ store, fleet, bus, groupTasks, now, logger }) {
    /**
     * A member's live caches under its stored config. The fleet applies a
     * saved machine asynchronously (the old driver closes first), so right
     * after machine.saved its view may still carry the previous config.
     */
    const memberOf = (machineID: string): GroupMember =>
      store.hasMachine(machineID) && fleet.has(machineID) ? { ...fleet.snapshot(machineID), config: store.getMachine(machineID) } : machineID;
    const scheduler = new GroupTaskScheduler({
      cache: groupTasks,
      members: (group) => group.machineIDs.map(memberOf),
      now,
      logger,
    });
    for (const group of store.listGroups()) scheduler.apply(group);

    // A member switched on or off changes what the group adds up; other machine edits only restart its sampling.
    const activeByMachine = new Map(store.listMachines().map((m) => [m.machineID, m.isActive]));
    const offs = [
      bus.on('group.saved', ({ config }) => scheduler.apply(config)),
      bus.on('group.deleted', ({ groupID }) => scheduler.remove(groupID)),
      bus.on('machine.saved', ({ config }) => {
        const before = activeByMachine.get(config.machineID);
        activeByMachine.set(config.machineID, config.isActive);
        if (before === undefined || before === config.isActive) return;
        for (const group of store.listGroups()) if (group.machineIDs.includes(config.machineID)) scheduler.refreshNow(group.groupID);
      }),
      // Removing the machine from its groups arrives as group.saved, which refreshes them.
      bus.on('machine.deleted', ({ machineID }) => void activeByMachine.delete(machineID)),
    ];
    logger.info({ groups: store.listGroups().filter((g) => g.isActive).length }, 'group tasks started');
    return {
      stop() {
        for (const off of offs) off();
        scheduler.stop();
      },
    };
  },
});

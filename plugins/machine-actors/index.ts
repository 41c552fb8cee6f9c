/**
 * Keeps the fleet of machine actors in step with the stored machines: starts
 * them at boot, restarts or stops one when its machine is saved or deleted,
 * and stops them all (actors, then drivers) at shutdown.
 */
import { definePlugin } from '../../core/plugin-host.js';
import type { GatewayContext } from '../../core/roles/gateway/context.js';

export const machineActorsPlugin = definePlugin<GatewayContext>({
  name: 'machine-actors',
  register({ store, fleet, bus, logger }) {
    const apply = (p: Promise<void>, machineID: string) =>
      p.catch((err: unknown) => logger.error({ err, machineID }, 'could not apply machine change'));
    for (const machine of store.listMachines()) void apply(fleet.apply(machine), machine.machineID);
    const offSaved = bus.on('machine.saved', ({ config }) => void apply(fleet.apply(config), config.machineID));
    const offDeleted = bus.on('machine.deleted', ({ machineID }) => void apply(fleet.remove(machineID), machineID));
    logger.info({ machines: store.listMachines().length }, 'fleet started');
    return {
      async stop() {
        offSaved();
        offDeleted();
        await fleet.stop();
      },
    };
  },
});

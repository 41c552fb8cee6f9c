/**
 * Keeps the fleet of machine actors in step with the stored machines: starts
 * them at boot, restarts or stops one when its machine is saved or deleted,
 * and stops them all (actors, then drivers) at shutdown.
 */
import { definePlugin } from '../../core/runtime/plugin-host.js';
import type { GatewayContext } from '../../core/roles/gateway/context.js';

/**
 * The gateway's readiness check `drivers`: every active stored machine has
 * its actor and driver, whether or not the machine answers (an offline
 * machine is the plant's state, not the gateway's). The machines without
 * are named in the log, never in the probe's answer.
 */
function driversStarted(store: GatewayContext['store'], fleet: GatewayContext['fleet']): () => boolean {
  return () => {
    const missing = fleet.notStarted(store.listMachines());
    if (missing.length) throw new Error(`no actor and driver for ${missing.length} active machine(s): ${missing.slice(0, 10).join(', ')}${missing.length > 10 ? ', …' : ''}`);
    return true;
  };
}

export const machineActorsPlugin = definePlugin<GatewayContext>({
  name: 'machine-actors',
  register({ store, fleet, bus, logger, readiness }) {
    const apply = (p: Promise<void>, machineID: string) =>
      p.catch((err: unknown) => logger.error({ err, machineID }, 'could not apply machine change'));
    for (const machine of store.listMachines()) void apply(fleet.apply(machine), machine.machineID);
    const offSaved = bus.on('machine.saved', ({ config }) => void apply(fleet.apply(config), config.machineID));
    const offDeleted = bus.on('machine.deleted', ({ machineID }) => void apply(fleet.remove(machineID), machineID));
    logger.info({ machines: store.listMachines().length }, 'fleet started');
    readiness.add('drivers', driversStarted(store, fleet));
    return {
      async stop() {
        offSaved();
        offDeleted();
        await fleet.stop();
      },
    };
  },
});

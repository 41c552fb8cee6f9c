/**
 * The `focas` driver: FANUC CNCs through a FOCAS bridge, a small process
 * beside the CNC that runs the native FOCAS library and speaks the bridge
 * protocol (docs/drivers/focas-bridge-protocol.md). See docs/drivers/focas.md.
 */
import type { DriverFactory } from '../../core/driver-seam/driver.js';
import { FocasClient } from './client.js';
import { focasOptionsSchema, type FocasOptions } from './options.js';

export { FocasClient } from './client.js';
export { focasOptionsSchema, FOCAS_FAMILIES } from './options.js';
export type { FocasOptions, FocasOptionsInput } from './options.js';

export const focasDriver: DriverFactory<FocasOptions> = {
  scheme: 'focas',
  description: 'FANUC CNCs through a FOCAS bridge (JSON over HTTP, calls named after the FOCAS functions)',
  configSchema: focasOptionsSchema,
  create(machine, deps) {
    return new FocasClient({ machineID: machine.machineID, ip: machine.ip, port: machine.port }, machine.driverOptions, deps);
  },
};

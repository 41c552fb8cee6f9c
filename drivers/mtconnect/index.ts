/**
 * The `mtconnect` driver: machines that already speak MTConnect, read from
 * an SHDR adapter over TCP or from an MTConnect agent over HTTP (probe,
 * current, then sample streaming or polling). Read-only. See
 * docs/drivers/mtconnect.md.
 */
import type { DriverFactory } from '../../core/driver-seam/driver.js';
import { MtconnectClient } from './client.js';
import { mtconnectOptionsSchema, type MtconnectOptions } from './options.js';

export { MtconnectClient } from './client.js';
export { mtconnectOptionsSchema } from './options.js';
export type { MtconnectOptions, MtconnectOptionsInput } from './options.js';

export const mtconnectDriver: DriverFactory<MtconnectOptions> = {
  scheme: 'mtconnect',
  description: 'MTConnect: an SHDR adapter over TCP (driverOptions.adapter) or an agent over HTTP (driverOptions.agentUrl and device), read-only',
  configSchema: mtconnectOptionsSchema,
  create(machine, deps) {
    return new MtconnectClient(machine, deps);
  },
};

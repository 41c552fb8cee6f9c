/**
 * The cloud relay's composition root: its plugins (none yet: the relay, its
 * broker, /mcp and the admin routes are the role's own code, role.ts). The
 * tools it relays are not listed here: they are the gateway's, read from
 * the gateway's definition (definition.ts, `cloudCatalogue`). The only file
 * of the cloud's wing that may import plugins/ (eslint.config.js).
 */
import type { Plugin } from '../../plugin-host.js';

export const CLOUD_PLUGINS: readonly Plugin<never>[] = [];

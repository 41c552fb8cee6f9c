/**
 * The cloud relay's composition root: its plugins, in the order they
 * depend on each other (the broker, the relay through it, /mcp over the
 * relay; the admin routes beside them). The tools it relays are not listed
 * here: they are the gateway's, read from the gateway's definition
 * (definition.ts, `cloudCatalogue`). The only file of the cloud's wing that
 * may import plugins/ (eslint.config.js).
 */
import type { Plugin } from '../../runtime/plugin-host.js';
import type { CloudContext } from './context.js';
import { cloudBrokerPlugin } from '../../../plugins/cloud-broker/index.js';
import { cloudRelayPlugin } from '../../../plugins/cloud-relay/index.js';
import { cloudMcpPlugin } from '../../../plugins/cloud-mcp/index.js';
import { cloudAdminPlugin } from '../../../plugins/cloud-admin/index.js';

export const CLOUD_PLUGINS: readonly Plugin<CloudContext>[] = [cloudBrokerPlugin, cloudRelayPlugin, cloudMcpPlugin, cloudAdminPlugin];

/**
 * The gateway's composition root: its plugins, the drivers it can use, and
 * the console build it waits for before listening. The only file of the
 * gateway's wing that imports plugins/ and drivers/ (eslint.config.js).
 * Order here does not matter: plugins boot in dependency order.
 */
import type { Plugin } from '../../runtime/plugin-host.js';
import type { GatewayContext } from './context.js';
import { authPlugin } from '../../../plugins/auth/index.js';
import { errorLogPlugin } from '../../../plugins/error-log/index.js';
import { machineActorsPlugin } from '../../../plugins/machine-actors/index.js';
import { groupTasksPlugin } from '../../../plugins/group-tasks/index.js';
import { historyPlugin } from '../../../plugins/history/index.js';
import { analysisPlugin } from '../../../plugins/analysis/index.js';
import { gatewayApiPlugin } from '../../../plugins/gateway-api/index.js';
import { systemPlugin } from '../../../plugins/system/index.js';
import { openapiPlugin } from '../../../plugins/openapi/index.js';
import { mcpPlugin } from '../../../plugins/mcp/index.js';
import { cloudLinkPlugin } from '../../../plugins/cloud-link/index.js';
import { northboundPlugin } from '../../../plugins/northbound/index.js';
import { consolePlugin } from '../../../plugins/console/index.js';
import { mtconnectAgentPlugin } from '../../../plugins/mtconnect-agent/index.js';
import { ensureBuilt } from '../../../plugins/console/build.js';

export { DRIVERS } from '../../../drivers/registry.js';

export const GATEWAY_PLUGINS: readonly Plugin<GatewayContext>[] = [authPlugin, errorLogPlugin, machineActorsPlugin, groupTasksPlugin, historyPlugin, analysisPlugin, gatewayApiPlugin, systemPlugin, openapiPlugin, mcpPlugin, cloudLinkPlugin, northboundPlugin, consolePlugin, mtconnectAgentPlugin];

/** Builds the web console now when its sources changed since the last build, so the first page load does not wait for it. */
export const beforeListen = async (): Promise<void> => {
  await ensureBuilt();
};

/** The plugins of each role. Order here does not matter: they boot in dependency order. */
import type { Plugin } from '../core/plugin-host.js';
import type { GatewayContext } from '../core/roles/gateway/context.js';
import type { ProgramsContext } from '../core/roles/programs/context.js';
import { machineActorsPlugin } from './machine-actors/index.js';
import { gatewayApiPlugin } from './gateway-api/index.js';
import { authPlugin } from './auth/index.js';
import { errorLogPlugin } from './error-log/index.js';
import { openapiPlugin } from './openapi/index.js';
import { mcpPlugin } from './mcp/index.js';
import { groupTasksPlugin } from './group-tasks/index.js';
import { historyPlugin } from './history/index.js';
import { analysisPlugin } from './analysis/index.js';
import { systemPlugin } from './system/index.js';
import { accountsPlugin } from './accounts/index.js';
import { vaultPlugin } from './vault/index.js';
import { auditApiPlugin } from './audit-api/index.js';
import { gatewaysPlugin } from './gateways/index.js';
import { assignmentsPlugin } from './assignments/index.js';
import { deploymentsPlugin } from './deployments/index.js';
import { mirrorPlugin } from './mirror/index.js';
import { cloudLinkPlugin } from './cloud-link/index.js';
import { consolePlugin } from './console/index.js';
import { programsConsolePlugin } from './console/programs.js';
import { dashboardPlugin } from './dashboard/index.js';
import { webhooksPlugin } from './webhooks/index.js';

export const GATEWAY_PLUGINS: readonly Plugin<GatewayContext>[] = [authPlugin, errorLogPlugin, machineActorsPlugin, groupTasksPlugin, historyPlugin, analysisPlugin, gatewayApiPlugin, systemPlugin, openapiPlugin, mcpPlugin, cloudLinkPlugin, consolePlugin];

/** The program version service's plugins. */
export const PROGRAMS_PLUGINS: readonly Plugin<ProgramsContext>[] = [accountsPlugin, vaultPlugin, auditApiPlugin, gatewaysPlugin, assignmentsPlugin, deploymentsPlugin, webhooksPlugin, mirrorPlugin, dashboardPlugin, programsConsolePlugin];

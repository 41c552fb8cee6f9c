/**
 * The program version service's composition root: its plugins. The only file
 * of the programs wing that imports plugins/ (eslint.config.js). Order here
 * does not matter: plugins boot in dependency order.
 */
import type { Plugin } from '../../runtime/plugin-host.js';
import type { ProgramsContext } from './context.js';
import { accountsPlugin } from '../../../plugins/accounts/index.js';
import { vaultPlugin } from '../../../plugins/vault/index.js';
import { auditApiPlugin } from '../../../plugins/audit-api/index.js';
import { gatewaysPlugin } from '../../../plugins/gateways/index.js';
import { assignmentsPlugin } from '../../../plugins/assignments/index.js';
import { deploymentsPlugin } from '../../../plugins/deployments/index.js';
import { webhooksPlugin } from '../../../plugins/webhooks/index.js';
import { mirrorPlugin } from '../../../plugins/mirror/index.js';
import { dashboardPlugin } from '../../../plugins/dashboard/index.js';
import { programsConsolePlugin } from '../../../plugins/console/programs.js';

export const PROGRAMS_PLUGINS: readonly Plugin<ProgramsContext>[] = [accountsPlugin, vaultPlugin, auditApiPlugin, gatewaysPlugin, assignmentsPlugin, deploymentsPlugin, webhooksPlugin, mirrorPlugin, dashboardPlugin, programsConsolePlugin];

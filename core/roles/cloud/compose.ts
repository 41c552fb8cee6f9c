/**
 * The cloud relay's composition root: its plugins (none yet: the relay, its
 * broker, /mcp and the admin routes are the role's own code, role.ts), and
 * the gateway's tool definitions its catalogue is made of. The only file of
 * the cloud's wing that imports plugins/ (eslint.config.js).
 */
import type { Plugin } from '../../plugin-host.js';
import type { ToolDefinition } from '../../mcp/tools.js';
import { TOOLS } from '../../../plugins/mcp/tools.js';

export const CLOUD_PLUGINS: readonly Plugin<never>[] = [];

/** The tools the gateways answer; the cloud lists and relays them. */
export const GATEWAY_TOOLS: readonly ToolDefinition[] = TOOLS;

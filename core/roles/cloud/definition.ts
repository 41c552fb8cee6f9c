/** The cloud relay as a role: /mcp on `cloud.host`:`cloud.port` (8040), its broker embedded on `cloud.mqttPort` (1883) or external, tokens in cloud.db; its plugins in compose.ts. */
import { resolve } from 'node:path';
import { toolCatalogue, type ToolCatalogue } from '../../mcp/dispatch.js';
import { McpToolRegistry } from '../../mcp/tools.js';
import { packageVersion } from '../../runtime/package-root.js';
import { bootOrder } from '../../runtime/plugin-host.js';
import { defineRole, listenFailed, RoleStartError, type RoleDefinition, type RoleStartFacts, type StartedRole } from '../../runtime/role.js';
import { networkUrls } from '../../runtime/startup-banner.js';
import { StartCancelled } from '../../runtime/start-cancelled.js';
import { cloudBannerSection } from './banner.js';
import { cloudTokenCommand } from './commands/cloud-token.js';
import { CLOUD_PLUGINS } from './compose.js';
import { CLOUD_ROLE_PART, cloudRoleSettings } from './config.js';
import { CLOUD_DATABASE_FILE, CloudRole } from './role.js';
import { tokenDatabaseSource } from './token-database.js';

/**
 * The tools the cloud lists and relays: those the gateway of this build
 * serves, that is every tool its plugins declare, in the order the gateway
 * registers them (boot order), so a tool a plugin contributes answers
 * through the relay too.
 */
export function cloudCatalogue(definitions: readonly RoleDefinition[]): ToolCatalogue {
  const registry = new McpToolRegistry();
  const gateway = definitions.find((d) => d.name === 'gateway');
  for (const plugin of bootOrder(gateway?.plugins ?? [])) for (const tool of plugin.tools) registry.register(tool);
  return toolCatalogue(registry);
}

async function startCloudRole({ config, file, logger: processLogger, env, definitions, signal }: RoleStartFacts): Promise<StartedRole> {
  const logger = processLogger.child({ role: 'cloud' });
  const dataDir = resolve(config.dataDir);
  const { host, port } = cloudRoleSettings(config);
  let role: CloudRole;
  try {
    // A token database on PostgreSQL that does not answer yet is waited for, the probes answering on the role's port meanwhile.
    const whileWaiting = { host, port, ...(signal ? { signal } : {}) };
    role = await CloudRole.create({ dataDir, logger, version: packageVersion(), catalogue: cloudCatalogue(definitions), config, env, whileWaiting });
  } catch (err) {
    if (err instanceof StartCancelled) throw err;
    throw new RoleStartError(`cloud relay failed to start (config ${file}, cloud.mqttPort / CLOUD_MQTT_PORT, cloud.brokerUrl):\n${(err as Error).message}`, 1);
  }
  if (signal?.aborted) {
    await role.stop();
    throw new StartCancelled('the cloud relay\'s start');
  }
  let url: string;
  try {
    url = await role.listen(host, port);
  } catch (err) {
    await role.stop();
    throw listenFailed('cloud relay', file, { host, port, hostField: 'cloud.host', portField: 'cloud.port', portVariable: 'CLOUD_PORT' }, err);
  }
  const tokens = await role.tokens.list();
  const broker = role.context.services.get('cloud.broker');
  return {
    banner: cloudBannerSection({
      version: packageVersion(), configFile: file, dataDir, url, brokerUrl: broker.url, embedded: broker.embedded !== undefined, tokens: tokens.filter((t) => t.revokedAt === null).length, sharedTokens: role.sharedTokens,
      networkUrls: networkUrls(url, host), announcements: role.runtime.announcements,
    }),
    stop: { name: 'cloud relay (HTTP server, relay, broker, database)', stop: () => role.stop(), detail: () => `HTTP ${role.runtime.listening ? 'still listening' : 'closed'}` },
  };
}

export const cloudRole = defineRole({
  name: 'cloud',
  databaseFile: CLOUD_DATABASE_FILE,
  // The cloud runs elsewhere, on its own: only when named.
  startsByDefault: false,
  config: [CLOUD_ROLE_PART],
  // Last: the gateways in this process call it.
  stopRank: 30,
  plugins: CLOUD_PLUGINS,
  commands: [cloudTokenCommand],
  sharedDatabase: (config, env) => tokenDatabaseSource(cloudRoleSettings(config), env)?.url,
  start: startCloudRole,
});

/**
 * The gateway's link to a cloud relay (link.ts), its status as the service
 * `cloud-link`, and /api/security/cloud-link/set|remove (interfaces.ts); the
 * `cloudLink` section overlaid with cloud-link.json (settings.ts).
 */
import { join } from 'node:path';
import { readConfigFile } from '../../core/config/config.js';
import { createToolDispatcher } from '../../core/mcp/dispatch.js';
import { definePlugin } from '../../core/runtime/plugin-host.js';
import type { GatewayContext } from '../../core/roles/gateway/context.js';
import { CLOUD_LINK_ALIASES, CLOUD_LINK_FIELDS, type CloudLinkConfig } from './config.js';
import { defineCloudLinkInterfaces } from './interfaces.js';
import { CloudLink } from './link.js';
import { CLOUD_LINK_FILE, linkSettings, readStoredSettings, TOKEN_HINT, type StoredSettings } from './settings.js';

export { CLOUD_LINK_FILE };

/** The client certificate and key of `cloudLink.certFile`/`keyFile`, read at start; one without the other is a mistake naming the missing one. */
function clientCertificate(config: CloudLinkConfig | undefined): { cert?: Buffer; key?: Buffer } {
  if (!config || (config.certFile === undefined && config.keyFile === undefined)) return {};
  if (config.certFile === undefined || config.keyFile === undefined) {
    const [given, missing] = config.certFile === undefined ? ['keyFile', 'certFile'] : ['certFile', 'keyFile'];
    throw new Error(`cloudLink.${missing}: needed with cloudLink.${given} (the gateway's client certificate and its key, PEM files)`);
  }
  return { cert: readConfigFile(config.certFile, 'cloudLink.certFile'), key: readConfigFile(config.keyFile, 'cloudLink.keyFile') };
}
export const cloudLinkPlugin = definePlugin<GatewayContext, typeof CLOUD_LINK_FIELDS, true>({
  name: 'cloud-link',
  dependsOn: ['mcp', 'auth'],
  keeps: { files: [CLOUD_LINK_FILE] },
  config: { section: 'cloudLink', fields: CLOUD_LINK_FIELDS, optional: true, aliases: CLOUD_LINK_ALIASES },
  register(ctx) {
    const config = ctx.settings;
    const logger = ctx.logger.child({ component: 'cloud-link' });
    const file = join(ctx.dataDir, CLOUD_LINK_FILE);
    const settingsFrom = (stored: StoredSettings) => linkSettings(config, ctx.env, stored);
    const link = new CloudLink({
      dispatcher: createToolDispatcher(ctx), principalFor: (user) => ctx.interfaces.accessPolicy.principalFor(user), identity: ctx.identity, version: ctx.version, logger, now: ctx.now,
      ...(config ? { keepaliveSeconds: config.keepaliveSeconds, reconnectCapMs: config.reconnectMaxSeconds * 1000 } : {}),
      // A private CA for an mqtts broker, the gateway's client certificate; a file that cannot be read is a config mistake, reported at start.
      ...(config?.caFile !== undefined ? { ca: readConfigFile(config.caFile, 'cloudLink.caFile') } : {}),
      ...clientCertificate(config),
    });
    ctx.services.provide('cloud-link', { status: () => link.status() });
    // A config section without a token is a config mistake, reported at start.
    const initial = settingsFrom(readStoredSettings(file));
    if (config && !initial) throw new Error(`cloudLink.accessToken: ${TOKEN_HINT}; set it in the config or in GATEWAY_CLOUD_TOKEN`);
    if (initial) link.start(initial);
    defineCloudLinkInterfaces({ interfaces: ctx.interfaces, link, file, settingsFrom, logger });
    return { stop: () => link.close() };
  },
});

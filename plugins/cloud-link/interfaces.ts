/**
 * /api/security/cloud-link/set and /remove: an administrator sets or
 * replaces the broker, token and user of the cloud link without a restart.
 * What is set is kept in `<dataDir>/cloud-link.json` (mode 0600) and wins
 * over the config until removed. Both answer the link status, never the
 * token; one change runs at a time (`CloudLink.serially`), so a set racing
 * a remove cannot leave two links.
 */
import { SECURITY } from '../../core/roles/gateway/contract/security.js';
import { rmSync } from 'node:fs';
import type { Logger } from 'pino';
import { parseBearerToken } from '../../core/auth/bearer-tokens.js';
import { GATEWAY_TOKEN_PREFIX } from '../../core/cloud-wire/protocol.js';
import { GatewayError } from '../../core/interfaces/errors.js';
import type { InterfaceRegistry } from '../../core/interfaces/registry.js';
import type { CloudLink } from './link.js';
import { readStoredSettings, shownUrl, TOKEN_HINT, writeStoredSettings, type LinkSettings, type StoredSettings } from './settings.js';

export interface CloudLinkInterfaceDeps {
  interfaces: InterfaceRegistry;
  link: CloudLink;
  /** `<dataDir>/cloud-link.json`. */
  file: string;
  /** The settings the link runs with: the config's overlaid with `stored`. */
  settingsFrom(stored: StoredSettings): LinkSettings | undefined;
  logger: Logger;
}

export function defineCloudLinkInterfaces({ interfaces, link, file, settingsFrom, logger }: CloudLinkInterfaceDeps): void {
  interfaces.implement(SECURITY.setCloudLink, {
    handler: (input) =>
      link.serially(async () => {
        if (input.brokerUrl === undefined && input.accessToken === undefined && input.user === undefined) {
          throw new GatewayError('INVALID_PARAMETER', 'give at least one of brokerUrl, accessToken, user');
        }
        if (input.accessToken !== undefined && !parseBearerToken(GATEWAY_TOKEN_PREFIX, input.accessToken)) {
          throw new GatewayError('INVALID_PARAMETER', `accessToken: ${TOKEN_HINT}`);
        }
        if (input.user !== undefined && !interfaces.accessPolicy.principalFor(input.user)) {
          throw new GatewayError('INVALID_PARAMETER', `user: no user '${input.user}' on this gateway; add it first (/api/security/user/add)`);
        }
        const stored: StoredSettings = { ...readStoredSettings(file), ...input };
        const next = settingsFrom(stored);
        if (!next) throw new GatewayError('INVALID_PARAMETER', `${stored.brokerUrl ? 'accessToken' : 'brokerUrl'} is needed too: the link has none yet`);
        writeStoredSettings(file, stored);
        await link.replace(next);
        logger.info({ broker: shownUrl(next.brokerUrl), user: next.user }, 'cloud link set through the API');
        return link.status();
      }),
  });
  interfaces.implement(SECURITY.removeCloudLink, {
    handler: () =>
      link.serially(async () => {
        rmSync(file, { force: true });
        const fromConfig = settingsFrom({});
        await link.replace(fromConfig);
        logger.info({ configured: fromConfig !== undefined }, 'cloud link settings from the API removed');
        return link.status();
      }),
  });
}

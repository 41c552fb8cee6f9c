/**
 * The gateways' broker clients on an external Mosquitto, kept by the cloud
 * through its dynamic security plugin (core/mqtt/dynamic-security.ts) when
 * the `cloud` section has `dynamicSecurity` beside `brokerUrl`: a token's
 * client is added when the token is made (its whole token is its password,
 * and the cloud holds it only then), the old one removed when it is rotated
 * or revoked. Both the running cloud (plugins/cloud-broker, cloud-admin) and
 * `npm run cloud-token` use this, so either may change a token.
 */
import type { Logger } from 'pino';
import { readConfigFile } from '../../config/config.js';
import { MosquittoDynamicSecurity, type DynamicSecurityOptions } from '../../mqtt/dynamic-security.js';
import type { GatewayTokens } from './tokens.js';

/** What the cloud needs of the broker's user management. */
export interface GatewayUsers {
  /** Adds (or sets the password of) the broker client of a token: user = token id, password = the whole token. */
  addGateway(tokenId: string, token: string): Promise<void>;
  /** Removes a token's broker client; the broker ends its connection at once, without its will. */
  removeGateway(tokenId: string): Promise<void>;
}

/** The parts of the `cloud` section this reads. */
export interface GatewayUsersSection {
  brokerUrl?: string | undefined;
  dynamicSecurity?: { username?: string | undefined } | undefined;
  brokerTls?: { caFile?: string | undefined; certFile?: string | undefined; keyFile?: string | undefined } | undefined;
}

/** The TLS options of the cloud's clients of an external broker (`cloud.brokerTls`): the relay's and the dynamic security admin's. */
export interface BrokerTls {
  ca?: Buffer;
  cert?: Buffer;
  key?: Buffer;
}

/** Reads `cloud.brokerTls`'s files; a file that cannot be read, or a certificate without its key (or the reverse), is named. */
export function brokerTlsOf(section: GatewayUsersSection): BrokerTls {
  const t = section.brokerTls;
  if (!t) return {};
  if ((t.certFile === undefined) !== (t.keyFile === undefined)) {
    const [given, missing] = t.certFile === undefined ? ['keyFile', 'certFile'] : ['certFile', 'keyFile'];
    throw new DynamicSecurityConfigError(`cloud.brokerTls.${missing}: needed with cloud.brokerTls.${given} (the cloud's client certificate and its key, PEM files)`);
  }
  return {
    ...(t.caFile !== undefined ? { ca: readConfigFile(t.caFile, 'cloud.brokerTls.caFile') } : {}),
    ...(t.certFile !== undefined && t.keyFile !== undefined ? { cert: readConfigFile(t.certFile, 'cloud.brokerTls.certFile'), key: readConfigFile(t.keyFile, 'cloud.brokerTls.keyFile') } : {}),
  };
}

/** A mistake in `cloud.dynamicSecurity`, named at start. */
export class DynamicSecurityConfigError extends Error {}

/**
 * The connection options of the cloud's dynamic security admin client, or
 * undefined when the section has no `dynamicSecurity`; throws naming the
 * field or variable that is missing.
 */
export function gatewayUsersOptions(section: GatewayUsersSection, env: NodeJS.ProcessEnv, topicPrefix: string, connect?: DynamicSecurityOptions['connect']): DynamicSecurityOptions | undefined {
  const d = section.dynamicSecurity;
  if (!d) return undefined;
  if (!section.brokerUrl) {
    throw new DynamicSecurityConfigError('cloud.dynamicSecurity: only meaningful with cloud.brokerUrl (an external Mosquitto); the embedded broker checks the tokens itself. Remove the section or name the broker in cloud.brokerUrl');
  }
  const username = d.username ?? (env.CLOUD_DYNSEC_USERNAME || undefined);
  if (!username) throw new DynamicSecurityConfigError('cloud.dynamicSecurity.username: the cloud\'s broker admin client (mosquitto_ctrl dynsec init); set it there or in CLOUD_DYNSEC_USERNAME');
  const password = env.CLOUD_DYNSEC_PASSWORD;
  if (!password) throw new DynamicSecurityConfigError(`CLOUD_DYNSEC_PASSWORD: the password of the broker admin client '${username}' (cloud.dynamicSecurity) is not set`);
  const tls = connect ?? brokerTlsOf(section);
  return { url: section.brokerUrl, username, password, topicPrefix, ...(Object.keys(tls).length > 0 ? { connect: tls } : {}) };
}

/** Connects the admin client; a broker that refuses it or cannot be reached is named in the error. */
export async function connectGatewayUsers(options: DynamicSecurityOptions): Promise<MosquittoDynamicSecurity> {
  try {
    return await MosquittoDynamicSecurity.connect(options);
  } catch (err) {
    throw new Error(`cloud.dynamicSecurity: could not connect to ${options.url} as '${options.username}': ${(err as Error).message}`, { cause: err });
  }
}

/**
 * Brings the broker in line with the tokens at start: the clients the cloud
 * made whose tokens are revoked or unknown are removed; a valid token
 * without a client cannot get one (its secret is not kept) and is logged,
 * to be rotated. Clients the cloud did not make are never touched.
 */
export async function reconcileGatewayUsers(dynsec: MosquittoDynamicSecurity, tokens: GatewayTokens, logger: Logger): Promise<{ removed: string[]; missing: string[] }> {
  const clients = new Set(await dynsec.gatewayClients());
  const valid = new Set((await tokens.list()).filter((t) => t.revokedAt === null).map((t) => t.id));
  const removed = [...clients].filter((id) => !valid.has(id));
  for (const id of removed) await dynsec.removeGateway(id);
  if (removed.length > 0) logger.info({ tokenIds: removed }, 'cloud: broker clients of revoked or unknown gateway tokens removed');
  const missing = [...valid].filter((id) => !clients.has(id));
  for (const id of missing) {
    logger.warn({ tokenId: id }, `cloud: gateway token ${id} has no broker client and the cloud cannot make one (it keeps only the token's hash); rotate it (POST /admin/gateway-tokens/${id}/rotate or npm run cloud-token -- rotate ${id}) and give the gateway the new token`);
  }
  return { removed, missing };
}

/**
 * The context every plugin of the `cloud` role receives: the runtime's
 * store, clock and logger, the role's HTTP app, its token tables, the tool
 * catalogue it serves, and the registries its plugins meet on (events on
 * `bus`, services on `services`). The services the cloud's own plugins
 * provide are declared here, so that a plugin uses another's service
 * without importing it: `cloud.broker` (plugins/cloud-broker) and
 * `cloud.relay` (plugins/cloud-relay).
 */
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { JoinedAnswer, RelayRequest } from '../../cloud-wire/protocol.js';
import type { EventBus } from '../../runtime/event-bus.js';
import type { ToolCatalogue } from '../../mcp/dispatch.js';
import type { InProcessBroker } from '../../mqtt/broker.js';
import type { RetryStatus } from '../../mqtt/reconnect.js';
import type { ServiceRegistry } from '../../runtime/services.js';
import type { Database } from '../../store/database.js';
import type { SqlDatabase } from '../../store/sql-database.js';
import type { GatewayUsers } from './gateway-users.js';
import type { AdminKeys, GatewayTokens } from './tokens.js';

/** The cloud's events; plugins add theirs by declaration merging. */
export interface CloudEvents {
  /**
   * A gateway token stopped being valid (revoked or rotated): its gateway's
   * connection ends. In this process, or `elsewhere`: on another instance
   * or by the CLI, read from the database (revocation-feed.ts).
   */
  'token.revoked': { tokenId: string; elsewhere?: boolean };
}

/** How the cloud reaches an external broker as a client. */
export interface BrokerConnection {
  url: string;
  username?: string;
  password?: string;
  /** 5 on an MQTT 5 broker (request/response properties); 4 on one that speaks 3.1.1 only. */
  protocolVersion: 4 | 5;
  topicPrefix: string;
  /** The longest wait between two attempts to connect (DEFAULT_RETRY_CAP_MS unless told). */
  reconnectMaxMs?: number;
  /** With mqtts: a private CA, the cloud's client certificate and key (`cloud.brokerTls`). */
  tls?: { ca?: Buffer; cert?: Buffer; key?: Buffer };
}

/** The broker the gateways dial: the embedded one, or an external one the relay connects to. */
export interface CloudBroker {
  /** The broker's URL as the banner shows it. */
  url: string;
  /** The embedded broker; undefined with an external one. */
  embedded?: InProcessBroker;
  /** How to reach the external broker; undefined with the embedded one. */
  connection?: BrokerConnection;
  /** Ends the connections of the gateway of this token id (on the embedded broker; an external broker's ACL is its own); how many were ended. */
  disconnect(tokenId: string): number;
  /** The gateways' broker clients on an external Mosquitto, with `cloud.dynamicSecurity`; undefined otherwise (gateway-users.ts). */
  users?: GatewayUsers;
}

/**
 * A relayed call's end: the gateway's answer (its text as a JSON string
 * literal, in parts, which the caller checks where it joins them), or why
 * there is none.
 */
export type RelayOutcome = ({ ok: true } & JoinedAnswer) | { ok: false; reason: 'offline' | 'timeout' | 'malformed' };

/** The relay between MCP clients and gateways (plugins/cloud-relay). */
export interface CloudRelayService {
  /** This instance's id, in its response topics. */
  readonly instanceId: string;
  /** Whether the gateway of this token is connected now. */
  isOnline(tokenId: string): boolean;
  /** Gateways connected now, by token id. */
  onlineGateways(): string[];
  /** The connection to an external broker: connecting, connected or retrying (undefined inside the embedded broker). */
  brokerLink(): RetryStatus | undefined;
  /** Sends one tool call to the token's gateway and waits for its answer until `deadlineMs`. */
  call(tokenId: string, params: RelayRequest['params'], deadlineMs: number, correlationId: string): Promise<RelayOutcome>;
  /** The gateway of this token is gone (its token revoked): unavailable from now on, its pending calls ended. */
  forget(tokenId: string): void;
}

/** Services the cloud's plugins provide to each other; other plugins add theirs by declaration merging. */
export interface CloudServices {
  'cloud.broker': CloudBroker;
  'cloud.relay': CloudRelayService;
}

/** What a program that builds the cloud itself (tests, benchmarks) may give beyond the configuration. */
export interface CloudExtras {
  /** The embedded broker's certificate and key as PEM, instead of the files `cloud.mqttTls` names. */
  mqttTls?: { key: string | Buffer; cert: string | Buffer };
  /** The MQTT version spoken to an external broker; 5 unless told. */
  brokerProtocolVersion?: 4 | 5;
}

export interface CloudContext {
  /** The role's data directory (shared with the other roles; the database file is its own). */
  dataDir: string;
  /** The role's database, `cloud.db` in the data directory. */
  db: Database;
  /** Where the tokens live: `db`, or the PostgreSQL database of CLOUD_DATABASE_URL / `cloud.databaseUrl` (token-database.ts). */
  tokenDb: SqlDatabase;
  logger: Logger;
  /** Current time, unix ms. */
  now: () => number;
  /** Software version. */
  version: string;
  /** Environment for secrets that never live in files (CLOUD_BROKER_PASSWORD, CLOUD_DYNSEC_PASSWORD). */
  env: NodeJS.ProcessEnv;
  /** The HTTP app: /mcp and /admin. */
  http: FastifyInstance;
  /** The gateway tokens (cgw_…): a gateway's broker credential and what an MCP client sends to select it. */
  tokens: GatewayTokens;
  /** The admin keys (cadm_…) of /admin. */
  adminKeys: AdminKeys;
  /** `cloud.topicPrefix`: the first levels of every topic of the relay. */
  topicPrefix: string;
  /** `cloud.allowedOrigins`: the browser origins every route of the listener accepts (/mcp and /admin). */
  allowedOrigins: readonly string[];
  /** The tools the cloud lists and relays: the gateway's (definition.ts, `cloudCatalogue`). */
  catalogue: ToolCatalogue;
  /** The role's event bus; plugins meet on it without importing each other. */
  bus: EventBus<CloudEvents>;
  /** Services plugins provide to each other (`CloudServices`). */
  services: ServiceRegistry<CloudServices>;
  extras: CloudExtras;
}

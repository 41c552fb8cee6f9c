/**
 * The `cloud` role: one MCP endpoint for many gateways (docs/cloud-relay.md).
 * Built on RoleRuntime like the other roles: `cloud.db` in the data
 * directory holds its tokens (tokens.ts), or a PostgreSQL database several
 * instances share (token-database.ts), and its plugins (compose.ts) do
 * the rest on its context (context.ts): the broker the gateways dial out to
 * (cloud-broker), the relay through it (cloud-relay), /mcp (cloud-mcp) and
 * /admin/gateway-tokens (cloud-admin).
 *
 * `CloudRole.create` is also how tests and benchmarks build a cloud: from
 * the parsed configuration (its `cloud` section), or from options that make
 * that section.
 */
import Fastify from 'fastify';
import { EventBus } from '../../runtime/event-bus.js';
import { installJsonBodyParser } from '../../http/json-body.js';
import { MCP_BODY_LIMIT } from '../../mcp/http-door.js';
import type { InProcessBroker } from '../../mqtt/broker.js';
import { RoleRuntime } from '../../runtime/runtime.js';
import { ServiceRegistry } from '../../runtime/services.js';
import type { Logger } from 'pino';
import type { ReadinessCheck } from '../../runtime/health.js';
import { unavailableReason } from '../../store/database-unavailable.js';
import { describePostgres, PostgresDatabase, type DatabaseFailure } from '../../store/postgres-database.js';
import { roleTlsFiles } from '../../http/tls.js';
import { CLOUD_PLUGINS } from './compose.js';
import { cloudRoleSettings } from './config.js';
import type { CloudContext, CloudRelayService } from './context.js';
import { recordCloudStart } from './cloud-starts.js';
import { cloudSection, envOf, extrasOf, type CloudRoleOptions } from './options.js';
import { followRevocations } from './revocation-feed.js';
import { openTokenPostgres, tokenDatabaseSource, type TokenDatabaseSource } from './token-database.js';
import { AdminKeys, CLOUD_MIGRATIONS, GatewayTokens } from './tokens.js';
import { traceHttp } from '../../telemetry/http.js';

export type { CloudRoleOptions };

export const CLOUD_DATABASE_FILE = 'cloud.db';

export class CloudRole {
  private constructor(
    readonly runtime: RoleRuntime,
    readonly context: CloudContext,
  ) {}

  get tokens(): GatewayTokens {
    return this.context.tokens;
  }

  get adminKeys(): AdminKeys {
    return this.context.adminKeys;
  }

  /** The PostgreSQL server and database of the tokens (without credentials); undefined when they are in cloud.db. */
  get sharedTokens(): string | undefined {
    const db = this.context.tokenDb;
    return db instanceof PostgresDatabase ? db.target : undefined;
  }

  get relay(): CloudRelayService {
    return this.context.services.get('cloud.relay');
  }

  /** The embedded broker; undefined with an external one. */
  get broker(): InProcessBroker | undefined {
    return this.context.services.get('cloud.broker').embedded;
  }

  /** The embedded broker's URL, for gateways to dial (undefined with an external broker). */
  get brokerUrl(): string | undefined {
    return this.broker?.url;
  }

  static async create(options: CloudRoleOptions): Promise<CloudRole> {
    const now = options.now ?? Date.now;
    const { logger } = options;
    const plugins = options.plugins ?? CLOUD_PLUGINS;
    const config = { cloud: cloudSection(options, plugins) };
    const settings = cloudRoleSettings(config);
    const { topicPrefix, allowedOrigins, tls: ownTls, rateLimits } = settings;
    const env = envOf(options);
    // `cloud.tls`, else TLS_CERT_FILE/TLS_KEY_FILE; a wrong pair stops the start naming the file.
    const tls = roleTlsFiles(ownTls, env);
    // The tokens on PostgreSQL (shared by several instances), or in cloud.db beside the rest.
    const shared = tokenDatabaseSource(settings, env);
    const runtime = await RoleRuntime.open({
      role: 'cloud', dataDir: options.dataDir, databaseFile: CLOUD_DATABASE_FILE, logger, now, ...(shared ? {} : { baseMigrations: CLOUD_MIGRATIONS }),
      rateLimits, metricsToken: options.metricsToken ?? options.config?.metricsToken ?? '', ...(tls ? { tls, ...(options.config ? { tlsPolicy: options.config.tls } : {}) } : {}),
      ...(options.whileWaiting ? { whileWaiting: options.whileWaiting } : {}),
    });
    try {
      const tokenDb = shared ? await openSharedTokens(runtime, shared, now, logger) : undefined;
      if (tokenDb) {
        runtime.onStop('token database', () => tokenDb.close());
        runtime.readiness.add('token-database', tokenDatabaseCheck(tokenDb));
      }
      // Recorded where the tokens are, so that npm run cloud-token can tell a database no cloud uses.
      await recordCloudStart(tokenDb ?? runtime.db, now());
      // The largest body any route of the cloud reads; /admin's own are smaller.
      const http = Fastify({ logger: false, bodyLimit: MCP_BODY_LIMIT, ...runtime.serverOptions() });
      traceHttp(http, runtime.role);
      // Bodies as on every surface: depth-checked, securely parsed, every string well-formed Unicode (core/http/json-body.ts).
      installJsonBodyParser(http);
      const context: CloudContext = {
        dataDir: runtime.dataDir, db: runtime.db, tokenDb: tokenDb ?? runtime.db, logger, now, version: options.version, env, http,
        tokens: await GatewayTokens.open(tokenDb ?? runtime.db, now), adminKeys: await AdminKeys.open(tokenDb ?? runtime.db, now),
        topicPrefix, allowedOrigins, catalogue: options.catalogue,
        bus: new EventBus(logger.child({ component: 'bus' })), services: new ServiceRegistry('cloud'),
        extras: extrasOf(options),
      };
      await runtime.startPlugins(plugins, context, http, { config });
      // Revocations by other instances and the CLI: their gateways unavailable here too (the plugins listen on the bus).
      const stopFollowing = await followRevocations(context.tokens, context.bus, settings.revocationPollMs, logger);
      runtime.onStop('revocation feed', async () => stopFollowing());
      await http.ready();
      return new CloudRole(runtime, context);
    } catch (err) {
      await runtime.stop().catch(() => undefined);
      throw err;
    }
  }

  listen(host: string, port: number): Promise<string> {
    return this.runtime.listen(host, port);
  }

  stop(): Promise<void> {
    return this.runtime.stop();
  }
}

/** The tokens' PostgreSQL database, waited for as the runtime waits for a role's own when the role is told to wait. */
function openSharedTokens(runtime: RoleRuntime, source: TokenDatabaseSource, now: () => number, logger: Logger): Promise<PostgresDatabase> {
  const onError = (failure: DatabaseFailure) => logger.warn({ failure }, 'an idle PostgreSQL connection of the token database failed; the pool replaces it');
  return runtime.waitForDatabase('token-database', describePostgres(source.url), () => openTokenPostgres(source, { now, onError }), (db) => db.close());
}

/** The token database's readiness: it answers `SELECT 1`; a server away is `unavailable` with the reason. */
function tokenDatabaseCheck(tokenDb: PostgresDatabase): ReadinessCheck {
  return async () => {
    try {
      return (await tokenDb.get<{ one: number }>('SELECT 1 AS one'))?.one === 1;
    } catch (err) {
      const reason = unavailableReason(err);
      if (reason === undefined) throw err;
      return { unavailable: reason };
    }
  };
}

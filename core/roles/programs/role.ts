/**
 * The program version service as a role: its own database (`programs.db` in
 * the data directory, or PostgreSQL with `databaseUrl`), its own listener (8030 by default), the hash-chained
 * audit, and the plugins that define its `/api/v1` operations. Built on
 * RoleRuntime like the gateway; it knows no fleet.
 */
import type { Logger } from 'pino';
import type { SharedFirstPassword } from '../../auth/first-admin.js';
import type { Plugin } from '../../runtime/plugin-host.js';
import { RoleRuntime } from '../../runtime/runtime.js';
import type { WhileWaiting } from '../../runtime/role-database.js';
import { roleTlsFiles, type TlsFiles, type TlsPolicy } from '../../http/tls.js';
import { AuditChain } from './audit/chain.js';
import { EventBus } from '../../runtime/event-bus.js';
import { ServiceRegistry } from '../../runtime/services.js';
import { RestRegistry } from '../../rest/operation.js';
import { serveRestDocs } from '../../rest/openapi.js';
import { createRestApp, refuseRateLimitedProblem, REST_PREFIX, serveRest } from '../../rest/serve.js';
import { DEFAULT_RATE_LIMITS, type RateLimitSettings } from '../../http/rate-limit.js';
import type { ProgramsContext } from './context.js';
import type { GatewayLink } from '../../gateway-link/types.js';
import type { SqlDatabase } from '../../store/sql-database.js';
import { traceHttp } from '../../telemetry/http.js';
import { traceQueries } from '../../telemetry/queries.js';

export const PROGRAMS_DATABASE_FILE = 'programs.db';

export interface ProgramsRoleOptions {
  dataDir: string;
  /** A PostgreSQL connection string (`programs.databaseUrl`, PROGRAMS_DATABASE_URL); `programs.db` in `dataDir` without it. */
  databaseUrl?: string | undefined;
  timeZone: string;
  plugins: readonly Plugin<ProgramsContext>[];
  logger: Logger;
  version: string;
  now?: () => number;
  env?: NodeJS.ProcessEnv;
  /** The process's first-start password shared by its roles' administrators (core/auth/first-admin.ts). */
  sharedFirstPassword?: SharedFirstPassword | undefined;
  /** Whether the listener is reached over TLS through a proxy in front; cookies then carry Secure and the __Host- prefix (as they do when the listener serves TLS itself). */
  secure?: boolean;
  /** The listener's own certificate and key (`programs.tls`); TLS_CERT_FILE/TLS_KEY_FILE of `env` otherwise. */
  tls?: TlsFiles;
  /** The versions and suites the listener offers (the configuration's `tls`); the modern default without. */
  tlsPolicy?: TlsPolicy;
  trustProxy?: false | string[];
  /** The gateway in the same process, registered at first start and reached without a key. */
  localGateway?: GatewayLink;
  /** The parsed configuration, from which each plugin reads its part (core/config/config-parts.ts: the webhooks' `programs.webhooks`, the accounts' `programs.oidc`, …); their defaults without one. */
  config?: object;
  /** `programs.rateLimits`; the defaults unless told. */
  rateLimits?: RateLimitSettings;
  /** The configuration's `metricsToken` (METRICS_TOKEN); one made at the first start without. */
  metricsToken?: string;
  /** Wait for a PostgreSQL database that does not answer at start, serving the probes here meanwhile (core/runtime/database-wait.ts); without, such a start fails at once. */
  whileWaiting?: WhileWaiting;
}

const DESCRIPTION = [
  'The program version service: libraries, programs and immutable versions, approvals with separation of duties, an NC-aware diff and a hash-chained audit.',
  `Every path is under ${REST_PREFIX}; bodies are JSON. Failures are RFC 9457 problem documents (application/problem+json) with an \`errors\` list naming each bad field.`,
  'Authenticate with the session cookie from POST /api/v1/auth/login (unsafe methods also send X-CSRF-Token) or a service token as Authorization: Bearer.',
].join('\n\n');

export class ProgramsRole {
  private constructor(
    readonly runtime: RoleRuntime<SqlDatabase>,
    readonly context: ProgramsContext,
    private readonly started: { names: () => readonly string[] },
  ) {}

  static async create(options: ProgramsRoleOptions): Promise<ProgramsRole> {
    const now = options.now ?? Date.now;
    const env = options.env ?? process.env;
    const tls = roleTlsFiles(options.tls, env);
    const runtime = await RoleRuntime.open({
      role: 'programs', dataDir: options.dataDir, databaseFile: PROGRAMS_DATABASE_FILE, databaseUrl: options.databaseUrl, logger: options.logger, now,
      rateLimits: options.rateLimits ?? DEFAULT_RATE_LIMITS, refuse: refuseRateLimitedProblem, ...(options.whileWaiting ? { whileWaiting: options.whileWaiting } : {}), ...(options.metricsToken ? { metricsToken: options.metricsToken } : {}), ...(tls ? { tls, ...(options.tlsPolicy ? { tlsPolicy: options.tlsPolicy } : {}) } : {}),
    });
    try {
      const audit = await AuditChain.open(runtime.db, { timeZone: options.timeZone, clock: now });
      const rest = new RestRegistry();
      const http = createRestApp(options.logger.child({ component: 'http' }), { trustProxy: options.trustProxy ?? false, ...runtime.serverOptions() });
      traceHttp(http, runtime.role);
      const context: ProgramsContext = {
        dataDir: runtime.dataDir,
        // Its queries are spans under the request's while tracing is on.
        db: traceQueries(runtime.db),
        audit,
        rest,
        bus: new EventBus(options.logger.child({ component: 'bus' })),
        services: new ServiceRegistry('programs'),
        timeZone: options.timeZone,
        now,
        version: options.version,
        // A metrics token made at this start, shown once in the banner.
        announcements: [...runtime.announcements],
        env,
        ...(options.sharedFirstPassword ? { sharedFirstPassword: options.sharedFirstPassword } : {}),
        // The role's own TLS counts as a proxy's does: the session cookie takes Secure and __Host-.
        secure: (options.secure ?? false) || runtime.secure,
        ...(options.localGateway ? { localGateway: options.localGateway } : {}),
        http,
        logger: options.logger,
      };
      const started = await runtime.startPlugins(options.plugins, context, http, options.config ? { config: options.config } : {});
      serveRest(http, rest);
      await serveRestDocs(http, rest, { title: 'Program version service', version: options.version, description: DESCRIPTION }, options.logger);
      await http.ready();
      return new ProgramsRole(runtime, context, started);
    } catch (err) {
      await runtime.stop().catch(() => undefined);
      throw err;
    }
  }

  pluginNames(): readonly string[] {
    return this.started.names();
  }

  /** Listens (port 0 picks a free one); returns the base URL. */
  listen(host: string, port: number): Promise<string> {
    return this.runtime.listen(host, port);
  }

  stop(): Promise<void> {
    return this.runtime.stop();
  }
}

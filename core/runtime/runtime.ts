/**
 * The runtime a role is built on: the role's data directory and database
 * file, its HTTP listener, its plugin host (plugins' migrations on the
 * role's database, boot in dependency order, stop in reverse), its logger
 * and clock. It knows no fleet and no vault: the gateway role
 * (core/roles/gateway/gateway.ts) and the program service role (core/roles/programs/role.ts)
 * each build their own context on it.
 *
 * With `tls` (a certificate and key file) the pair is checked when the
 * role opens (a TlsError naming the wrong file stops the start), the role
 * builds its app with `serverOptions()` so it serves HTTPS, and from
 * `listen` on the pair is reloaded on a file change or SIGHUP
 * (core/http/tls.ts); every answer then carries Strict-Transport-Security.
 *
 * Every answer of every role's app carries the security headers of
 * core/http/response-headers.ts (nosniff, no-store unless the route sets a cache
 * policy, a page policy for HTML), and it also answers, from `startPlugins` on:
 * - `/healthz` and `/readyz` (core/runtime/health.ts): ready once the database
 *   answers, the plugins started and the listener is up, plus whatever
 *   checks the role adds (`readiness.add`); not ready from the moment a
 *   stop begins;
 * - `/metrics` (core/telemetry/metrics.ts) for the metrics token, from the role's
 *   own registry (`metrics`), which counts and times every request;
 * - with `rateLimits`, the request limits of core/http/rate-limit.ts, refused in
 *   the surface's format by `refuse` (the gateway's `{errorCode, errorMsg}`
 *   unless told).
 *
 * While open, the runtime holds its database's lock in the data directory
 * (core/store/data-lock.ts): a second process of the same role on the same
 * directory, or a restore, is refused until it stops. With `databaseUrl`
 * the role's database is on PostgreSQL instead (core/store/postgres-database.ts),
 * shared by any number of instances, each with a data directory of its own;
 * the lock is taken all the same, since the directory holds the role's keys,
 * which a restore must not replace under a running role.
 *
 * Stop order: stop taking requests (in-flight ones finish) → plugins in
 * reverse boot order → the role's own closers in reverse order (e.g. the
 * history writer) → the database.
 */
import { resolve } from 'node:path';
import { Server as TlsServer } from 'node:tls';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { PluginHost, type Plugin, type PluginHostOptions } from './plugin-host.js';
import type { SqliteDatabase } from '../store/database.js';
import type { SqlDatabase } from '../store/sql-database.js';
import { unavailableReason } from '../store/database-unavailable.js';
import { openWhenAnswering } from './database-wait.js';
import { openRoleDatabase, type RoleDatabaseSpec, type WhileWaiting } from './role-database.js';
import { WaitingListener } from '../http/waiting-listener.js';
import { prepareDataDirectory, restrictDataDirectory } from '../store/data-directory.js';
import { DataLock } from '../store/data-lock.js';
import { applyMigrations, type Migration } from '../store/migrations.js';
import { HSTS_HEADER, TlsSource, type TlsFiles, type TlsPolicy, type TlsServerOptions } from '../http/tls.js';
import { installResponseHeaders } from '../http/response-headers.js';
import { Readiness, serveProbes, type ReadinessCheck } from './health.js';
import { RoleMetrics, serveMetrics } from '../telemetry/metrics.js';
import { loadMetricsToken, type MetricsToken } from '../telemetry/metrics-token.js';
import { installRateLimits, type RateLimitSettings, type RefuseRequest } from '../http/rate-limit.js';
import { refuseRateLimited } from '../http/http-server.js';
import { systemTimeZone } from '../values/time.js';
import type { GatewayConfig } from '../../config/schema.js';

/** Where every role of a process keeps its files and which zone its wall-clock computations use. */
export interface RuntimeSettings {
  /** The data directory, absolute. */
  dataDir: string;
  /** The configured IANA zone, or else the system's. */
  timeZone: string;
}

/** The runtime's `dataDir` (resolved) and `timeZone` (the system's when empty) of a parsed config. */
export function runtimeSettings(config: Pick<GatewayConfig, 'dataDir' | 'timeZone'>): RuntimeSettings {
  return { dataDir: resolve(config.dataDir), timeZone: config.timeZone || systemTimeZone() };
}

export interface RoleRuntimeOptions {
  /** The role's name: `gateway`, `programs`, … */
  role: string;
  dataDir: string;
  /** The role's database file in the data directory, e.g. `programs.db`. */
  databaseFile: string;
  /** A PostgreSQL connection string: the role's database is there, not in `databaseFile` (docs/databases.md). */
  databaseUrl?: string | undefined;
  logger: Logger;
  now: () => number;
  /** Schema the role itself owns, applied before any plugin's, recorded under `core`. */
  baseMigrations?: readonly Migration[];
  /** Serve HTTPS with this certificate and key (PEM files); plain HTTP without. */
  tls?: TlsFiles;
  /** The protocol versions and TLS 1.2 suites offered (the configuration's `tls`); the modern default of core/http/tls.ts without. */
  tlsPolicy?: TlsPolicy;
  /** The metrics token of the configuration (`metricsToken`, METRICS_TOKEN); one made at the first start when absent or empty. */
  metricsToken?: string;
  /** Limit requests as these settings say (core/http/rate-limit.ts); no limits without. */
  rateLimits?: RateLimitSettings;
  /** How the role's surface answers a request over a limit; the gateway's error format unless told. */
  refuse?: RefuseRequest;
  /**
   * Wait for a database that does not answer at start (PostgreSQL), serving
   * the probes on this address meanwhile (core/runtime/database-wait.ts); without,
   * a database that does not answer fails the open at once.
   */
  whileWaiting?: WhileWaiting;
}

/** What the runtime opened, and the options it keeps for later. */
interface RuntimeParts {
  tls: TlsSource | undefined;
  readiness: Readiness;
  /** The probes' listener while the role waits for a database; closed when the role listens. */
  waiting: WaitingListener | undefined;
  metricsToken: MetricsToken;
  /** The role's lock in the data directory, on either engine. */
  lock: DataLock;
  options: RoleRuntimeOptions;
}

/** `D` is the engine: SQLite unless the role was opened with a `databaseUrl`. */
export class RoleRuntime<D extends SqlDatabase = SqliteDatabase> {
  private host: PluginHost<never> | undefined;
  private readonly closers: { name: string; close: () => Promise<void> }[] = [];
  private http: FastifyInstance | undefined;
  private stopped = false;
  private pluginsStarted = false;
  private readonly tls: TlsSource | undefined;
  /** The role's readiness checks; parts add theirs (`readiness.add('broker', …)`). */
  readonly readiness: Readiness;
  /** The role's metrics registry; parts register their metrics on it (`metrics.counter(…)`). */
  readonly metrics: RoleMetrics;
  /** Lines to show once at this start beside the role's URLs (a metrics token made now); never logged. */
  readonly announcements: string[] = [];

  private constructor(
    readonly role: string,
    readonly dataDir: string,
    readonly db: D,
    readonly logger: Logger,
    readonly now: () => number,
    private readonly parts: RuntimeParts,
  ) {
    this.tls = parts.tls;
    this.readiness = parts.readiness;
    this.metrics = new RoleMetrics(role);
    if (parts.metricsToken.announcement) this.announcements.push(parts.metricsToken.announcement);
    this.readiness.add('database', databaseCheck(db));
    this.readiness.add('plugins', () => this.pluginsStarted);
    this.readiness.add('listener', () => this.listening);
  }

  /** Prepares the data directory (0700), opens the role's database (SQLite, or PostgreSQL with `databaseUrl`) and applies its base schema. */
  static open(options: RoleRuntimeOptions & { databaseUrl?: undefined }): Promise<RoleRuntime<SqliteDatabase>>;
  static open(options: RoleRuntimeOptions): Promise<RoleRuntime<SqlDatabase>>;
  static async open(options: RoleRuntimeOptions): Promise<RoleRuntime<SqlDatabase>> {
    const dataDir = resolve(options.dataDir);
    // A wrong certificate or key stops the start before anything is opened.
    const tls = options.tls ? TlsSource.open(options.tls, options.logger.child({ role: options.role }), options.tlsPolicy) : undefined;
    prepareDataDirectory(dataDir);
    const metricsToken = loadMetricsToken(dataDir, options.metricsToken);
    const lock = DataLock.acquire(dataDir, options.databaseFile, options.role);
    const readiness = new Readiness(options.logger.child({ role: options.role }));
    // While it waits, the probes say the role has not started (the wait says why the database is not there).
    readiness.add('database', () => false);
    readiness.add('plugins', () => false);
    readiness.add('listener', () => false);
    const waiting = options.whileWaiting ? new WaitingListener(readiness, tls?.httpsOptions()) : undefined;
    const parts = { tls, metricsToken, lock, options, readiness, waiting };
    let db: SqlDatabase;
    try {
      db = await openRoleDatabase({ ...options, dataDir, readiness, whileWaiting: waitingFor(parts) });
    } catch (err) {
      await waiting?.close();
      lock.release();
      throw err;
    }
    return new RoleRuntime(options.role, dataDir, db, options.logger, options.now, parts);
  }

  /**
   * Opens another database the role needs (the cloud's tokens on
   * PostgreSQL): with `whileWaiting`, waits for it as for the role's own,
   * its readiness check `check` saying why meanwhile; else `open` as it is.
   */
  waitForDatabase<T>(check: string, target: string, open: () => Promise<T>, close: (db: T) => Promise<void>): Promise<T> {
    const waiting = waitingFor(this.parts);
    if (!waiting) return open();
    return openWhenAnswering(open, close, {
      check, target, readiness: this.readiness, logger: this.logger, signal: waiting.wait.signal, onFirstFailure: waiting.onFirstFailure,
      ...(waiting.wait.backoff ? { backoff: waiting.wait.backoff } : {}),
    });
  }

  /** What the role's fastify app is built with: `{https}` when the role serves TLS, else nothing. */
  serverOptions(): { https?: TlsServerOptions } {
    return this.tls ? { https: this.tls.httpsOptions() } : {};
  }

  /** Whether the listener serves HTTPS. */
  get secure(): boolean {
    return this.tls !== undefined;
  }

  /** Registers something the role opened itself, closed after the plugins stop (in reverse order of registration). */
  onStop(name: string, close: () => Promise<void>): void {
    this.closers.push({ name, close });
  }

  /**
   * Adds the probes, /metrics, the request metrics, the rate limits and
   * (over TLS) HSTS to `http`; applies the plugins' migrations on the role's
   * database, registers their tools (`options.tools`), then boots them with
   * `context` and their config parts read from `options.config`; on failure
   * stops what started. Files the plugins create in the data directory
   * (keys) are restricted to 0600 afterwards.
   */
  async startPlugins<Ctx>(plugins: readonly Plugin<Ctx>[], context: Ctx, http: FastifyInstance, options: PluginHostOptions = {}): Promise<{ names: () => readonly string[] }> {
    const facilities = { metrics: this.metrics, readiness: this.readiness };
    const host = new PluginHost<Ctx>(plugins, this.logger, (owner, migrations) => applyMigrations(this.db, owner, migrations, this.now), { ...options, facilities });
    this.host = host as unknown as PluginHost<never>;
    this.http = http;
    installResponseHeaders(http);
    if (this.tls) http.addHook('onRequest', async (_request, reply) => void reply.header('strict-transport-security', HSTS_HEADER));
    serveProbes(http, this.readiness);
    serveMetrics(http, this.metrics, this.parts.metricsToken);
    const { rateLimits, refuse } = this.parts.options;
    if (rateLimits) await installRateLimits(http, rateLimits, refuse ?? refuseRateLimited, this.metrics);
    await host.start(context);
    this.pluginsStarted = true;
    restrictDataDirectory(this.dataDir);
    return { names: () => host.names() };
  }

  /** Names of the started plugins, in boot order (those started so far while they start). */
  pluginNames(): readonly string[] {
    return this.host?.names() ?? [];
  }

  /** Listens on `host`:`port` (port 0 picks a free one); returns the base URL a person would open. */
  async listen(host: string, port: number): Promise<string> {
    if (!this.http) throw new Error(`role ${this.role}: start the plugins before listening`);
    if (this.tls && !(this.http.server instanceof TlsServer)) throw new Error(`role ${this.role}: serves TLS, so its app must be built with runtime.serverOptions()`);
    // The probes' listener of the wait gives the port to the role's app (the same one when the OS chose it for 0).
    const waited = this.parts.waiting?.port;
    await this.parts.waiting?.close();
    await this.http.listen({ host, port: port === 0 && waited !== undefined ? waited : port });
    if (this.tls) this.tls.attach(this.http.server as unknown as TlsServer);
    const address = this.http.server.address();
    const actualPort = typeof address === 'object' && address ? address.port : port;
    const shownHost = host === '0.0.0.0' || host === '::' ? 'localhost' : host;
    return `${this.tls ? 'https' : 'http'}://${shownHost.includes(':') ? `[${shownHost}]` : shownHost}:${actualPort}`;
  }

  /** Whether the listener still accepts connections. */
  get listening(): boolean {
    return this.http?.server.listening ?? false;
  }

  /** Stops everything in order; safe to call twice. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    this.readiness.markStopping();
    await this.parts.waiting?.close();
    await this.http?.close().catch((err: unknown) => this.logger.error({ err, role: this.role }, 'http close failed'));
    this.tls?.close();
    await this.host?.stop();
    while (this.closers.length) {
      const { name, close } = this.closers.pop() as { name: string; close: () => Promise<void> };
      await close().catch((err: unknown) => this.logger.error({ err, role: this.role, closer: name }, 'close failed'));
    }
    try {
      await this.db.close();
    } finally {
      this.parts.lock.release();
    }
  }
}

/** The database's readiness: it answers `SELECT 1`; a PostgreSQL server away is `unavailable` with the reason. */
function databaseCheck(db: SqlDatabase): ReadinessCheck {
  return async () => {
    try {
      return (await db.get<{ one: number }>('SELECT 1 AS one'))?.one === 1;
    } catch (err) {
      const reason = unavailableReason(err);
      if (reason === undefined) throw err;
      return { unavailable: reason };
    }
  };
}

/** What a wait needs of a runtime's parts: the place and signal, and the probes' listener opened at its first failure. */
function waitingFor(parts: Pick<RuntimeParts, 'options' | 'waiting'>): RoleDatabaseSpec['whileWaiting'] {
  const { whileWaiting } = parts.options;
  const listener = parts.waiting;
  if (!whileWaiting || !listener) return undefined;
  return {
    wait: whileWaiting,
    onFirstFailure: async () => (listener.listening ? undefined : `${await listener.open(whileWaiting.host, whileWaiting.port)}/readyz`),
  };
}

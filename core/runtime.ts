/**
 * The runtime a role is built on: the role's data directory and database
 * file, its HTTP listener, its plugin host (plugins' migrations on the
 * role's database, boot in dependency order, stop in reverse), its logger
 * and clock. It knows no fleet and no vault: the gateway role
 * (core/gateway.ts) and the program service role (core/roles/programs.ts)
 * each build their own context on it.
 *
 * With `tls` (a certificate and key file) the pair is checked when the
 * role opens (a TlsError naming the wrong file stops the start), the role
 * builds its app with `serverOptions()` so it serves HTTPS, and from
 * `listen` on the pair is reloaded on a file change or SIGHUP
 * (core/tls.ts); every answer then carries Strict-Transport-Security.
 *
 * Stop order: stop taking requests (in-flight ones finish) → plugins in
 * reverse boot order → the role's own closers in reverse order (e.g. the
 * history writer) → the database.
 */
import { join, resolve } from 'node:path';
import { Server as TlsServer } from 'node:tls';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { PluginHost, type Plugin } from './plugin-host.js';
import { Database } from './store/database.js';
import { prepareDataDirectory, restrictDataDirectory } from './store/data-directory.js';
import { applyMigrations, BASE_SCHEMA_OWNER, type Migration } from './store/migrations.js';
import { HSTS_HEADER, TlsSource, type TlsFiles } from './tls.js';

export interface RoleRuntimeOptions {
  /** The role's name: `gateway`, `programs`, … */
  role: string;
  dataDir: string;
  /** The role's database file in the data directory, e.g. `programs.db`. */
  databaseFile: string;
  logger: Logger;
  now: () => number;
  /** Schema the role itself owns, applied before any plugin's, recorded under `core`. */
  baseMigrations?: readonly Migration[];
  /** Serve HTTPS with this certificate and key (PEM files); plain HTTP without. */
  tls?: TlsFiles;
}

export class RoleRuntime {
  private host: PluginHost<never> | undefined;
  private readonly closers: { name: string; close: () => Promise<void> }[] = [];
  private http: FastifyInstance | undefined;
  private stopped = false;

  private constructor(
    readonly role: string,
    readonly dataDir: string,
    readonly db: Database,
    readonly logger: Logger,
    readonly now: () => number,
    private readonly tls: TlsSource | undefined,
  ) {}

  /** Prepares the data directory (0700), opens the role's database and applies its base schema. */
  static async open(options: RoleRuntimeOptions): Promise<RoleRuntime> {
    const dataDir = resolve(options.dataDir);
    // A wrong certificate or key stops the start before anything is opened.
    const tls = options.tls ? TlsSource.open(options.tls, options.logger.child({ role: options.role })) : undefined;
    prepareDataDirectory(dataDir);
    const db = await Database.open(join(dataDir, options.databaseFile));
    try {
      if (options.baseMigrations?.length) await applyMigrations(db, BASE_SCHEMA_OWNER, options.baseMigrations, options.now);
    } catch (err) {
      await db.close().catch(() => undefined);
      throw err;
    }
    return new RoleRuntime(options.role, dataDir, db, options.logger, options.now, tls);
  }

  /** What the role's fastify app is built with: `{https}` when the role serves TLS, else nothing. */
  serverOptions(): { https?: { cert: Buffer; key: Buffer } } {
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
   * Applies the plugins' migrations on the role's database, then boots them
   * with `context`; on failure stops what started. Files the plugins create
   * in the data directory (keys) are restricted to 0600 afterwards.
   */
  async startPlugins<Ctx>(plugins: readonly Plugin<Ctx>[], context: Ctx, http: FastifyInstance): Promise<{ names: () => readonly string[] }> {
    const host = new PluginHost<Ctx>(plugins, this.logger, (owner, migrations) => applyMigrations(this.db, owner, migrations, this.now));
    this.host = host as unknown as PluginHost<never>;
    this.http = http;
    if (this.tls) http.addHook('onRequest', async (_request, reply) => void reply.header('strict-transport-security', HSTS_HEADER));
    await host.start(context);
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
    await this.http.listen({ host, port });
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
    await this.http?.close().catch((err: unknown) => this.logger.error({ err, role: this.role }, 'http close failed'));
    this.tls?.close();
    await this.host?.stop();
    while (this.closers.length) {
      const { name, close } = this.closers.pop() as { name: string; close: () => Promise<void> };
      await close().catch((err: unknown) => this.logger.error({ err, role: this.role, closer: name }, 'close failed'));
    }
    await this.db.close();
  }
}

/**
 * The gateway role: on the role runtime (core/runtime/runtime.ts: data directory,
 * `gateway.db` with the base schema, plugin host, listener, stop order) it
 * opens the fleet store and the history writer, builds the fleet, the
 * interface registry and the context, boots the plugins and serves HTTP.
 * `stop()` reverses it through the runtime: stop accepting requests, stop
 * plugins in reverse order (actors, then drivers), flush and close the
 * history writer, close the database.
 */
import type { Logger } from 'pino';
import type { SharedFirstPassword } from '../../auth/first-admin.js';
import { createLogger } from '../../telemetry/logger.js';
import type { FastifyInstance } from 'fastify';
import type { GatewayConfig } from '../../../config/schema.js';
import type { MachineTaskClass } from './machine-config.js';
import type { RegisteredDriver } from '../../driver-seam/driver.js';
import { EventBus } from '../../runtime/event-bus.js';
import type { GatewayEvents } from './events.js';
import { DriverRegistry } from './fleet/driver-registry.js';
import { Fleet } from './fleet/fleet.js';
import { GroupTaskCache } from './fleet/group-tasks.js';
import { createHttpApp, serveInterfaces } from '../../http/http-server.js';
import { InterfaceRegistry } from '../../interfaces/registry.js';
import { McpToolRegistry } from '../../mcp/tools.js';
import type { Plugin } from '../../runtime/plugin-host.js';
import type { GatewayContext, GatewayServices } from './context.js';
import { configSource } from '../../config/config.js';
import { RoleRuntime, runtimeSettings } from '../../runtime/runtime.js';
import { roleTlsFiles } from '../../http/tls.js';
import { ServiceRegistry } from '../../runtime/services.js';
import { describeConfigFleet } from './store/config-fleet.js';
import { CredentialBox } from '../../store/credential-box.js';
import { FleetStore } from './store/fleet-store.js';
import { HistoryRevisions, settleMsFor } from './history/revisions.js';
import { HistoryWriter } from './history/writer.js';
import { GATEWAY_MIGRATIONS } from './store/schema.js';
import { gatewaySettings, type GatewaySettings } from './config.js';
import { packageVersion } from '../../runtime/package-root.js';
import { gatewayMetrics } from './metrics.js';
import { traceHttp } from '../../telemetry/http.js';

/** The gateway role's database file in the data directory. */
export const GATEWAY_DATABASE_FILE = 'gateway.db';

export interface GatewayOptions {
  config: GatewayConfig;
  drivers: readonly RegisteredDriver[];
  plugins: readonly Plugin<GatewayContext>[];
  logger?: Logger;
  now?: () => number;
  onSampleLag?: (task: MachineTaskClass, lagMs: number) => void;
  /** Environment for settings that must not live in files (GATEWAY_ADMIN_PASSWORD, TLS_CERT_FILE/TLS_KEY_FILE); defaults to process.env. */
  env?: NodeJS.ProcessEnv;
  /** The process's first-start password shared by its roles' administrators (core/auth/first-admin.ts). */
  sharedFirstPassword?: SharedFirstPassword | undefined;
  /** The config file's path, for the log and banner; defaults to the file `loadConfig` read it from. */
  configFile?: string;
}

/** What opening the store applied from the config, and which plain-text credentials it encrypted. */
function fleetAnnouncements(store: FleetStore, source: string): string[] {
  const { configChanges, encrypted } = store.opened;
  const lines = describeConfigFleet(configChanges, source);
  if (encrypted.length) {
    lines.push(`encrypted the credentials of ${encrypted.length} machine(s) stored in plain text by an earlier version: ${encrypted.join(', ')}`);
  }
  return lines;
}

export class Gateway {
  private constructor(
    readonly context: GatewayContext,
    private readonly runtime: RoleRuntime,
    readonly logger: Logger,
    /** The role's settings from the configuration (its parts: core/roles/gateway/config.ts). */
    readonly settings: GatewaySettings,
  ) {}

  get http(): FastifyInstance {
    return this.context.http;
  }

  get fleet(): Fleet {
    return this.context.fleet;
  }

  /** Opens the store, boots the plugins and registers the HTTP routes; does not listen yet. */
  static async create(options: GatewayOptions): Promise<Gateway> {
    const { config } = options;
    const settings = gatewaySettings(config);
    const { machines, groups, historyWriter } = settings;
    const logger = options.logger ?? createLogger(config.logLevel);
    const now = options.now ?? Date.now;
    const { timeZone } = runtimeSettings(config);
    const drivers = new DriverRegistry(options.drivers);
    const problems = machines.flatMap((m, i) => drivers.validate(m).map((p) => `machines[${i}].${p}`));
    if (problems.length) throw new Error(`invalid machine driver settings:\n${problems.map((p) => `  - ${p}`).join('\n')}`);

    const env = options.env ?? process.env;
    // `communication.tls`, else TLS_CERT_FILE/TLS_KEY_FILE; a wrong pair stops the start naming the file.
    const tls = roleTlsFiles(settings.listener.tls, env);
    const runtime = await RoleRuntime.open({ role: 'gateway', dataDir: config.dataDir, databaseFile: GATEWAY_DATABASE_FILE, logger, now, baseMigrations: GATEWAY_MIGRATIONS, rateLimits: settings.listener.rateLimits, metricsToken: config.metricsToken, ...(tls ? { tls, tlsPolicy: config.tls } : {}) });
    try {
      const { dataDir, db } = runtime;
      const credentials = CredentialBox.open(dataDir);
      const metrics = gatewayMetrics(runtime.metrics);
      const history = await HistoryWriter.open(db, {
        maxRows: historyWriter.flushRows,
        flushIntervalMs: historyWriter.flushIntervalMs,
        logger: logger.child({ component: 'history' }),
        revisions: new HistoryRevisions(settleMsFor(historyWriter.heartbeatSec)),
        now,
        observeFlush: metrics.observeFlush,
      });
      // Flushed after the plugins stopped (the actors write until then), before the database closes.
      runtime.onStop('history writer', () => history.close());
      const source = options.configFile ?? configSource(config);
      const store = await FleetStore.open(db, { credentials, config: { source, machines, groups } });
      const announcements = fleetAnnouncements(store, source);
      const storeLog = logger.child({ component: 'store', config: source });
      for (const line of announcements) storeLog.info(line);
      const bus = new EventBus<GatewayEvents>(logger.child({ component: 'bus' }));
      const interfaces = new InterfaceRegistry(logger.child({ component: 'interfaces' }));
      const fleet = new Fleet({
        drivers,
        sink: history,
        logger: logger.child({ component: 'fleet' }),
        timeZone,
        heartbeatMs: historyWriter.heartbeatSec * 1000,
        motion: historyWriter.motion,
        dataDir,
        now,
        onSampleLag: metrics.sampleObserver(options.onSampleLag),
      });
      metrics.collectFrom({ fleet, history });
      const http = createHttpApp(logger.child({ component: 'http' }), config.communication.trustProxy, runtime.serverOptions());
      traceHttp(http, runtime.role);
      const tools = new McpToolRegistry();
      // A plugin reads its own part of the configuration (its `settings`); what the role's part says that plugins need is here.
      const context: GatewayContext = {
        configFile: source,
        identity: settings.identity,
        timeZone,
        heartbeatMs: historyWriter.heartbeatSec * 1000,
        dataDir,
        db,
        store,
        history,
        interfaces,
        drivers,
        fleet,
        groupTasks: new GroupTaskCache(),
        bus,
        tools,
        services: new ServiceRegistry<GatewayServices>('gateway'),
        http,
        now,
        version: packageVersion(),
        startedAt: now(),
        // The fleet's lines (logged above), then the runtime's (a metrics token made now: shown, never logged).
        announcements: [...announcements, ...runtime.announcements],
        env,
        ...(options.sharedFirstPassword ? { sharedFirstPassword: options.sharedFirstPassword } : {}),
        startedPlugins: () => runtime.pluginNames(),
      };
      // The plugins' migrations, their declared tools, then the plugins in dependency order; the files they create are restricted to 0600.
      await runtime.startPlugins(options.plugins, context, http, { config, tools });
      serveInterfaces(http, interfaces);
      await http.ready();
      return new Gateway(context, runtime, logger, settings);
    } catch (err) {
      // Whatever started stops, the history writer closes, then the database.
      await runtime.stop().catch(() => undefined);
      throw err;
    }
  }

  /** Listens on the configured host and port (port 0 picks a free one); returns the base URL. */
  async listen(overrides: { host?: string; port?: number } = {}): Promise<string> {
    const host = overrides.host ?? this.settings.listener.host;
    const port = overrides.port ?? this.settings.listener.port;
    return this.runtime.listen(host, port);
  }

  /** Stops everything in order (HTTP, plugins in reverse, the history writer, the database); safe to call twice. */
  async stop(): Promise<void> {
    await this.runtime.stop();
  }
}

/**
 * The gateway runtime: opens the store, builds the fleet and the interface
 * registry, boots the plugins and serves HTTP. `stop()` reverses it: stop
 * accepting requests, stop plugins in reverse order (actors, then drivers),
 * flush the history writer, close the database.
 */
import { resolve, join } from 'node:path';
import { readFileSync } from 'node:fs';
import type { Logger } from 'pino';
import { createLogger } from './logger.js';
import type { FastifyInstance } from 'fastify';
import type { GatewayConfig, MachineTaskClass } from '../config/schema.js';
import type { RegisteredDriver } from './driver.js';
import { EventBus } from './event-bus.js';
import { DriverRegistry } from './fleet/driver-registry.js';
import { Fleet } from './fleet/fleet.js';
import { GroupTaskCache } from './fleet/group-tasks.js';
import { createHttpApp, serveInterfaces } from './http-server.js';
import { InterfaceRegistry } from './interfaces.js';
import { PluginHost, type Plugin } from './plugin-host.js';
import type { GatewayContext } from './context.js';
import { configSource } from './config.js';
import { Database } from './store/database.js';
import { describeConfigFleet } from './store/config-fleet.js';
import { CredentialBox } from './store/credential-box.js';
import { prepareDataDirectory, restrictDataDirectory } from './store/data-directory.js';
import { FleetStore } from './store/fleet-store.js';
import { HistoryRevisions, settleMsFor } from './store/history-revisions.js';
import { HistoryWriter } from './store/history-writer.js';
import { applyMigrations, migrate } from './store/migrations.js';
import { systemTimeZone } from './time.js';
import { PACKAGE_ROOT } from './package-root.js';

export interface GatewayOptions {
  config: GatewayConfig;
  drivers: readonly RegisteredDriver[];
  plugins: readonly Plugin<GatewayContext>[];
  logger?: Logger;
  now?: () => number;
  onSampleLag?: (task: MachineTaskClass, lagMs: number) => void;
  /** Environment for settings that must not live in files (GATEWAY_ADMIN_PASSWORD); defaults to process.env. */
  env?: NodeJS.ProcessEnv;
  /** The config file's path, for the log and banner; defaults to the file `loadConfig` read it from. */
  configFile?: string;
}

function packageVersion(): string {
  try {
    const pkg = JSON.parse(readFileSync(join(PACKAGE_ROOT, 'package.json'), 'utf8')) as { version?: string };
    return pkg.version ?? '0.0.0';
  } catch {
    return '0.0.0';
  }
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
  private stopped = false;
  private listening = false;

  private constructor(
    readonly context: GatewayContext,
    private readonly host: PluginHost<GatewayContext>,
    readonly logger: Logger,
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
    const logger = options.logger ?? createLogger(config.logLevel);
    const now = options.now ?? Date.now;
    const dataDir = resolve(config.gateway.dataDir);
    const timeZone = config.gateway.timeZone || systemTimeZone();
    const drivers = new DriverRegistry(options.drivers);
    const problems = config.machines.flatMap((m, i) => drivers.validate(m).map((p) => `machines[${i}].${p}`));
    if (problems.length) throw new Error(`invalid machine driver settings:\n${problems.map((p) => `  - ${p}`).join('\n')}`);

    prepareDataDirectory(dataDir);
    const credentials = CredentialBox.open(dataDir);
    const db = await Database.open(join(dataDir, 'gateway.db'));
    let history: HistoryWriter | undefined;
    try {
      await migrate(db);
      history = await HistoryWriter.open(db, {
        maxRows: config.history.flushRows,
        flushIntervalMs: config.history.flushIntervalMs,
        logger: logger.child({ component: 'history' }),
        revisions: new HistoryRevisions(settleMsFor(config.history.heartbeatSec)),
        now,
      });
      const source = options.configFile ?? configSource(config);
      const store = await FleetStore.open(db, { credentials, config: { source, machines: config.machines, groups: config.groups } });
      const announcements = fleetAnnouncements(store, source);
      const storeLog = logger.child({ component: 'store', config: source });
      for (const line of announcements) storeLog.info(line);
      const bus = new EventBus(logger.child({ component: 'bus' }));
      const interfaces = new InterfaceRegistry(logger.child({ component: 'interfaces' }));
      const fleet = new Fleet({
        drivers,
        sink: history,
        logger: logger.child({ component: 'fleet' }),
        timeZone,
        heartbeatMs: config.history.heartbeatSec * 1000,
        dataDir,
        now,
        ...(options.onSampleLag ? { onSampleLag: options.onSampleLag } : {}),
      });
      const http = createHttpApp(logger.child({ component: 'http' }), config.communication.trustProxy);
      const host = new PluginHost(options.plugins, logger, (owner, migrations) => applyMigrations(db, owner, migrations, now));
      const context: GatewayContext = {
        config,
        timeZone,
        dataDir,
        db,
        store,
        history,
        interfaces,
        drivers,
        fleet,
        groupTasks: new GroupTaskCache(),
        bus,
        http,
        now,
        version: packageVersion(),
        startedAt: now(),
        announcements,
        env: options.env ?? process.env,
        startedPlugins: () => host.names(),
      };
      await host.start(context);
      // Plugins create files of their own on first start (the JWT key, the gateway ID).
      restrictDataDirectory(dataDir);
      serveInterfaces(http, interfaces);
      await http.ready();
      return new Gateway(context, host, logger);
    } catch (err) {
      await history?.close().catch(() => undefined);
      await db.close().catch(() => undefined);
      throw err;
    }
  }

  /** Listens on the configured host and port (port 0 picks a free one); returns the base URL. */
  async listen(overrides: { host?: string; port?: number } = {}): Promise<string> {
    const host = overrides.host ?? this.context.config.communication.host;
    const port = overrides.port ?? this.context.config.communication.port;
    await this.context.http.listen({ host, port });
    this.listening = true;
    const address = this.context.http.server.address();
    const actualPort = typeof address === 'object' && address ? address.port : port;
    const shownHost = host === '0.0.0.0' || host === '::' ? 'localhost' : host;
    return `http://${shownHost}:${actualPort}`;
  }

  /** Stops everything in order; safe to call twice. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    const { http, history, db } = this.context;
    // Stop taking requests first (in-flight ones finish), so none meets a half-stopped fleet.
    await http.close().catch((err: unknown) => this.logger.error({ err }, 'http close failed'));
    this.listening = false;
    await this.host.stop();
    await history.close();
    await db.close();
  }
}

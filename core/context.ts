/** The explicit context every plugin receives. */
import type { FastifyInstance } from 'fastify';
import type { GatewayConfig } from '../config/schema.js';
import type { EventBus } from './event-bus.js';
import type { Fleet } from './fleet/fleet.js';
import type { DriverRegistry } from './fleet/driver-registry.js';
import type { GroupTaskCache } from './fleet/group-tasks.js';
import type { InterfaceRegistry } from './interfaces.js';
import type { Database } from './store/database.js';
import type { FleetStore } from './store/fleet-store.js';
import type { HistoryWriter } from './store/history-writer.js';

export interface GatewayContext {
  config: GatewayConfig;
  /** The resolved gateway time zone (config, or the system's). */
  timeZone: string;
  dataDir: string;
  db: Database;
  store: FleetStore;
  history: HistoryWriter;
  interfaces: InterfaceRegistry;
  drivers: DriverRegistry;
  fleet: Fleet;
  /** The latest value of every group task class; the group-tasks plugin refreshes it. */
  groupTasks: GroupTaskCache;
  bus: EventBus;
  /** The HTTP app, for the few routes that are not interfaces (none yet). */
  http: FastifyInstance;
  /** Current time, unix ms. */
  now: () => number;
  /** Gateway software version. */
  version: string;
  startedAt: number;
  /**
   * Lines to show the operator once at start, beside the URLs (e.g. a generated
   * first password). Printed to the terminal only, never to the log.
   */
  announcements: string[];
  /** Names of the started plugins, in boot order. */
  startedPlugins: () => readonly string[];
  /** Environment for secrets that never live in files (GATEWAY_ADMIN_PASSWORD). */
  env: NodeJS.ProcessEnv;
}

/**
 * The explicit context every gateway plugin receives. Its members are core's;
 * what plugins add for each other goes through its open registries: events
 * on `bus` (`GatewayEvents`, ./events.ts), MCP tools on `tools`
 * (core/mcp/tools.ts) and services on `services` (`GatewayServices` below),
 * each extended without editing core (docs/architecture.md, "The plugin
 * context").
 */
import type { FastifyInstance } from 'fastify';
import type { SharedFirstPassword } from '../../auth/first-admin.js';
import type { EventBus } from '../../runtime/event-bus.js';
import type { GatewayEvents } from './events.js';
import type { Fleet } from './fleet/fleet.js';
import type { DriverRegistry } from './fleet/driver-registry.js';
import type { GroupTaskCache } from './fleet/group-tasks.js';
import type { InterfaceRegistry } from '../../interfaces/registry.js';
import type { ToolCatalogueReader } from '../../mcp/tools.js';
import type { ServiceRegistry } from '../../runtime/services.js';
import type { Database } from '../../store/database.js';
import type { FleetStore } from './store/fleet-store.js';
import type { HistoryWriter } from './history/writer.js';

/**
 * The services plugins provide to each other on `ctx.services`, by name. A
 * providing plugin declares its entry by declaration merging, beside its
 * `provide` call:
 *
 * ```ts
 * declare module '../../core/roles/gateway/context.js' {
 *   interface GatewayServices {
 *     'machine-notes': NoteService;
 *   }
 * }
 * ```
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type -- filled by plugins through declaration merging
export interface GatewayServices {}

/** How the gateway calls itself: `gateway.name` and `gateway.alias` of the configuration (core/roles/gateway/config.ts). */
export interface GatewayIdentity {
  name: string;
  alias: string;
}

export interface GatewayContext {
  /** The config file the gateway started with (or the label of an inline config), for messages. */
  configFile: string;
  /** The gateway's name and alias (presence on the cloud, the console's title, /api/system/gateway-identity). */
  identity: GatewayIdentity;
  /** The resolved time zone (the configuration's `timeZone`, or the system's). */
  timeZone: string;
  /** How often each machine writes a Heartbeat row (`history.heartbeatSec`), ms; a gap of two periods without one is the gateway's own downtime. */
  heartbeatMs: number;
  dataDir: string;
  db: Database;
  store: FleetStore;
  history: HistoryWriter;
  interfaces: InterfaceRegistry;
  drivers: DriverRegistry;
  fleet: Fleet;
  /** The latest value of every group task class; the group-tasks plugin refreshes it. */
  groupTasks: GroupTaskCache;
  bus: EventBus<GatewayEvents>;
  /** The MCP tools /mcp serves, read-only: a plugin contributes tools by declaring them (`tools` of definePlugin, core/mcp/tools.ts). */
  tools: ToolCatalogueReader;
  /** Services plugins provide to each other (`GatewayServices`). */
  services: ServiceRegistry<GatewayServices>;
  /** The HTTP app, for the routes that are not interfaces: /mcp (the mcp plugin) and the web console's pages and assets (the console plugin). */
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
  /** Environment for secrets that never live in files (GATEWAY_ADMIN_PASSWORD, ADMIN_PASSWORD). */
  env: NodeJS.ProcessEnv;
  /** The first-start password the process generated for all its roles' administrators, when it starts more than one (core/auth/first-admin.ts). */
  sharedFirstPassword?: SharedFirstPassword;
}

/**
 * `npm start`: loads the config, starts the roles this process runs (the
 * machine gateway, the program version service, the cloud relay:
 * `--role gateway|programs|cloud`, repeatable or a comma list, else the
 * config's `roles`; gateway and programs by default),
 * prints one banner section per role, and stops them cleanly on
 * SIGINT/SIGTERM (core/process-signals.ts: copies of one Ctrl-C count once; a
 * later press forces the exit; the stop has a deadline): the program service
 * first, then the gateway.
 *
 * Each role has a starter in ROLE_STARTERS; adding a role is a starter and a
 * line in the table.
 */
import type { Logger } from 'pino';
import { ROLE_NAMES, type GatewayConfig, type RoleName } from '../config/schema.js';
import { createLogger } from './logger.js';
import { ConfigError, loadConfig, readConfigFile, selectRoles, type RoleSelection } from './config.js';
import { Gateway } from './roles/gateway/gateway.js';
import { DRIVERS } from '../drivers/registry.js';
import { GATEWAY_PLUGINS, PROGRAMS_PLUGINS } from '../plugins/index.js';
import { ensureBuilt } from '../plugins/console/build.js';
import { TOOLS } from '../plugins/mcp/tools.js';
import { McpToolRegistry } from './mcp/tools.js';
import { toolCatalogue } from './mcp/dispatch.js';
import { CloudRole } from './roles/cloud/role.js';
import { PROGRAMS_DATABASE_FILE, ProgramsRole } from './roles/programs/role.js';
import { packageVersion } from './package-root.js';
import { systemTimeZone } from './time.js';
import { resolve } from 'node:path';
import { InProcessGatewayLink } from './gateway-link/in-process.js';
import type { GatewayLink } from './gateway-link/types.js';
import { StopOnSignals, type StopPart } from './process-signals.js';
import { cloudBannerSection, gatewayBannerSection, programsBannerSection, rolesBanner } from './startup-banner.js';

/** A clean stop closes HTTP, the actors, the drivers and flushes history; past this it exits 1 naming what hung. */
const STOP_DEADLINE_MS = 15_000;

/** The roles stop in this order: the program service (which calls gateways) before the gateway; the cloud (which gateways call) last. */
const STOP_ORDER: readonly RoleName[] = ['programs', 'gateway', 'cloud'];

/** What a role's starter is given. */
interface RoleStartFacts {
  /** The gateway this process runs, when it started before: the program service reaches it in-process. */
  localGateway?: GatewayLink;
  config: GatewayConfig;
  /** The config file's path, for messages and the banner. */
  file: string;
  logger: Logger;
  env: NodeJS.ProcessEnv;
}

/** A role that started and listens: its banner section, its part of the stop, and what the final log line reports of it. */
interface StartedRole {
  banner: readonly string[];
  stop: StopPart;
  /** Fields for the `stopped cleanly` log line (e.g. the history writer's figures). */
  stoppedFacts?: () => Record<string, unknown>;
  /** The in-process link to this role, for roles that call it (the gateway's). */
  link?: GatewayLink;
}

type RoleStarter = (facts: RoleStartFacts) => Promise<StartedRole>;

/** A role that could not start: exit 2 (as an invalid config) or 1 (e.g. its port is taken). */
class RoleStartError extends Error {
  constructor(
    message: string,
    readonly exitCode: number,
  ) {
    super(message);
    this.name = 'RoleStartError';
  }
}

/** Where a role's listener address comes from: its config fields and the environment variable that overrides the port. */
interface ListenSettings {
  host: string;
  port: number;
  hostField: string;
  portField: string;
  portVariable: string;
}

/**
 * A role's listener that could not open: exit 1. A taken port (the usual
 * case: a second instance on the same machine) says which variable or field
 * moves it; anything else names every setting of the address.
 */
function listenFailed(role: string, file: string, at: ListenSettings, err: unknown): RoleStartError {
  const e = err as NodeJS.ErrnoException;
  const where = `${role} failed to listen on ${at.host}:${at.port}`;
  if (e.code === 'EADDRINUSE') {
    return new RoleStartError(`${where}: the port is in use by another process; choose another with ${at.portVariable}=<port> or ${at.portField} in ${file}`, 1);
  }
  return new RoleStartError(`${where}: ${e.message} (config ${file}: ${at.hostField}, ${at.portField} or ${at.portVariable})`, 1);
}

/** The machine gateway: simulated or real fleet, /api and /mcp on `communication.host`:`port`. */
async function startGatewayRole({ config, file, logger }: RoleStartFacts): Promise<StartedRole> {
  let gateway: Gateway;
  try {
    gateway = await Gateway.create({ config, drivers: DRIVERS, plugins: GATEWAY_PLUGINS, logger });
  } catch (err) {
    throw new RoleStartError(`gateway failed to start (config ${file}):\n${(err as Error).message}`, 2);
  }
  // The web console is built now (when its sources changed since the last build), so the first page load does not wait for it.
  await ensureBuilt().catch((err: Error) => logger.error({ err: err.message }, 'the web console could not be built; the API works without it'));
  let url: string;
  try {
    url = await gateway.listen();
  } catch (err) {
    await gateway.stop();
    const { host, port } = config.communication;
    throw listenFailed('gateway', file, { host, port, hostField: 'communication.host', portField: 'communication.port', portVariable: 'GATEWAY_PORT' }, err);
  }
  const { context } = gateway;
  return {
    banner: gatewayBannerSection({
      version: context.version,
      configFile: file,
      dataDir: context.dataDir,
      timeZone: context.timeZone,
      machines: context.store.listMachines(),
      url,
      announcements: context.announcements,
    }),
    stop: {
      name: 'gateway (HTTP server, machine actors, drivers, history writer, database)',
      stop: async () => {
        logger.info('stopping');
        await gateway.stop();
      },
      detail: () => {
        const { pending, inFlight } = context.history.stats;
        return `HTTP ${context.http.server.listening ? 'still listening' : 'closed'}, history writer ${pending} rows pending, ${inFlight} in flight`;
      },
    },
    stoppedFacts: () => ({ history: context.history.stats }),
    link: new InProcessGatewayLink(context.interfaces),
  };
}

/** The program version service: /api/v1 on `programs.host`:`programs.port` (8030), database programs.db in `gateway.dataDir`. */
async function startProgramsRole({ config, file, logger, env, localGateway }: RoleStartFacts): Promise<StartedRole> {
  const dataDir = resolve(config.gateway.dataDir);
  const timeZone = config.gateway.timeZone || systemTimeZone();
  let role: ProgramsRole;
  try {
    role = await ProgramsRole.create({ dataDir, timeZone, plugins: PROGRAMS_PLUGINS, logger, env, version: packageVersion(), trustProxy: config.communication.trustProxy, settings: config.programs, ...(localGateway ? { localGateway } : {}) });
  } catch (err) {
    throw new RoleStartError(`program service failed to start (config ${file}):\n${(err as Error).message}`, 2);
  }
  let url: string;
  const { host, port } = config.programs;
  try {
    url = await role.listen(host, port);
  } catch (err) {
    await role.stop();
    throw listenFailed('program service', file, { host, port, hostField: 'programs.host', portField: 'programs.port', portVariable: 'PROGRAMS_PORT' }, err);
  }
  return {
    banner: programsBannerSection({
      version: role.context.version,
      configFile: file,
      dataDir,
      timeZone,
      url,
      announcements: role.context.announcements,
      databaseFile: PROGRAMS_DATABASE_FILE,
    }),
    stop: {
      name: 'program service (HTTP server, plugins, database)',
      stop: () => role.stop(),
      detail: () => `HTTP ${role.runtime.listening ? 'still listening' : 'closed'}`,
    },
  };
}

/** The cloud relay: /mcp on `cloud.host`:`cloud.port` (8040), its broker embedded on `cloud.mqttPort` (1883) or external, tokens in cloud.db. */
async function startCloudRole({ config, file, logger, env }: RoleStartFacts): Promise<StartedRole> {
  const dataDir = resolve(config.gateway.dataDir);
  const c = config.cloud;
  const registry = new McpToolRegistry();
  for (const tool of TOOLS) registry.register(tool);
  let role: CloudRole;
  try {
    role = await CloudRole.create({
      dataDir, logger, version: packageVersion(), catalogue: toolCatalogue(registry), topicPrefix: c.topicPrefix, callDeadlineMs: c.callDeadlineMs, revocationSweepMs: c.revocationSweepMs,
      allowedOrigins: c.allowedOrigins, allowedHosts: c.allowedHosts,
      ...(c.brokerUrl
        ? { broker: { url: c.brokerUrl, reconnectMaxMs: c.brokerReconnectMaxSeconds * 1000, ...(c.brokerUsername ? { username: c.brokerUsername } : {}), ...(env.CLOUD_BROKER_PASSWORD ? { password: env.CLOUD_BROKER_PASSWORD } : {}) } }
        : { embeddedBroker: { host: c.mqttHost, port: c.mqttPort, ...(c.mqttTls ? { tls: { cert: readConfigFile(c.mqttTls.certFile, 'cloud.mqttTls.certFile'), key: readConfigFile(c.mqttTls.keyFile, 'cloud.mqttTls.keyFile') } } : {}) } }),
    });
  } catch (err) {
    throw new RoleStartError(`cloud relay failed to start (config ${file}, cloud.mqttPort / CLOUD_MQTT_PORT, cloud.brokerUrl):\n${(err as Error).message}`, 1);
  }
  let url: string;
  try {
    url = await role.listen(c.host, c.port);
  } catch (err) {
    await role.stop();
    throw listenFailed('cloud relay', file, { host: c.host, port: c.port, hostField: 'cloud.host', portField: 'cloud.port', portVariable: 'CLOUD_PORT' }, err);
  }
  const tokens = await role.tokens.list();
  return {
    banner: cloudBannerSection({
      version: packageVersion(), configFile: file, dataDir, url, brokerUrl: role.brokerUrl ?? c.brokerUrl ?? '',
      embedded: !c.brokerUrl, tokens: tokens.filter((t) => t.revokedAt === null).length,
    }),
    stop: { name: 'cloud relay (HTTP server, relay, broker, database)', stop: () => role.stop(), detail: () => `HTTP ${role.runtime.listening ? 'still listening' : 'closed'}` },
  };
}

/** One starter per role. */
const ROLE_STARTERS: Record<RoleName, RoleStarter> = {
  gateway: startGatewayRole,
  programs: startProgramsRole,
  cloud: startCloudRole,
};

/** Stops the roles already started, in stop order, ignoring (but logging) failures. */
async function stopAll(started: ReadonlyMap<RoleName, StartedRole>, logger: Logger): Promise<void> {
  for (const role of STOP_ORDER) {
    await started
      .get(role)
      ?.stop.stop()
      .catch((err: unknown) => logger.error({ err, role }, 'stop failed'));
  }
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  let loaded;
  let selection: RoleSelection;
  try {
    loaded = loadConfig(argv);
    selection = selectRoles(argv, loaded.config);
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\n`);
      process.exit(2);
    }
    throw err;
  }
  const { config, file } = loaded;
  const logger = createLogger(config.logLevel);
  const { roles } = selection;

  const started = new Map<RoleName, StartedRole>();
  // The gateway starts first, so the program service can reach it in-process.
  for (const role of ROLE_NAMES.filter((r) => roles.includes(r))) {
    try {
      const localGateway = started.get('gateway')?.link;
      started.set(role, await ROLE_STARTERS[role]({ config, file, logger: role === 'gateway' ? logger : logger.child({ role }), env: process.env, ...(localGateway ? { localGateway } : {}) }));
    } catch (err) {
      await stopAll(started, logger);
      if (err instanceof RoleStartError) {
        process.stderr.write(`${err.message}\n`);
        process.exit(err.exitCode);
      }
      throw err;
    }
  }
  const inOrder = (order: readonly RoleName[]) => order.flatMap((r) => started.get(r) ?? []);
  process.stdout.write(rolesBanner(inOrder(ROLE_NAMES).map((r) => r.banner)));

  const running = inOrder(STOP_ORDER);
  const stopping = new StopOnSignals({
    parts: running.map((r) => r.stop),
    inOrder: true,
    onStopped: () => logger.info(Object.assign({}, ...running.map((r) => r.stoppedFacts?.() ?? {})) as object, 'stopped cleanly'),
    deadlineMs: STOP_DEADLINE_MS,
  });
  stopping.install();
}

main().catch((err: unknown) => {
  process.stderr.write(`fatal: ${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});

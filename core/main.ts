/**
 * `npm start`: loads the config, starts the roles this process runs (the
 * machine gateway, the program version service: `--role gateway|programs`,
 * repeatable or a comma list, else the config's `roles`, both by default),
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
import { ConfigError, loadConfig, selectRoles, type RoleSelection } from './config.js';
import { Gateway } from './gateway.js';
import { DRIVERS } from '../drivers/registry.js';
import { GATEWAY_PLUGINS } from '../plugins/index.js';
import { StopOnSignals, type StopPart } from './process-signals.js';
import { gatewayBannerSection, rolesBanner } from './startup-banner.js';

/** A clean stop closes HTTP, the actors, the drivers and flushes history; past this it exits 1 naming what hung. */
const STOP_DEADLINE_MS = 15_000;

/** The roles stop in this order: the program service (which calls gateways) before the gateway. */
const STOP_ORDER: readonly RoleName[] = ['programs', 'gateway'];

/** What a role's starter is given. */
interface RoleStartFacts {
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
}

type RoleStarter = (facts: RoleStartFacts) => Promise<StartedRole>;

/** A role whose code this build does not include; when the role was only defaulted to, the process runs without it. */
class RoleNotAvailableError extends Error {
  constructor(readonly role: RoleName) {
    super(`the ${role} role is not available in this build`);
    this.name = 'RoleNotAvailableError';
  }
}

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

/** The machine gateway: simulated or real fleet, /api and /mcp on `communication.host`:`port`. */
async function startGatewayRole({ config, file, logger }: RoleStartFacts): Promise<StartedRole> {
  let gateway: Gateway;
  try {
    gateway = await Gateway.create({ config, drivers: DRIVERS, plugins: GATEWAY_PLUGINS, logger });
  } catch (err) {
    throw new RoleStartError(`gateway failed to start (config ${file}):\n${(err as Error).message}`, 2);
  }
  let url: string;
  try {
    url = await gateway.listen();
  } catch (err) {
    await gateway.stop();
    const { host, port } = config.communication;
    throw new RoleStartError(`gateway failed to listen on ${host}:${port} (config ${file}): ${(err as Error).message}`, 1);
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
  };
}

/**
 * The program version service (core/roles/programs.ts, `programs.host`:`programs.port`, default 8030,
 * database programs.db in `gateway.dataDir`). Not part of this build yet: its starter will create
 * the role with { dataDir, timeZone, plugins, logger, now, env, version, secure }, listen, and
 * return its banner section (startup-banner.ts, programsBannerSection) and stop part.
 */
async function programsRoleNotInThisBuild(): Promise<StartedRole> {
  throw new RoleNotAvailableError('programs');
}

/** One starter per role. */
const ROLE_STARTERS: Record<RoleName, RoleStarter> = {
  gateway: startGatewayRole,
  programs: programsRoleNotInThisBuild,
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
  const { roles, from } = selection;

  const started = new Map<RoleName, StartedRole>();
  for (const role of roles) {
    try {
      started.set(role, await ROLE_STARTERS[role]({ config, file, logger: role === 'gateway' ? logger : logger.child({ role }), env: process.env }));
    } catch (err) {
      // Roles named on the command line or in the file must start; the default runs without one this build lacks.
      if (err instanceof RoleNotAvailableError && from === 'default') {
        logger.info({ role }, `${err.message}; running without it`);
        continue;
      }
      await stopAll(started, logger);
      if (err instanceof RoleStartError) {
        process.stderr.write(`${err.message}\n`);
        process.exit(err.exitCode);
      }
      if (err instanceof RoleNotAvailableError) {
        process.stderr.write(`${err.message} (${from === 'command line' ? '--role' : `roles in ${file}`} names it)\n`);
        process.exit(2);
      }
      throw err;
    }
  }
  if (started.size === 0) {
    process.stderr.write(`no role to run: ${roles.join(', ')} not available in this build\n`);
    process.exit(2);
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

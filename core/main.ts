/**
 * `npm start`: loads the config, starts the gateway, prints where to look,
 * and stops cleanly on SIGINT/SIGTERM (a second signal forces the exit).
 */
import { createLogger } from './logger.js';
import { ConfigError, loadConfig } from './config.js';
import { Gateway } from './gateway.js';
import { DRIVERS } from '../drivers/registry.js';
import { GATEWAY_PLUGINS } from '../plugins/index.js';

async function main(): Promise<void> {
  let loaded;
  try {
    loaded = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\n`);
      process.exit(2);
    }
    throw err;
  }
  const { config, file } = loaded;
  const logger = createLogger(config.logLevel);
  let gateway: Gateway;
  try {
    gateway = await Gateway.create({ config, drivers: DRIVERS, plugins: GATEWAY_PLUGINS, logger });
  } catch (err) {
    process.stderr.write(`gateway failed to start (config ${file}):\n${(err as Error).message}\n`);
    process.exit(2);
  }
  const url = await gateway.listen();
  const { context } = gateway;
  process.stdout.write(
    [
      '',
      `  CNC machine gateway ${context.version} is running`,
      `  config:      ${file}`,
      `  data:        ${context.dataDir} (SQLite: gateway.db)`,
      `  time zone:   ${context.timeZone}`,
      `  machines:    ${context.store.listMachines().length} (${driversInUse(context.store.listMachines())})`,
      '',
      `  health:      ${url}/api/health`,
      `  machines:    ${url}/api/config/machines`,
      `  fleet state: ${url}/api/task/batchReadTaskData?type=CNCStatus`,
      `  errors:      ${url}/api/task/batchReadErrors`,
      `  API docs:    ${url}/api/docs`,
      '',
      ...context.announcements.map((line) => `  ${line}`),
      ...(context.announcements.length ? [''] : []),
      '  Press Ctrl-C to stop.',
      '',
    ].join('\n') + '\n',
  );

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) {
      process.stderr.write(`${signal} again: exiting without a clean stop\n`);
      process.exit(1);
    }
    stopping = true;
    logger.info({ signal }, 'stopping');
    gateway
      .stop()
      .then(() => {
        logger.info({ history: gateway.context.history.stats }, 'stopped cleanly');
        process.exit(0);
      })
      .catch((err: unknown) => {
        logger.error({ err }, 'unclean stop');
        process.exit(1);
      });
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
}

main().catch((err: unknown) => {
  process.stderr.write(`fatal: ${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});

/** `simulator 12` or `opcua 2, modbus 2`: how many machines use each driver. */
function driversInUse(machines: readonly { driver: string }[]): string {
  const counts = new Map<string, number>();
  for (const m of machines) counts.set(m.driver, (counts.get(m.driver) ?? 0) + 1);
  return [...counts].map(([driver, n]) => `${driver} ${n}`).join(', ') || 'none';
}

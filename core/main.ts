/**
 * `npm start`: loads the config, starts the gateway, prints where to look,
 * and stops cleanly on SIGINT/SIGTERM (core/process-signals.ts: copies of one
 * Ctrl-C count once; a later press forces the exit; the stop has a deadline).
 */
import { createLogger } from './logger.js';
import { ConfigError, loadConfig } from './config.js';
import { Gateway } from './gateway.js';
import { DRIVERS } from '../drivers/registry.js';
import { GATEWAY_PLUGINS } from '../plugins/index.js';
import { StopOnSignals } from './process-signals.js';
import { startupBanner } from './startup-banner.js';

/** A clean stop closes HTTP, the actors, the drivers and flushes history; past this it exits 1 naming what hung. */
const GATEWAY_STOP_DEADLINE_MS = 15_000;

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
    startupBanner({
      version: context.version,
      configFile: file,
      dataDir: context.dataDir,
      timeZone: context.timeZone,
      machines: context.store.listMachines(),
      url,
      announcements: context.announcements,
    }),
  );

  const stopping = new StopOnSignals({
    parts: [
      {
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
    ],
    onStopped: () => logger.info({ history: context.history.stats }, 'stopped cleanly'),
    deadlineMs: GATEWAY_STOP_DEADLINE_MS,
  });
  stopping.install();
}

main().catch((err: unknown) => {
  process.stderr.write(`fatal: ${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});

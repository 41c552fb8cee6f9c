/**
 * `npm start`: loads the config, starts the roles this process runs (the
 * machine gateway, the program version service, the cloud relay:
 * `--role gateway|programs|cloud`, repeatable or a comma list, else the
 * config's `roles`; gateway and programs by default) in the order of the
 * role list (core/roles/index.ts), prints one banner section per role, and
 * stops them cleanly on SIGINT/SIGTERM (core/runtime/process-signals.ts: copies of
 * one Ctrl-C count once; a later press forces the exit; the stop has a
 * deadline), each role by its `stopRank`: the program service first, then
 * the gateway, then the cloud. The stop listens from before the first
 * listener opens, so a signal while the roles start ends the start and
 * stops what has started the same way (a role waiting for its database
 * stops waiting).
 *
 * A role is a definition in its wing (core/runtime/role.ts, core/roles/<name>/);
 * adding one is a folder and a line in core/roles/index.ts. This file
 * imports the role list and the runtime only.
 *
 * `core/main.ts <command> [args]` runs one command of a role or plugin
 * instead (core/runtime/commands.ts: `npm run reset-admin-password`, `npm run
 * cloud-token`, and the runtime's `npm run backup` and `npm run restore`,
 * core/backup/backup-cli.ts).
 */
import { createLogger } from './telemetry/logger.js';
import { backupCommands } from './backup/backup-cli.js';
import { runCommand } from './runtime/commands.js';
import { ConfigError, configNotices, selectRoles, type RoleSelection } from './config/config.js';
import { commandsOf, RoleStartError, sharedDatabasesOf, startRoles, type RunningRoles } from './runtime/role.js';
import { KEPT_FILES, loadConfig, loadConfigForCli, ROLES } from './roles/index.js';
import { StopOnSignals, type StopPart } from './runtime/process-signals.js';
import { rolesBanner } from './runtime/startup-banner.js';
import { startTelemetry, type ProcessTelemetry } from './telemetry/start.js';
import { SecretFileError, withSecretFiles } from './config/secret-files.js';

/** A clean stop closes HTTP, the actors, the drivers and flushes history; past this it exits 1 naming what hung. */
const STOP_DEADLINE_MS = 15_000;

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  const commandArgs = argv.slice(1);
  // Secrets named by <NAME>_FILE (systemd's LoadCredential=) are read before anything reads the environment.
  let env: NodeJS.ProcessEnv;
  try {
    env = withSecretFiles(process.env);
  } catch (err) {
    if (!(err instanceof SecretFileError)) throw err;
    process.stderr.write(`${err.message}\n`);
    process.exit(2);
  }
  // Backup and restore copy what the roles, their plugins and the runtime declare they keep.
  const backup = backupCommands({ kept: KEPT_FILES, sharedDatabases: (config, env) => sharedDatabasesOf(ROLES, config, env) });
  const exitCode = await runCommand([...commandsOf(ROLES), ...backup], argv, {
    loadConfig: () => loadConfigForCli(commandArgs, env),
    env,
    stdout: process.stdout,
    stderr: process.stderr,
  });
  if (exitCode !== undefined) process.exit(exitCode);

  let loaded;
  let selection: RoleSelection;
  let telemetry: ProcessTelemetry;
  try {
    loaded = loadConfig(argv, env);
    selection = selectRoles(argv, loaded.config, ROLES.map((r) => r.name));
    telemetry = await startTelemetry(loaded.config.telemetry, env, selection.roles);
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\n`);
      process.exit(2);
    }
    throw err;
  }
  const { config, file } = loaded;
  const logger = createLogger(config.logLevel, undefined, config.logFile ? { file: config.logFile } : {}, telemetry.on);
  const notices = configNotices(config);
  for (const notice of notices) logger.warn({ config: file }, notice);

  // The stop is ready before the first listener opens: a Ctrl-C while the roles start (the gateway already
  // answering, the program service making its first administrator or waiting for its database) ends the start
  // and stops what has started, cleanly, as a stop after it does.
  const start = new AbortController();
  let running: RunningRoles | undefined;
  const stopping = new StopOnSignals({
    // Tracing stops last, so the spans of the stop itself are exported.
    parts: () => [...(running?.stopParts ?? [stopTheStart]), { name: 'telemetry', stop: () => telemetry.stop() }],
    inOrder: true,
    onStopped: () => logger.info(running?.stoppedFacts() ?? {}, 'stopped cleanly'),
    deadlineMs: STOP_DEADLINE_MS,
  });
  stopping.install();
  const starting = startRoles(ROLES, selection.roles, { config, file, logger, env, signal: start.signal });
  const stopTheStart: StopPart = {
    name: 'the roles still starting',
    stop: async () => {
      start.abort();
      // startRoles stops the roles it started when it sees the signal; a start that had just finished is stopped here.
      const done = await starting.catch(() => undefined);
      for (const part of done?.stopParts ?? []) await part.stop();
    },
  };
  try {
    running = await starting;
  } catch (err) {
    // A stop during the start: StopOnSignals finishes it and exits.
    if (start.signal.aborted) return;
    if (err instanceof RoleStartError) {
      process.stderr.write(`${err.message}\n`);
      process.exit(err.exitCode);
    }
    throw err;
  }
  if (start.signal.aborted) return;
  process.stdout.write(rolesBanner(running.banners, notices));
}

main().catch((err: unknown) => {
  process.stderr.write(`fatal: ${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});

/** The program version service as a role: /api/v1 on `programs.host`:`programs.port` (8030), database programs.db in the data directory (`dataDir`) or PostgreSQL (`programs.databaseUrl`, PROGRAMS_DATABASE_URL). */
import { defineRole, listenFailed, RoleStartError, type RoleStartFacts, type StartedRole } from '../../runtime/role.js';
import { StartCancelled } from '../../runtime/start-cancelled.js';
import { packageVersion } from '../../runtime/package-root.js';
import { CREDENTIALS_KEY_FILE } from '../../store/credential-box.js';
import { describePostgres } from '../../store/postgres-database.js';
import { runtimeSettings } from '../../runtime/runtime.js';
import { PROGRAMS_CONFIG, programsSettings } from './config.js';
import { networkUrls } from '../../runtime/startup-banner.js';
import { programsBannerSection } from './banner.js';
import { PROGRAMS_PLUGINS } from './compose.js';
import { PROGRAMS_DATABASE_FILE, ProgramsRole } from './role.js';

async function startProgramsRole({ config, file, logger: processLogger, env, offers, sharedFirstPassword, signal }: RoleStartFacts): Promise<StartedRole> {
  const logger = processLogger.child({ role: 'programs' });
  const localGateway = offers['gateway-link'];
  const { dataDir, timeZone } = runtimeSettings(config);
  const { host, port, tls, databaseUrl, rateLimits } = programsSettings(config);
  let role: ProgramsRole;
  try {
    role = await ProgramsRole.create({
      dataDir, databaseUrl, timeZone, plugins: PROGRAMS_PLUGINS, logger, env, sharedFirstPassword, version: packageVersion(),
      trustProxy: config.communication.trustProxy, tlsPolicy: config.tls, config, rateLimits, metricsToken: config.metricsToken,
      ...(tls ? { tls } : {}), ...(localGateway ? { localGateway } : {}),
      // A PostgreSQL server that does not answer yet is waited for, the probes answering on the role's port meanwhile.
      whileWaiting: { host, port, ...(signal ? { signal } : {}) },
    });
  } catch (err) {
    if (err instanceof StartCancelled) throw err;
    // A database that cannot be reached is named by the key that gave it (the message names the server, never the password).
    const source = databaseUrl && /cannot connect to PostgreSQL/.test((err as Error).message) ? `${env.PROGRAMS_DATABASE_URL ? 'PROGRAMS_DATABASE_URL (environment)' : 'programs.databaseUrl'}: ` : '';
    throw new RoleStartError(`program service failed to start (config ${file}):\n${source}${(err as Error).message}`, 2);
  }
  if (signal?.aborted) {
    await role.stop();
    throw new StartCancelled('the program service\'s start');
  }
  let url: string;
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
      networkUrls: networkUrls(url, host),
      announcements: role.context.announcements,
      databaseFile: PROGRAMS_DATABASE_FILE,
      ...(databaseUrl ? { postgres: describePostgres(databaseUrl) } : {}),
    }),
    stop: {
      name: 'program service (HTTP server, plugins, database)',
      stop: () => role.stop(),
      detail: () => `HTTP ${role.runtime.listening ? 'still listening' : 'closed'}`,
    },
    consoleUrl: `${url}/`,
  };
}

export const programsRole = defineRole({
  name: 'programs',
  databaseFile: PROGRAMS_DATABASE_FILE,
  startsByDefault: true,
  firstAdministrator: { console: 'program console' },
  config: PROGRAMS_CONFIG,
  // First: it calls the gateways, so it stops before them.
  stopRank: 10,
  plugins: PROGRAMS_PLUGINS,
  commands: [],
  // The key sealing the secrets its plugins store (gateways' keys, webhooks' signing secrets).
  keeps: { files: [CREDENTIALS_KEY_FILE] },
  sharedDatabase: (config) => programsSettings(config).databaseUrl,
  start: startProgramsRole,
});

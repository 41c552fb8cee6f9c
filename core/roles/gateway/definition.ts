/** The machine gateway as a role: simulated or real fleet, /api and /mcp on `communication.host`:`port`. */
import { defineRole, listenFailed, RoleStartError, type RoleStartFacts, type StartedRole } from '../../runtime/role.js';
import { InProcessGatewayLink } from '../../gateway-link/in-process.js';
import { CREDENTIALS_KEY_FILE } from '../../store/credential-box.js';
import { networkUrls } from '../../runtime/startup-banner.js';
import { gatewayBannerSection } from './banner.js';
import { beforeListen, DRIVERS, GATEWAY_PLUGINS } from './compose.js';
import { GATEWAY_CONFIG } from './config.js';
import { fleetChangesOf } from './events.js';
import { Gateway, GATEWAY_DATABASE_FILE } from './gateway.js';

async function startGatewayRole({ config, file, logger, env, sharedFirstPassword }: RoleStartFacts): Promise<StartedRole> {
  let gateway: Gateway;
  try {
    gateway = await Gateway.create({ config, drivers: DRIVERS, plugins: GATEWAY_PLUGINS, logger, env, sharedFirstPassword });
  } catch (err) {
    throw new RoleStartError(`gateway failed to start (config ${file}):\n${(err as Error).message}`, 2);
  }
  await beforeListen().catch((err: Error) => logger.error({ err: err.message }, 'the web console could not be built; the API works without it'));
  let url: string;
  try {
    url = await gateway.listen();
  } catch (err) {
    await gateway.stop();
    const { host, port } = gateway.settings.listener;
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
      networkUrls: networkUrls(url, gateway.settings.listener.host),
      announcements: context.announcements,
      mtconnectUrl: context.services.find('mtconnect-agent')?.url,
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
    offers: { 'gateway-link': new InProcessGatewayLink(context.interfaces, fleetChangesOf(context.bus)) },
    consoleUrl: `${url}/`,
  };
}

export const gatewayRole = defineRole({
  name: 'gateway',
  databaseFile: GATEWAY_DATABASE_FILE,
  startsByDefault: true,
  firstAdministrator: { console: 'fleet console' },
  config: GATEWAY_CONFIG,
  // After the program service (which calls it), before the cloud (which it calls).
  stopRank: 20,
  plugins: GATEWAY_PLUGINS,
  // reset-admin-password is the auth plugin's.
  commands: [],
  // The key sealing the machines' stored credentials (gateway.ts), and what its drivers keep (the OPC UA client's certificates).
  keeps: { files: [CREDENTIALS_KEY_FILE], directories: DRIVERS.flatMap((d) => d.keeps?.directories ?? []) },
  start: startGatewayRole,
});

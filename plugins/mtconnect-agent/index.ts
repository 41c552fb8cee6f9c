/**
 * The MTConnect agent: every machine of the gateway served as an MTConnect
 * 2.x agent on its own listener (docs/mtconnect.md). Observations and their
 * sequence numbers come from the history, so a client resumes after any
 * restart without a gap as long as retention keeps the rows; nothing keeps
 * a second store of samples and no machine is contacted.
 */
import { definePlugin } from '../../core/runtime/plugin-host.js';
import type { GatewayContext } from '../../core/roles/gateway/context.js';
import { roleTlsFiles, TlsSource } from '../../core/http/tls.js';
import { Agent } from './agent.js';
import { MTCONNECT_CONFIG, type MTCONNECT_FIELDS } from './config.js';
import { GatewayReader } from './gateway-reader.js';
import { LiveState } from './live-state.js';
import { AgentServer } from './server.js';

declare module '../../core/roles/gateway/context.js' {
  interface GatewayServices {
    /** The MTConnect agent's base URL (the banner shows it) and how many streams it serves. */
    'mtconnect-agent': { url: string; streams(): number };
  }
}

/** Why the listener could not start, naming what to change. */
function listenError(host: string, port: number, err: unknown): Error {
  const e = err as NodeJS.ErrnoException;
  const where = `the MTConnect agent failed to listen on ${host}:${port}`;
  if (e.code === 'EADDRINUSE') return new Error(`${where}: the port is in use by another process; choose another with MTCONNECT_PORT=<port> or mtconnect.port, or turn the agent off with mtconnect.enabled: false`);
  return new Error(`${where}: ${e.message} (mtconnect.host, mtconnect.port or MTCONNECT_PORT)`);
}

export interface MtconnectAgentOptions {
  /** Where to listen when the configuration file does not say (`mtconnect.host`, `.port`): the tests' loopback and a free port. */
  listener?: { host: string; port: number };
}

/** The plugin; `options.listener` replaces the default listener (tests). */
export function createMtconnectAgentPlugin(options: MtconnectAgentOptions = {}) {
  return definePlugin<GatewayContext, typeof MTCONNECT_FIELDS>({
    name: 'mtconnect-agent',
    dependsOn: ['machine-actors', 'system'],
    config: MTCONNECT_CONFIG,
    async register(ctx) {
      const settings = { ...ctx.settings };
      if (!settings.enabled) return undefined;
      if (options.listener && !ctx.configWrites('host')) settings.host = options.listener.host;
      if (options.listener && !ctx.configWrites('port')) settings.port = options.listener.port;
      const files = roleTlsFiles(settings.tls, ctx.env);
      const logger = ctx.logger;
      const tls = files ? TlsSource.open(files, logger) : undefined;
      const reader = new GatewayReader(ctx);
      const live = await LiveState.open(reader);
      const agent = new Agent(reader, live, {
        version: ctx.version,
        sender: ctx.identity.name,
        instanceId: await reader.instanceId(),
        gatewayId: ctx.services.find('gateway-identity')?.gatewayID ?? ctx.identity.name,
        startedAt: ctx.now(),
      });
      const server = new AgentServer(agent, logger, tls);
      let url: string;
      try {
        url = await server.listen(settings.host, settings.port);
      } catch (err) {
        agent.close();
        live.close();
        await server.close();
        throw listenError(settings.host, settings.port, err);
      }
      ctx.services.provide('mtconnect-agent', { url, streams: () => server.streamCount });
      logger.info({ url }, 'MTConnect agent listening');
      return {
        async stop() {
          await server.close();
          agent.close();
          live.close();
        },
      };
    },
  });
}

export const mtconnectAgentPlugin = createMtconnectAgentPlugin();

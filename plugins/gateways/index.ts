/**
 * The program service's fleet: gateways (the one in this process reached
 * in-process, each its own entry by its gatewayID; those of other instances
 * and remote ones over HTTP with a secret key kept sealed), sync of their
 * machines and groups, the service's own settings per machine, machine
 * groups, and the files on a machine. docs/programs-fleet.md.
 */
import { hostname } from 'node:os';
import { join } from 'node:path';
import { definePlugin } from '../../core/runtime/plugin-host.js';
import type { ProgramsContext } from '../../core/roles/programs/context.js';
import { CredentialBox } from '../../core/store/credential-box.js';
import { fleetDeps, type FleetDeps } from './operations/deps.js';
import { fleetOperations, fleetService } from './operations/index.js';
import { FleetRepository, MIGRATIONS } from './store.js';
import { syncGateway } from './sync.js';
import { FleetKeeper } from './keep-in-step.js';
import { keepServing, registerLocalGateway } from './local-entry.js';
import type { LocalGateway } from './link-choice.js';
import { GATEWAYS_FIELDS, GATEWAYS_PART } from './config.js';

/** The gateway's identity file in its data directory (shared with the program service when both run in one process). */
const GATEWAY_ID_FILE = 'gateway-id';

/** Finds or makes the entry of the gateway in this process (local-entry.ts); refuses the start when that cannot be safe. */
async function localEntry(ctx: ProgramsContext, adopt: string | undefined, repo: FleetRepository): Promise<{ local: LocalGateway; stop(): Promise<void> } | undefined> {
  const link = ctx.localGateway;
  if (!link) return undefined;
  const host = hostname().slice(0, 64);
  const servedBy = `${host}:${ctx.dataDir}`.slice(0, 600);
  const { entry, decision } = await registerLocalGateway(ctx, repo, {
    identity: await link.identity(), host, servedBy, shared: ctx.db.dialect.engine !== 'sqlite', adopt,
    idFile: join(ctx.dataDir, GATEWAY_ID_FILE), now: ctx.now(),
  });
  ctx.logger.info({ gateway: entry.id, name: entry.name, gatewayID: entry.gatewayUid, decision }, 'gateway in this process: its fleet entry');
  const serving = keepServing(repo, entry.id, servedBy, ctx.now, (err) => ctx.logger.warn({ err: err.message, gateway: entry.id }, 'fleet entry of the gateway in this process not renewed'));
  return { local: { entryId: entry.id, link }, stop: () => serving.stop() };
}

export const gatewaysPlugin = definePlugin<ProgramsContext, typeof GATEWAYS_FIELDS>({
  name: 'gateways',
  migrations: MIGRATIONS,
  config: GATEWAYS_PART,
  async register(ctx) {
    const repo = new FleetRepository(ctx.db);
    const here = await localEntry(ctx, ctx.settings.adoptGateway, repo);
    let deps: FleetDeps;
    try {
      deps = fleetDeps(ctx, repo, CredentialBox.open(ctx.dataDir), here?.local);
    } catch (err) {
      // Not started after all: the entry is given back at once.
      await here?.stop();
      throw err;
    }
    for (const op of fleetOperations(deps)) ctx.rest.define(op);
    ctx.services.provide('gateway-machines', fleetService(deps));
    const keeper = new FleetKeeper(deps, ctx.logger);
    const intervalSec = ctx.settings.gatewaySync.intervalSec;
    const handle = {
      async stop() {
        await keeper.stop();
        await here?.stop();
      },
    };
    if (!here) {
      keeper.start(undefined, intervalSec);
      return handle;
    }
    const local = await repo.gateway(here.local.entryId);
    try {
      if (!local) throw new Error(`entry ${here.local.entryId} is gone`);
      const report = await syncGateway(deps, local, null);
      ctx.logger.info({ added: report.machines.added.count, gone: report.machines.gone.count }, 'local gateway synced');
    } catch (err) {
      ctx.logger.warn({ err: (err as Error).message }, 'local gateway not synced at start');
    }
    keeper.start(here.local.entryId, intervalSec);
    return handle;
  },
});

/**
 * The program service's fleet: gateways (the local one reached in-process,
 * remote ones over HTTP with a secret key kept sealed), sync of their
 * machines and groups, the service's own settings per machine, machine
 * groups, and the files on a machine. docs/programs-fleet.md.
 */
import { definePlugin } from '../../core/plugin-host.js';
import { newId } from '../../core/rest/ids.js';
import { auditActor } from '../../core/rest/principal.js';
import type { ProgramsContext } from '../../core/roles/programs/context.js';
import { CredentialBox } from '../../core/store/credential-box.js';
import { fleetDeps } from './operations/deps.js';
import { fleetOperations, fleetService } from './operations/index.js';
import { FleetRepository, MIGRATIONS, type GatewayRecord } from './store.js';
import { syncGateway } from './sync.js';
import { FleetKeeper } from './keep-in-step.js';
import { GATEWAYS_FIELDS, GATEWAYS_PART } from './config.js';

export const gatewaysPlugin = definePlugin<ProgramsContext, typeof GATEWAYS_FIELDS>({
  name: 'gateways',
  migrations: MIGRATIONS,
  config: GATEWAYS_PART,
  async register(ctx) {
    const repo = new FleetRepository(ctx.db);
    const deps = fleetDeps(ctx, repo, CredentialBox.open(ctx.dataDir));
    for (const op of fleetOperations(deps)) ctx.rest.define(op);
    ctx.services.provide('gateway-machines', fleetService(deps));
    const keeper = new FleetKeeper(deps, ctx.logger);
    const intervalSec = ctx.settings.gatewaySync.intervalSec;
    const handle = { stop: () => keeper.stop() };
    if (!ctx.localGateway) {
      keeper.start(undefined, intervalSec);
      return handle;
    }
    // The gateway in this process is registered at first start, and read at every start.
    let local = await repo.inProcessGateway();
    if (!local) {
      const record: GatewayRecord = {
        id: newId('gw'), name: 'local', kind: 'in-process', url: 'in-process', sealedKey: null, createdBy: 'system', createdAt: ctx.now(),
        lastContactAt: null, lastError: null, lastErrorAt: null, lastSyncAt: null,
      };
      await ctx.db.write(async (tx) => {
        await repo.insertGateway(tx, record);
        await ctx.audit.append(tx, { ...auditActor(null), category: 'fleet', action: 'gateway.register', entityType: 'gateway', entityId: record.id, details: { name: 'local', kind: 'in-process' } });
      }, { transaction: true });
      local = record;
      ctx.logger.info({ gateway: record.id }, 'local gateway registered');
    }
    try {
      const report = await syncGateway(deps, local, null);
      ctx.logger.info({ added: report.machines.added.count, gone: report.machines.gone.count }, 'local gateway synced');
    } catch (err) {
      ctx.logger.warn({ err: (err as Error).message }, 'local gateway not synced at start');
    }
    keeper.start(local.id, intervalSec);
    return handle;
  },
});

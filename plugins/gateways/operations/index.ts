/**
 * The fleet's operations, one file per resource, each a table of operations
 * made from the shared deps; and the service the other plugins use.
 */
import { GatewayLinkError } from '../../../core/gateway-link/types.js';
import type { AnyRestOperation } from '../../../core/rest/operation.js';
import type { GatewayMachines } from '../service.js';
import { wayTo } from '../link-choice.js';
import type { MachineRecord } from '../store.js';
import type { FleetDeps } from './deps.js';
import { FILE_OPERATIONS } from './files.js';
import { GATEWAY_OPERATIONS } from './gateways.js';
import { GROUP_OPERATIONS } from './groups.js';
import { MACHINE_OPERATIONS } from './machines.js';

/** Every fleet operation, in the order the OpenAPI document lists them. */
export function fleetOperations(deps: FleetDeps): AnyRestOperation[] {
  return [...GATEWAY_OPERATIONS, ...MACHINE_OPERATIONS, ...FILE_OPERATIONS, ...GROUP_OPERATIONS].map((make) => make(deps));
}

const forUse = (m: MachineRecord) => ({ id: m.id, gatewayId: m.gatewayId, machineId: m.machineId, name: m.name, driver: m.driver, system: m.system, model: m.model, present: m.present, programDir: m.programDir, transformProfile: m.transformProfile });

/** The fleet as the service's other plugins see it (`gateway-machines`). */
export function fleetService({ ctx, repo, machineVisible, groupVisible, linkFor, local }: FleetDeps): GatewayMachines {
  return {
    async machine(id, principal) {
      const m = await repo.machine(id);
      if (!m || !(await machineVisible(principal, m))) return undefined;
      return forUse(m);
    },
    async machines(ids, principal) {
      const byId = new Map((await repo.machinesIn(ids)).map((m) => [m.id, m]));
      const out: ReturnType<typeof forUse>[] = [];
      for (const id of ids) {
        const m = byId.get(id);
        if (m && (await machineVisible(principal, m))) out.push(forUse(m));
      }
      return out;
    },
    async noteContact(gatewayId, error) {
      await repo.recordContact(gatewayId, ctx.now(), error);
    },
    async mirrored() {
      const machines = await repo.mirrored();
      const here = new Map<string, boolean>();
      for (const id of new Set(machines.map((m) => m.gatewayId))) {
        const g = await repo.gateway(id);
        here.set(id, g !== undefined && wayTo(g, local) !== 'none');
      }
      return machines.map((m) => ({ ...forUse(m), mirrorIntervalSec: m.mirrorIntervalSec, reachableHere: here.get(m.gatewayId) ?? false }));
    },
    gatewayCounts: () => repo.gatewayCounts(),
    async group(id, principal) {
      const g = groupVisible(principal, id) ? await repo.group(id) : undefined;
      return g ? { id: g.id, name: g.name, machineIds: g.machineIds } : undefined;
    },
    async linkFor(machine) {
      const g = await repo.gateway(machine.gatewayId);
      if (!g) throw new GatewayLinkError('not-found', `gateway ${machine.gatewayId} of machine ${machine.machineId} is not registered`);
      return linkFor(g);
    },
  };
}

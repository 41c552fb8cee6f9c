/**
 * The fleet snapshot: batchReadTaskData and batchReadErrors, served from the
 * machine actors' caches. Nothing here contacts a machine. The CNCStatus
 * entries and the health entries are the fleet's published rows
 * (core/roles/gateway/fleet/rows.ts), the same objects until a machine
 * changes; with `sinceRevision` only the entries changed after it are
 * answered (docs/api.md, "Asking only for what changed").
 */
import type { GatewayContext } from '../../core/roles/gateway/context.js';
import { GatewayError, quoteList } from '../../core/interfaces/errors.js';
import type { Changes } from '../../core/roles/gateway/api-outputs.js';
import { TASK_DATA } from '../../core/roles/gateway/contract/task-data.js';
import { taskDataEntry } from '../../core/roles/gateway/fleet/entries.js';
import type { MachineRows } from '../../core/roles/gateway/fleet/rows.js';

/** Resolves the requested machines (every machine, in list order, when none are named), failing with 10003 naming every unknown one. */
function machinesFor(ctx: GatewayContext, machineIDs: string[] | undefined): string[] {
  const ids = machineIDs ?? ctx.store.listMachines().map((m) => m.machineID);
  const unknown = ids.filter((id) => !ctx.fleet.has(id));
  if (unknown.length) {
    throw new GatewayError('GENERAL_MACHINE_ID_NOT_EXISTED', `machineIDs: unknown ${quoteList(unknown)}`);
  }
  return ids;
}

/** Every asked machine's rows (now), or only those changed after `sinceRevision`. */
function rowsFor<E>(ctx: GatewayContext, machineIDs: string[] | undefined, sinceRevision: number | undefined, kind: 'status' | 'health', pick: (rows: MachineRows) => E): E[] | Changes<E> {
  const ids = machinesFor(ctx, machineIDs);
  const { rows } = ctx.fleet;
  const now = rows.clock();
  if (sinceRevision === undefined) {
    return ids.map((id) => {
      const machine = rows.get(id, now);
      if (!machine) throw new GatewayError('GENERAL_MACHINE_ID_NOT_EXISTED', `machineIDs: unknown ${quoteList([id])}`);
      return pick(machine);
    });
  }
  const changes = rows.changedSince(sinceRevision, ids, { kind, wholeFleet: machineIDs === undefined, now });
  return { revision: changes.revision, full: changes.full, entries: changes.rows.map(pick), removed: changes.removed };
}

export function defineFleetSnapshotInterfaces(ctx: GatewayContext): void {
  ctx.interfaces.implement(TASK_DATA.batchReadTaskData, {
    handler: ({ type, machineIDs, sinceRevision }) => {
      if (type === 'CNCStatus') return rowsFor(ctx, machineIDs, sinceRevision, 'status', (r) => r.status);
      if (sinceRevision !== undefined) throw new GatewayError('INVALID_PARAMETER', `sinceRevision: accepted only with type CNCStatus; found type ${type}`);
      return machinesFor(ctx, machineIDs).map((id) => taskDataEntry(ctx.fleet.snapshot(id), type));
    },
  });

  ctx.interfaces.implement(TASK_DATA.batchReadErrors, {
    handler: ({ machineIDs, sinceRevision }) => rowsFor(ctx, machineIDs, sinceRevision, 'health', (r) => r.health),
  });
}

/**
 * The fleet snapshot: batchReadTaskData and batchReadErrors, served from the
 * machine actors' caches. Nothing here contacts a machine. The CNCStatus
 * entries and the health entries are the fleet's published rows
 * (core/roles/gateway/fleet/rows.ts), the same objects until a machine
 * changes; with `sinceRevision` only the entries changed after it are
 * answered (docs/api.md, "Asking only for what changed").
 */
import { z } from 'zod';
import { MACHINE_TASK_CLASSES, machineIdSchema } from '../../core/roles/gateway/machine-config.js';
import type { GatewayContext } from '../../core/roles/gateway/context.js';
import { GatewayError, quoteList } from '../../core/errors.js';
import { queryInt, queryList } from '../../core/interfaces.js';
import { batchReadErrorsOutput, batchReadTaskDataOutput, type Changes } from '../../core/roles/gateway/api-outputs.js';
import { taskDataEntry } from '../../core/roles/gateway/fleet/entries.js';
import type { MachineRows } from '../../core/roles/gateway/fleet/rows.js';

const machineIDsInput = queryList(machineIdSchema).optional().describe('machineIDs, comma-separated; omit for every machine');
const sinceRevisionInput = queryInt()
  .min(0)
  .max(Number.MAX_SAFE_INTEGER)
  .optional()
  .describe('the revision of an earlier answer: answer only the entries changed after it, as {revision, full, entries, removed} (a gateway extension; docs/api.md)');

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
  ctx.interfaces.define({
    path: '/api/task/batchReadTaskData',
    method: 'GET',
    summary:
      'The cached latest sample of one data class for many machines, from the actor caches. For CNCStatus each entry also carries the derived state, its reason and statusStale; with sinceRevision (CNCStatus only), only the entries changed after that revision.',
    tags: ['task data'],
    input: z.object({ type: z.enum(MACHINE_TASK_CLASSES), machineIDs: machineIDsInput, sinceRevision: sinceRevisionInput }).strict(),
    output: batchReadTaskDataOutput,
    handler: ({ type, machineIDs, sinceRevision }) => {
      if (type === 'CNCStatus') return rowsFor(ctx, machineIDs, sinceRevision, 'status', (r) => r.status);
      if (sinceRevision !== undefined) throw new GatewayError('INVALID_PARAMETER', `sinceRevision: accepted only with type CNCStatus; found type ${type}`);
      return machinesFor(ctx, machineIDs).map((id) => taskDataEntry(ctx.fleet.snapshot(id), type));
    },
  });

  ctx.interfaces.define({
    path: '/api/task/batchReadErrors',
    method: 'GET',
    summary: 'Connection health and the latest error of each task for many machines, from the actor caches; with sinceRevision, only the entries changed after that revision.',
    tags: ['task data'],
    input: z.object({ machineIDs: machineIDsInput, sinceRevision: sinceRevisionInput }).strict(),
    output: batchReadErrorsOutput,
    handler: ({ machineIDs, sinceRevision }) => rowsFor(ctx, machineIDs, sinceRevision, 'health', (r) => r.health),
  });
}

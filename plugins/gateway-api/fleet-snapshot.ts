/**
 * The fleet snapshot: batchReadTaskData and batchReadErrors, served from the
 * machine actors' caches. Nothing here contacts a machine.
 */
import { z } from 'zod';
import { MACHINE_TASK_CLASSES, type MachineTaskClass, machineIdSchema } from '../../core/roles/gateway/machine-config.js';
import type { GatewayContext } from '../../core/roles/gateway/context.js';
import { ERRORS, GatewayError, quoteList } from '../../core/errors.js';
import { memberShortfall } from '../../core/roles/gateway/fleet/group-aggregates.js';
import type { MachineSnapshot } from '../../core/roles/gateway/fleet/fleet.js';
import { queryList } from '../../core/interfaces.js';

const machineIDsInput = queryList(machineIdSchema).optional().describe('machineIDs, comma-separated; omit for every machine');

/** Resolves the requested machines, failing with 10003 naming every unknown one. */
function viewsFor(ctx: GatewayContext, machineIDs: string[] | undefined): MachineSnapshot[] {
  const ids = machineIDs ?? ctx.store.listMachines().map((m) => m.machineID);
  const unknown = ids.filter((id) => !ctx.fleet.has(id));
  if (unknown.length) {
    throw new GatewayError('GENERAL_MACHINE_ID_NOT_EXISTED', `machineIDs: unknown ${quoteList(unknown)}`);
  }
  return ids.map((id) => ctx.fleet.snapshot(id));
}

/** One machine's cached sample of one class, with the derived state for CNCStatus. */
export function taskDataEntry(view: MachineSnapshot, type: MachineTaskClass) {
  const task = view.config.tasks[type];
  const cached = view.cache[type] ?? {};
  const machineID = view.config.machineID;
  const time = cached.sampledAt ?? null;
  const data = cached.value ?? null;
  // The same reasons, in the same order, as a group task gives for a member without data.
  const error = view.config.isActive && task.enabled && !cached.error && cached.sampledAt !== undefined ? null : memberShortfall(view, type);
  if (type !== 'CNCStatus') return { machineID, type, time, data, error };
  const { state, reason, statusStale } = view.derived;
  return { machineID, type, time, data, error, state, reason, statusStale };
}

export function defineFleetSnapshotInterfaces(ctx: GatewayContext): void {
  ctx.interfaces.define({
    path: '/api/task/batchReadTaskData',
    method: 'GET',
    summary:
      'The cached latest sample of one data class for many machines, from the actor caches. For CNCStatus each entry also carries the derived state, its reason and statusStale.',
    tags: ['task data'],
    input: z.object({ type: z.enum(MACHINE_TASK_CLASSES), machineIDs: machineIDsInput }).strict(),
    handler: ({ type, machineIDs }) => viewsFor(ctx, machineIDs).map((view) => taskDataEntry(view, type)),
  });

  ctx.interfaces.define({
    path: '/api/task/batchReadErrors',
    method: 'GET',
    summary: 'Connection health and the latest error of each task for many machines, from the actor caches.',
    tags: ['task data'],
    input: z.object({ machineIDs: machineIDsInput }).strict(),
    handler: ({ machineIDs }) =>
      viewsFor(ctx, machineIDs).map((view) => {
        const c = view.connection;
        const tasks: Record<string, { errorCode: number; errorMsg: string; at: number }> = {};
        for (const cls of MACHINE_TASK_CLASSES) {
          const error = view.cache[cls]?.error;
          if (error) tasks[cls] = { errorCode: error.errorCode, errorMsg: error.message, at: error.at };
        }
        return {
          machineID: view.config.machineID,
          connection: {
            state: c.state,
            since: c.since || null,
            attempts: c.attempts,
            errorCode: c.state === 'online' ? 0 : (c.error?.errorCode ?? ERRORS.MACHINE_NOT_CONNECTED.code),
            error: c.state === 'online' ? null : (c.error?.message ?? `connection ${c.state}`),
          },
          tasks,
        };
      }),
  });
}

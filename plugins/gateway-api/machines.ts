/** Configuration interfaces for machines: list, get, add, update, delete. */
import { z } from 'zod';
import { machineConfigSchema, WRITE_ONLY_MACHINE_FIELDS, type MachineConfig, machineIdSchema } from '../../core/roles/gateway/machine-config.js';
import type { GatewayContext } from '../../core/roles/gateway/context.js';
import { GatewayError } from '../../core/errors.js';
import { parseOrThrow } from '../../core/schema-errors.js';
import { isRecord } from '../../core/json-value.js';
import { machineListOutput, type ListedMachine } from '../../core/roles/gateway/api-outputs.js';

/**
 * A machine as the API shows it: write-only credentials removed, whether each is set, and
 * whether the config file names it (`managedBy: 'config'`: the next start replaces API edits).
 */
export function publicMachine(config: MachineConfig, managedBy: 'config' | 'api'): ListedMachine {
  // Destructuring rather than delete: the fleet list builds a thousand of these per call.
  const { password, fileServerPassword, ...shown } = config;
  return { ...shown, passwordSet: Boolean(password), fileServerPasswordSet: Boolean(fileServerPassword), managedBy };
}

const machineIDInput = z.object({ machineID: machineIdSchema }).strict();

/** Parses a full machine config, reporting every problem with its field path. */
function parseMachine(raw: unknown, ctx: GatewayContext): MachineConfig {
  const config = parseOrThrow(machineConfigSchema, raw);
  const problems = ctx.drivers.validate(config);
  if (problems.length) throw new GatewayError('INVALID_PARAMETER', problems.join('; '));
  return config;
}

/** Applies a partial update: nested `tasks.<class>` and `connection` merge; an empty credential clears it. */
function mergeMachine(existing: MachineConfig, patch: Record<string, unknown>): Record<string, unknown> {
  const merged: Record<string, unknown> = { ...existing, ...patch };
  if (isRecord(patch.tasks)) {
    const tasks: Record<string, unknown> = { ...existing.tasks };
    for (const [cls, value] of Object.entries(patch.tasks)) {
      const current = (existing.tasks as Record<string, unknown>)[cls];
      tasks[cls] = isRecord(value) && isRecord(current) ? { ...current, ...value } : value;
    }
    merged.tasks = tasks;
  }
  if (isRecord(patch.connection)) merged.connection = { ...existing.connection, ...patch.connection };
  for (const field of WRITE_ONLY_MACHINE_FIELDS) if (merged[field] === '') delete merged[field];
  return merged;
}

export function defineMachineInterfaces(ctx: GatewayContext): void {
  const { interfaces, store, bus } = ctx;
  const listedMachine = (config: MachineConfig) => publicMachine(config, store.isConfigManaged(config.machineID) ? 'config' : 'api');
  // The fleet page and agents list the fleet often; the public list is rebuilt only when a machine changes.
  let listed: { revision: number; machines: ListedMachine[] } | undefined;
  const publicMachines = () => {
    if (listed?.revision !== store.machinesRevision) listed = { revision: store.machinesRevision, machines: store.listMachines().map(listedMachine) };
    return listed.machines;
  };

  interfaces.define({
    path: '/api/config/machines',
    method: 'GET',
    summary: 'Every machine with its configuration, credentials excluded.',
    tags: ['configuration'],
    input: z.object({}).strict(),
    output: machineListOutput,
    handler: () => publicMachines(),
  });

  interfaces.define({
    path: '/api/config/machine',
    method: 'GET',
    summary: 'One machine’s full configuration, credentials excluded, with the item families its driver supports.',
    tags: ['configuration'],
    input: machineIDInput,
    handler: ({ machineID }) => {
      const config = store.getMachine(machineID);
      const families = ctx.fleet.has(machineID) && config.isActive ? [...ctx.fleet.client(machineID).families] : [];
      return { ...listedMachine(config), families };
    },
  });

  interfaces.define({
    path: '/api/config/machine/add',
    method: 'POST',
    summary: 'Adds a machine; its actor starts at once when it is active.',
    tags: ['configuration'],
    input: z.record(z.string(), z.unknown()),
    handler: async (body) => {
      const config = parseMachine(body, ctx);
      await store.createMachine(config);
      bus.emit('machine.saved', { config, created: true });
      return listedMachine(config);
    },
  });

  interfaces.define({
    path: '/api/config/machine/update',
    method: 'POST',
    summary: 'Changes fields of a machine; its actor restarts (or stops, when deactivated) at once.',
    tags: ['configuration'],
    input: z.looseObject({ machineID: machineIdSchema }),
    handler: async (patch) => {
      const existing = store.getMachine(patch.machineID);
      const config = parseMachine(mergeMachine(existing, patch), ctx);
      await store.updateMachine(config);
      bus.emit('machine.saved', { config, created: false });
      return listedMachine(config);
    },
  });

  interfaces.define({
    path: '/api/config/machine/delete',
    method: 'POST',
    summary: 'Deletes a machine, stops its actor and removes it from its groups. Its history stays.',
    tags: ['configuration'],
    input: machineIDInput,
    handler: async ({ machineID }) => {
      const groups = await store.deleteMachine(machineID);
      bus.emit('machine.deleted', { machineID });
      for (const config of groups) bus.emit('group.saved', { config, created: false });
      return { machineID, deleted: true };
    },
  });
}

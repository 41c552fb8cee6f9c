/** Configuration interfaces for machines: list, get, add, update, delete. */
import { machineConfigSchema, WRITE_ONLY_MACHINE_FIELDS, type MachineConfig } from '../../core/roles/gateway/machine-config.js';
import type { GatewayContext } from '../../core/roles/gateway/context.js';
import { GatewayError } from '../../core/interfaces/errors.js';
import { parseOrThrow } from '../../core/interfaces/schema-errors.js';
import { isRecord } from '../../core/values/json-value.js';
import type { ListedMachine } from '../../core/roles/gateway/api-outputs.js';
import { CONFIGURATION } from '../../core/roles/gateway/contract/configuration.js';

/**
 * A machine as the API shows it: write-only credentials removed, whether each is set, and
 * whether the config file names it (`managedBy: 'config'`: the next start replaces API edits).
 */
export function publicMachine(config: MachineConfig, managedBy: 'config' | 'api'): ListedMachine {
  // Destructuring rather than delete: the fleet list builds a thousand of these per call.
  const { password, fileServerPassword, ...shown } = config;
  return { ...shown, passwordSet: Boolean(password), fileServerPasswordSet: Boolean(fileServerPassword), managedBy };
}

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

  interfaces.implement(CONFIGURATION.machines, {
    handler: () => publicMachines(),
  });

  interfaces.implement(CONFIGURATION.machine, {
    handler: ({ machineID }) => {
      const config = store.getMachine(machineID);
      const families = ctx.fleet.has(machineID) && config.isActive ? [...ctx.fleet.client(machineID).families] : [];
      return { ...listedMachine(config), families };
    },
  });

  interfaces.implement(CONFIGURATION.addMachine, {
    handler: async (body) => {
      const config = parseMachine(body, ctx);
      await store.createMachine(config);
      bus.emit('machine.saved', { config, created: true });
      return listedMachine(config);
    },
  });

  interfaces.implement(CONFIGURATION.updateMachine, {
    handler: async (patch) => {
      const existing = store.getMachine(patch.machineID);
      const config = parseMachine(mergeMachine(existing, patch), ctx);
      await store.updateMachine(config);
      bus.emit('machine.saved', { config, created: false });
      return listedMachine(config);
    },
  });

  interfaces.implement(CONFIGURATION.deleteMachine, {
    handler: async ({ machineID }) => {
      const groups = await store.deleteMachine(machineID);
      bus.emit('machine.deleted', { machineID });
      for (const config of groups) bus.emit('group.saved', { config, created: false });
      return { machineID, deleted: true as const };
    },
  });
}

/**
 * What a caller limited to some machine groups sees through the tools (an
 * identity provider's token on /mcp whose claims map to groups,
 * docs/identity.md): the machines of those groups and nothing else, as if
 * the others did not exist. Every interface a tool calls goes through here:
 * a machineID (or machineIDs) outside the scope is answered as an unknown
 * machine (10003, GW-94), a groupID outside it as an unknown group; an
 * answer listing machines or groups (an array of rows, or `entries`) keeps
 * the rows in scope; the error log keeps the caller's own rows. The groups'
 * members are read once per tool call, so a change of a group is seen at the
 * next call.
 */
import { GatewayError } from '../interfaces/errors.js';
import type { InterfaceEntry, InterfaceRegistry, Principal } from '../interfaces/registry.js';
import { CONFIGURATION } from '../roles/gateway/contract/configuration.js';
import { SYSTEM } from '../roles/gateway/contract/system.js';

/** The machines and groups a scoped caller sees. */
export class MachineScope {
  private constructor(
    private readonly machines: ReadonlySet<string>,
    private readonly groups: ReadonlySet<string>,
    private readonly username: string | null,
  ) {}

  /** The scope of `principal`'s machine groups, from the gateway's groups as they are now. */
  static async of(interfaces: InterfaceRegistry, principal: Principal & { machineGroups: readonly string[] }, sourceIp: string): Promise<MachineScope> {
    const wanted = new Set(principal.machineGroups);
    const machines = new Set<string>();
    const groups = new Set<string>();
    const result = await interfaces.call(CONFIGURATION.groups, {}, { principal, sourceIp });
    if (!result.ok) throw result.error;
    for (const group of result.data) {
      if (!wanted.has(group.groupID)) continue;
      groups.add(group.groupID);
      for (const id of group.machineIDs) machines.add(id);
    }
    return new MachineScope(machines, groups, principal.username);
  }

  /** The refusal of an input naming a machine or group out of scope, or null. */
  refusal(input: unknown): GatewayError | null {
    if (input === null || typeof input !== 'object') return null;
    const { machineID, machineIDs, groupID } = input as Record<string, unknown>;
    const ids = typeof machineIDs === 'string' ? machineIDs.split(',') : Array.isArray(machineIDs) ? machineIDs : [];
    if (typeof machineID === 'string') ids.push(machineID);
    const outside = ids.find((id) => typeof id === 'string' && id.trim() !== '' && !this.machines.has(id.trim()));
    if (outside !== undefined) return new GatewayError('GENERAL_MACHINE_ID_NOT_EXISTED');
    if (typeof groupID === 'string' && !this.groups.has(groupID)) return new GatewayError('GENERAL_GROUP_ID_NOT_EXISTED');
    return null;
  }

  /** The answer of `entry` with only the rows in scope. */
  narrow<T>(entry: InterfaceEntry, data: T): T {
    if (entry.path === SYSTEM.errorLog.path) return this.ownErrorRows(data);
    if (Array.isArray(data)) return this.rows(data) as T;
    const entries = data !== null && typeof data === 'object' ? (data as { entries?: unknown }).entries : undefined;
    if (Array.isArray(entries)) return { ...data, entries: this.rows(entries) };
    return data;
  }

  private rows(rows: readonly unknown[]): unknown[] {
    return rows.filter((row) => {
      if (row === null || typeof row !== 'object') return true;
      const { machineID, groupID } = row as Record<string, unknown>;
      if (typeof machineID === 'string') return this.machines.has(machineID);
      if (typeof groupID === 'string') return this.groups.has(groupID);
      return true;
    });
  }

  /** The error log names every caller's failures and machines: a scoped caller reads its own rows. */
  private ownErrorRows<T>(data: T): T {
    const log = data as { data?: { user: string | null }[]; total?: number; returned?: number };
    if (!Array.isArray(log.data)) return data;
    const own = log.data.filter((row) => row.user !== null && row.user === this.username);
    return { ...data, data: own, total: own.length, returned: own.length };
  }
}

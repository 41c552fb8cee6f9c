/**
 * The gateway's events: what its bus (`GatewayContext.bus`, an
 * `EventBus<GatewayEvents>` of core/runtime/event-bus.ts) carries. The map is an
 * interface, so a plugin adds its own events by declaration merging without
 * editing this file (docs/adding-a-plugin.md, "Events"):
 *
 * ```ts
 * declare module '../../core/roles/gateway/events.js' {
 *   interface GatewayEvents {
 *     'note.added': { machineID: string; text: string };
 *   }
 * }
 * ```
 */
import type { EventBus } from '../../runtime/event-bus.js';
import type { FleetChangeSource } from '../../gateway-link/types.js';
import type { GroupConfig, MachineConfig } from './machine-config.js';

/** Every event of the gateway and its payload; plugins add theirs by declaration merging. */
export interface GatewayEvents {
  'machine.saved': { config: MachineConfig; created: boolean };
  'machine.deleted': { machineID: string };
  'group.saved': { config: GroupConfig; created: boolean };
  'group.deleted': { groupID: string };
}

/** The bus's machine and group events as one change source (what the in-process gateway link watches). */
export function fleetChangesOf(bus: EventBus<GatewayEvents>): FleetChangeSource {
  return (listener) => {
    const offs = (['machine.saved', 'machine.deleted', 'group.saved', 'group.deleted'] as const).map((event) => bus.on(event, () => listener()));
    return () => {
      for (const off of offs) off();
    };
  };
}

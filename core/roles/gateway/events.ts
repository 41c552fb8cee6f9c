/**
 * The gateway's events: what its bus (`GatewayContext.bus`, an
 * `EventBus<GatewayEvents>` of core/event-bus.ts) carries. The map is an
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
import type { GroupConfig, MachineConfig } from './machine-config.js';

/** Every event of the gateway and its payload; plugins add theirs by declaration merging. */
export interface GatewayEvents {
  'machine.saved': { config: MachineConfig; created: boolean };
  'machine.deleted': { machineID: string };
  'group.saved': { config: GroupConfig; created: boolean };
  'group.deleted': { groupID: string };
}

/**
 * What the fleet offers the service's other plugins (assignments,
 * deployments, the mirror), through the role's service registry: machines
 * and groups as the caller's scope allows, and the link to reach a machine.
 * Declared by declaration merging, so a consumer needs no import of this plugin.
 */
import type { GatewayLink } from '../../core/gateway-link/types.js';
import type { RestPrincipal } from '../../core/rest/operation.js';

export interface FleetMachine {
  id: string;
  gatewayId: string;
  /** The machine's ID on its gateway. */
  machineId: string;
  name: string;
  driver: string;
  /** The control family as its gateway's configuration names it (`FANUC`, `SIEMENS`, …); it picks the file-name rule. */
  system: string;
  /** The control's model (`0i-MF Plus`). */
  model: string;
  present: boolean;
  programDir: string;
  transformProfile: string | null;
}

export interface GatewayMachines {
  /** The machine; undefined when missing or outside `principal`'s machine-group scope. */
  machine(id: string, principal: RestPrincipal): Promise<FleetMachine | undefined>;
  /** The machines of `ids` the principal may see (missing or hidden ones left out), read at once. */
  machines(ids: readonly string[], principal: RestPrincipal): Promise<FleetMachine[]>;
  /** The group and its member machine ids; undefined when missing or outside the scope. */
  group(id: string, principal: RestPrincipal): Promise<{ id: string; name: string; machineIds: string[] } | undefined>;
  /**
   * The link to the machine's gateway from this instance: never this process's
   * own gateway for a machine of another; throws GatewayLinkError ('unreachable',
   * transient) while there is no way to it.
   */
  linkFor(machine: FleetMachine): Promise<GatewayLink>;
  /** Records the outcome of a call made through a link: contact (error null), or the gateway did not answer. */
  noteContact(gatewayId: string, error: string | null): Promise<void>;
  /**
   * Machines whose mirror is on (and that their gateway still lists), with the
   * mirror interval, and whether this instance has a way to their gateway now
   * (not when it is the gateway of another instance with no address registered:
   * that instance reads them).
   */
  mirrored(): Promise<(FleetMachine & { mirrorIntervalSec: number; reachableHere: boolean })[]>;
  /** Gateways registered, and those whose last call failed to reach them. */
  gatewayCounts(): Promise<{ total: number; unreachable: number }>;
}

declare module '../../core/roles/programs/context.js' {
  interface ProgramsServices {
    'gateway-machines': GatewayMachines;
  }
}

/**
 * What the fleet says about its machines now: each machine's derived state
 * and reason, from the fleet's published rows (core/roles/gateway/fleet/
 * rows.ts, the same rows get_fleet_status joins), read through the gateway
 * context. The one place the northbound targets read the live fleet; what
 * a row of the history meant when it was recorded comes from the history
 * itself (row-states.ts).
 */
import type { DerivedStateName } from '../../core/roles/gateway/fleet/derive-state.js';
import type { Fleet } from '../../core/roles/gateway/fleet/fleet.js';

/** A machine's derived state now. */
export interface MachineNow {
  machineID: string;
  state: DerivedStateName;
  reason: string;
}

/** What a format reads of the fleet. */
export interface FleetStates {
  /** Every machine the fleet holds, with its derived state now. */
  machines(): MachineNow[];
  /** One machine's derived state now; undefined for a machine the fleet does not hold. */
  machine(machineID: string): MachineNow | undefined;
}

export class FleetView implements FleetStates {
  constructor(private readonly fleet: Fleet) {}

  machines(): MachineNow[] {
    const out: MachineNow[] = [];
    for (const machineID of this.fleet.ids()) {
      const now = this.machine(machineID);
      if (now) out.push(now);
    }
    return out;
  }

  machine(machineID: string): MachineNow | undefined {
    const status = this.fleet.rows.get(machineID)?.status;
    return status ? { machineID, state: status.state, reason: status.reason } : undefined;
  }
}

/** What the interfaces read of one machine: its config, connection health, cached samples and derived state, at one moment. */
import type { MachineConfig } from '../machine-config.js';
import type { DerivedState } from './derive-state.js';
import type { ConnectionHealth, TaskCache } from './machine-actions.js';

/** A read-only view of one machine for the interfaces. */
export interface MachineSnapshot {
  config: MachineConfig;
  connection: ConnectionHealth;
  cache: Partial<TaskCache>;
  derived: DerivedState;
  /** Until when (unix ms, exclusive) `derived` stays what it is if nothing but time changes; unknown when absent. */
  derivedUntil?: number;
}

/**
 * The mapping from the gateway's status fields and derived state to
 * MTConnect values: the one table of docs/mtconnect.md, in code. Each
 * function takes what a history row carries and answers the MTConnect value
 * of one data item.
 */
import type { AlarmLevel, ExecutionState, OperatingMode } from '../../core/driver-seam/driver.js';

/** What a value is when it is not known (MTConnect's own word). */
export const UNAVAILABLE = 'UNAVAILABLE';

const EXECUTION: Record<ExecutionState, string> = {
  RUNNING: 'ACTIVE',
  HOLD: 'FEED_HOLD',
  STOPPED: 'STOPPED',
  RESET: 'READY',
  EMERGENCY: 'STOPPED',
};

const CONTROLLER_MODE: Record<OperatingMode, string> = {
  AUTO: 'AUTOMATIC',
  REMOTE: 'AUTOMATIC',
  MDI: 'MANUAL_DATA_INPUT',
  MANUAL: 'MANUAL',
  JOG: 'MANUAL',
  HANDLE: 'MANUAL',
  REF: 'MANUAL',
  EDIT: 'EDIT',
  UNKNOWN: UNAVAILABLE,
};

/** EXECUTION from the normalised execution state; UNAVAILABLE for a value no driver sends. */
export function executionValue(adjustedStatus: unknown): string {
  return EXECUTION[adjustedStatus as ExecutionState] ?? UNAVAILABLE;
}

/** CONTROLLER_MODE from the normalised operating mode. */
export function controllerModeValue(mode: unknown): string {
  return CONTROLLER_MODE[mode as OperatingMode] ?? UNAVAILABLE;
}

/** EMERGENCY_STOP: TRIGGERED while the stop is engaged, ARMED otherwise. */
export function emergencyStopValue(emergency: unknown): string {
  return emergency === true ? 'TRIGGERED' : 'ARMED';
}

/** The derived states in which the status sample is current (docs/derived-states.md, rules 5-8). */
const STATUS_STATES: ReadonlySet<string> = new Set(['alarm', 'running', 'setup', 'idle']);

/** Whether the derived state says the status sample is current, so the status data items show its values. */
export function statusIsCurrent(derived: string | undefined): boolean {
  return derived !== undefined && STATUS_STATES.has(derived);
}

/** AVAILABILITY from the derived state: UNAVAILABLE while offline or inactive, AVAILABLE otherwise. */
export function availabilityValue(derived: string): string {
  return derived === 'offline' || derived === 'inactive' ? UNAVAILABLE : 'AVAILABLE';
}

/** The Agent's CONNECTION_STATUS of a machine's driver from the connection state a State row carries. */
export function connectionStatusValue(connection: unknown): string {
  if (connection === 'online') return 'ESTABLISHED';
  if (connection === 'connecting') return 'LISTEN';
  return 'CLOSED';
}

/** The Condition element of an active alarm's level: Warning for a warning, Fault for an alarm or an emergency. */
export function conditionLevel(level: Exclude<AlarmLevel, 'none'>): 'Warning' | 'Fault' {
  return level === 'warning' ? 'Warning' : 'Fault';
}

const RANK: Readonly<Record<string, number>> = { none: 0, warning: 1, alarm: 2, emergency: 3 };

/** The severity rank of an alarm level (none 0 … emergency 3); an unknown word ranks as an alarm. */
export function levelRank(level: unknown): number {
  return RANK[level as string] ?? 2;
}

/**
 * deriveState: the one place that decides what a machine is doing. A pure
 * function of the machine's activity, its connection health and its cached
 * status sample, so it is table-tested and explains itself: `reason` names
 * the rule that fired and the signal values behind it.
 *
 * Rules, first match wins:
 *  1. inactive  — the machine is deactivated in its configuration.
 *  2. noData    — the CNCStatus task is not enabled (specification rule).
 *  3. offline   — the connection is down and the cached status is stale (specification rule).
 *  4. noData    — no usable status sample: none yet, or the cached one is stale while the
 *                 connection is up (status reads failing).
 *  5. alarm     — emergency stop engaged, or an alarm of level `alarm`/`emergency` is active.
 *  6. running   — the controller is executing a program (adjustedStatus RUNNING).
 *  7. setup     — a manual mode (MANUAL, JOG, HANDLE, MDI, EDIT, REF) and not executing.
 *  8. idle      — everything else: AUTO/REMOTE mode, stopped, reset or feed hold; the
 *                 reason quotes the controller's own word when it says more (FEED_HOLD,
 *                 OPTIONAL_STOP, PROGRAM_COMPLETED…).
 */
import type { CncStatus, OperatingMode } from '../../../driver-seam/driver.js';

export const DERIVED_STATES = ['running', 'idle', 'alarm', 'setup', 'offline', 'noData', 'inactive'] as const;
export type DerivedStateName = (typeof DERIVED_STATES)[number];

export const CONNECTION_STATES = ['connecting', 'online', 'backoff', 'offline', 'stopped'] as const;
export type ConnectionState = (typeof CONNECTION_STATES)[number];

export interface DeriveStateInput {
  isActive: boolean;
  statusTaskEnabled: boolean;
  connection: { state: ConnectionState; error?: string };
  /** The cached status sample and when it was taken (unix ms), if any. */
  status?: { value: CncStatus; sampledAt: number };
  /** The last status read error, if the latest attempt failed. */
  statusError?: string;
  /** Status interval in ms; a sample older than `staleAfterIntervals` of them is stale. */
  statusIntervalMs: number;
  now: number;
  staleAfterIntervals?: number;
}

export interface DerivedState {
  state: DerivedStateName;
  /** Which rule fired, with the signals behind it. */
  reason: string;
  /** The connection is down and the cached status is old. */
  statusStale: boolean;
}

const MANUAL_MODES: ReadonlySet<OperatingMode> = new Set(['MANUAL', 'JOG', 'HANDLE', 'MDI', 'EDIT', 'REF']);

/** A sample older than this many status intervals is no longer current. */
export const DEFAULT_STALE_AFTER_INTERVALS = 3;

export function deriveState(input: DeriveStateInput): DerivedState {
  const online = input.connection.state === 'online';
  const staleAfterMs = input.statusIntervalMs * (input.staleAfterIntervals ?? DEFAULT_STALE_AFTER_INTERVALS);
  const age = input.status ? input.now - input.status.sampledAt : Infinity;
  const old = age > staleAfterMs;
  const statusStale = !online && old;

  if (!input.isActive) return { state: 'inactive', reason: 'inactive: machine isActive=false', statusStale: false };
  if (!input.statusTaskEnabled) {
    return { state: 'noData', reason: 'noData: CNCStatus task not enabled', statusStale };
  }
  if (statusStale) {
    const error = input.connection.error ? `, error="${input.connection.error}"` : '';
    const last = input.status ? `last status ${Math.round(age / 1000)}s old` : 'no status sampled yet';
    return {
      state: 'offline',
      reason: `offline: connection=${input.connection.state}${error}; ${last}`,
      statusStale,
    };
  }
  if (!input.status || old) {
    const why = input.status ? `status ${Math.round(age / 1000)}s old` : 'no status sample yet';
    const error = input.statusError ? `, statusError="${input.statusError}"` : '';
    return { state: 'noData', reason: `noData: ${why} while connection=${input.connection.state}${error}`, statusStale };
  }

  const s = input.status.value;
  const signals = `adjustedStatus=${s.adjustedStatus}, mode=${s.mode}, alarmLevel=${s.alarmLevel}`;
  const link = online ? '' : `; connection=${input.connection.state}, status ${Math.round(age / 1000)}s old`;
  if (s.emergency || s.adjustedStatus === 'EMERGENCY') {
    return { state: 'alarm', reason: `alarm: emergency stop engaged (${signals})${link}`, statusStale };
  }
  if (s.alarmStatus || s.alarmLevel === 'alarm' || s.alarmLevel === 'emergency') {
    return { state: 'alarm', reason: `alarm: active alarm (${signals})${link}`, statusStale };
  }
  if (s.adjustedStatus === 'RUNNING') {
    return { state: 'running', reason: `running: executing (${signals})${link}`, statusStale };
  }
  if (MANUAL_MODES.has(s.mode)) {
    return { state: 'setup', reason: `setup: manual mode and not executing (${signals})${link}`, statusStale };
  }
  return { state: 'idle', reason: `idle: not executing${controllerWord(s)} (${signals})${link}`, statusStale };
}

/** The longest controller word a reason quotes. */
const MAX_WORD = 40;

/**
 * The controller's own execution word when it says more than the normalised
 * state, e.g. `, controller reports FEED_HOLD` for HOLD, so an idle machine's
 * reason tells a feed hold from an optional stop or a finished program.
 */
function controllerWord(s: CncStatus): string {
  const word = s.cncStatus.trim();
  if (word === '' || word.toUpperCase() === s.adjustedStatus) return '';
  return `, controller reports ${word.length > MAX_WORD ? `${word.slice(0, MAX_WORD)}…` : word}`;
}

/**
 * Until when (unix ms, exclusive) `deriveState(input)` answers what it
 * answers at `input.now` if nothing but time changes. Time enters in two
 * places: a status sample turns old after `staleAfterIntervals` intervals,
 * and the reasons of a machine that is not online (or whose status is old)
 * name the status's age in whole seconds. Times are whole milliseconds, as
 * Date.now gives them.
 */
export function derivedValidUntil(input: DeriveStateInput): number {
  if (!input.isActive || !input.status) return Infinity;
  const staleAfterMs = input.statusIntervalMs * (input.staleAfterIntervals ?? DEFAULT_STALE_AFTER_INTERVALS);
  const age = input.now - input.status.sampledAt;
  const old = age > staleAfterMs;
  // The first whole millisecond at which the sample is old.
  let until = old ? Infinity : input.status.sampledAt + staleAfterMs + 1;
  if (old || input.connection.state !== 'online') {
    // Math.round(age / 1000) moves to the next second when the age reaches the next half second.
    until = Math.min(until, input.status.sampledAt + (Math.round(age / 1000) + 0.5) * 1000);
  }
  return until;
}

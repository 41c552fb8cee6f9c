/**
 * What the machine actor (machine-actor.ts) does at each step, as plain
 * functions of its context: store a sample or an error, move the connection,
 * write a heartbeat, schedule the next sample. The actor's setup binds each
 * to an XState action; keeping them here keeps the state machine readable
 * and the steps testable on their own.
 *
 * Every step that changes what the fleet's rows show (fleet/rows.ts) says so
 * through `deps.publish`: a CNCStatus sample or error changes the status row,
 * a task error (or its end) the health row, a connection step both. Samples
 * of other classes that leave no error behind publish nothing.
 */
import type { AnyActorRef } from 'xstate';
import type { MotionRecording } from '../config.js';
import type { MachineConfig, MachineTaskClass } from '../machine-config.js';
import type { DriverClient } from '../../../driver-seam/driver.js';
import { GatewayError, toGatewayError, type ErrorName } from '../../../interfaces/errors.js';
import { withTimeout } from '../../../driver-seam/timeout.js';
import { deriveState, type ConnectionState, type DeriveStateInput, type DerivedState } from './derive-state.js';
import type { MachineHistory, HistorySink } from './machine-history.js';
import type { StateTally } from './state-tally.js';
import { TASK_SAMPLERS, type SamplerContext, type TaskValues } from './task-samplers.js';

/** The cached latest sample of one data class. */
export interface CacheEntry<T = unknown> {
  value?: T;
  /** When the cached value was taken, unix ms. */
  sampledAt?: number;
  /** The error of the latest attempt; cleared by the next success. */
  error?: { errorCode: number; errorName: ErrorName; message: string; at: number };
}

export type TaskCache = { [K in MachineTaskClass]: CacheEntry<TaskValues[K]> };

export interface ConnectionHealth {
  state: ConnectionState;
  /** Since when the connection has been in this state, unix ms. */
  since: number;
  /** Consecutive failed connection attempts. */
  attempts: number;
  /** Consecutive failed samples while online. */
  failures: number;
  error?: { errorCode: number; errorName: ErrorName; message: string };
}

/** What changed in a machine, for the fleet's rows: its status row, its health row, or both. */
export type PublishKind = 'status' | 'health' | 'both';

/** What the actor needs from its surroundings. */
export interface MachineActorDeps {
  config: MachineConfig;
  client: DriverClient;
  sink: HistorySink;
  timeZone: string;
  heartbeatMs: number;
  /** Motion reads and their recording (history.motion); read and recorded at every change when absent. */
  motion?: MotionRecording;
  now: () => number;
  /** Random number in [0, 1) for backoff jitter; injectable for tests. */
  random?: () => number;
  /** Called with the lag between when a sample was due and when it was cached. */
  onSampleLag?: (task: MachineTaskClass, lagMs: number) => void;
  /** Told, after the step that made it, of every change the fleet's rows show. */
  publish?: (kind: PublishKind) => void;
}

export interface MachineContext {
  deps: MachineActorDeps;
  cache: TaskCache;
  connection: ConnectionHealth;
  nextDue: Record<MachineTaskClass, number>;
  dueAt: Record<MachineTaskClass, number>;
  history: MachineHistory;
  tally: StateTally;
}

/**
 * A sample's outcome comes back as an event rather than through an invoked
 * promise actor: at fleet scale, spawning a child actor per sample dominated
 * the CPU profile.
 */
export type MachineEvent =
  | { type: 'CONNECTION_LOST'; reason: string }
  | { type: `sampled.${MachineTaskClass}`; output: unknown }
  | { type: `failed.${MachineTaskClass}`; error: unknown };

/** Errors that say the link to the controller is bad, as opposed to a bad request. */
const LINK_ERRORS: ReadonlySet<ErrorName> = new Set(['MACHINE_NOT_CONNECTED', 'DRIVER_TIMEOUT', 'DRIVER_REQUEST_FAILED']);

/** Exponential backoff bounded by backoffMaxMs, with full jitter over its upper half. */
export function backoffDelay(attempts: number, base: number, max: number, random: () => number): number {
  const ceiling = Math.min(max, base * 2 ** Math.max(0, attempts - 1));
  return Math.round(ceiling / 2 + random() * (ceiling / 2));
}

function errorInfo(err: unknown): { errorCode: number; errorName: ErrorName; message: string } {
  const e = toGatewayError(err);
  return { errorCode: e.errorCode, errorName: e.errorName, message: e.message };
}

/** What deriveState is given for an actor context at `now`. */
export function deriveInputOf(context: Pick<MachineContext, 'deps' | 'cache' | 'connection'>, now: number): DeriveStateInput {
  const status = context.cache.CNCStatus;
  return {
    isActive: context.deps.config.isActive,
    statusTaskEnabled: context.deps.config.tasks.CNCStatus.enabled,
    connection: { state: context.connection.state, ...(context.connection.error ? { error: context.connection.error.message } : {}) },
    ...(status.value && status.sampledAt !== undefined ? { status: { value: status.value.status, sampledAt: status.sampledAt } } : {}),
    ...(status.error ? { statusError: status.error.message } : {}),
    statusIntervalMs: context.deps.config.tasks.CNCStatus.intervalMs,
    now,
  };
}

/** Derives the state from an actor context at `now`. */
export function deriveFromContext(context: Pick<MachineContext, 'deps' | 'cache' | 'connection'>, now: number): DerivedState {
  return deriveState(deriveInputOf(context, now));
}

/** Re-derives the state into the tally and the history (a State row when it changed). */
export function observe(context: MachineContext): void {
  const now = context.deps.now();
  const derived = deriveFromContext(context, now);
  context.tally.observe(derived.state, now);
  context.history.onDerived(derived, context.connection.state, now);
}

/** Starts one sample of `task`; its outcome comes back to `self` as a sampled/failed event while the actor runs. */
export function startSample(context: MachineContext, self: AnyActorRef, task: MachineTaskClass): void {
  const sampler = TASK_SAMPLERS[task] as (c: SamplerContext) => Promise<unknown>;
  const sample = withTimeout(
    sampler({
      client: context.deps.client,
      hadAlarms: context.history.hasActiveAlarms,
      readMotion: context.deps.motion?.enabled ?? true,
      tally: context.tally,
      idealCycleTimeSec: context.deps.config.idealCycleTimeSec,
      now: context.deps.now(),
    }),
    context.deps.config.connection.requestTimeoutMs,
    `${task} sample`,
    'connection.requestTimeoutMs',
  );
  const active = () => self.getSnapshot().status === 'active';
  sample.then(
    (output) => active() && self.send({ type: `sampled.${task}`, output }),
    (error: unknown) => active() && self.send({ type: `failed.${task}`, error }),
  );
}

/** The schedule after taking the slot of `task` that was due. */
export function advanceSchedule(context: MachineContext, task: MachineTaskClass): Pick<MachineContext, 'dueAt' | 'nextDue'> {
  const interval = context.deps.config.tasks[task].intervalMs;
  const now = context.deps.now();
  const due = context.nextDue[task];
  let next = due + interval;
  // Fell behind (e.g. the process was paused): skip the missed slots, keep the phase.
  if (next <= now) next += Math.ceil((now - next + 1) / interval) * interval;
  return { dueAt: { ...context.dueAt, [task]: due }, nextDue: { ...context.nextDue, [task]: next } };
}

/** The status sample as the task's cache keeps it: status and alarms (the motion read goes to the history only). */
function withoutMotion(sample: TaskValues['CNCStatus']): TaskValues['CNCStatus'] {
  if (!sample.motion) return sample;
  return { status: sample.status, alarms: sample.alarms };
}

/** Caches a sample of `task` (clearing its error), feeds the history and tally, and resets the failure count. */
export function storeSample(context: MachineContext, value: unknown, task: MachineTaskClass): Pick<MachineContext, 'cache' | 'connection'> {
  const now = context.deps.now();
  const { history, tally } = context;
  if (task === 'CNCStatus') history.onStatus(value as TaskValues['CNCStatus'], now);
  if (task === 'Count') tally.addParts(history.onCount(value as TaskValues['Count'], now), now);
  context.deps.onSampleLag?.(task, now - context.dueAt[task]);
  const hadError = context.cache[task].error !== undefined;
  const cache = { ...context.cache, [task]: { value: task === 'CNCStatus' ? withoutMotion(value as TaskValues['CNCStatus']) : value, sampledAt: now } } as TaskCache;
  const connection = context.connection.failures ? { ...context.connection, failures: 0 } : context.connection;
  const next = { ...context, cache, connection };
  if (task === 'CNCStatus') observe(next);
  if (task === 'CNCStatus') context.deps.publish?.(hadError ? 'both' : 'status');
  else if (hadError) context.deps.publish?.('health');
  return { cache, connection };
}

/** Caches the error of a failed sample; a link error while online counts towards losing the connection (`lost`). */
export function storeError(context: MachineContext, error: unknown, task: MachineTaskClass): Pick<MachineContext, 'cache' | 'connection'> & { lost?: string } {
  const now = context.deps.now();
  const err = toGatewayError(error);
  const cache = {
    ...context.cache,
    [task]: { ...context.cache[task], error: { errorCode: err.errorCode, errorName: err.errorName, message: err.message, at: now } },
  } as TaskCache;
  let connection = context.connection;
  let lost = false;
  if (LINK_ERRORS.has(err.errorName) && connection.state === 'online') {
    connection = { ...connection, failures: connection.failures + 1 };
    lost = err.errorName === 'MACHINE_NOT_CONNECTED' || connection.failures >= context.deps.config.connection.failuresBeforeLost;
  }
  context.deps.publish?.(task === 'CNCStatus' ? 'both' : 'health');
  return { cache, connection, ...(lost ? { lost: err.message } : {}) };
}

/** The connection as a new attempt starts. */
export function enterConnecting(context: MachineContext): ConnectionHealth {
  context.deps.publish?.('both');
  return { ...context.connection, state: 'connecting', since: context.deps.now() };
}

/** The connection once connected. */
export function enterOnline(context: MachineContext): ConnectionHealth {
  const connection: ConnectionHealth = { state: 'online', since: context.deps.now(), attempts: 0, failures: 0 };
  observe({ ...context, connection });
  context.deps.publish?.('both');
  return connection;
}

/** The connection after a failed attempt: backing off, or offline after too many. */
export function connectFailed(context: MachineContext, error: unknown, state: 'backoff' | 'offline'): ConnectionHealth {
  const connection: ConnectionHealth = { state, since: context.deps.now(), attempts: context.connection.attempts + 1, failures: 0, error: errorInfo(error) };
  observe({ ...context, connection });
  context.deps.publish?.('both');
  return connection;
}

/** The connection after the driver or the failure count said the link is gone. */
export function connectionLost(context: MachineContext, reason: string): ConnectionHealth {
  const connection: ConnectionHealth = {
    state: 'backoff',
    since: context.deps.now(),
    attempts: 1,
    failures: 0,
    error: { ...errorInfo(new GatewayError('MACHINE_NOT_CONNECTED', reason)) },
  };
  observe({ ...context, connection });
  context.deps.publish?.('both');
  return connection;
}

/** The periodic Heartbeat row, with a re-derivation so a stale status turns into offline on time. */
export function writeHeartbeat(context: MachineContext): void {
  const now = context.deps.now();
  const derived = deriveFromContext(context, now);
  context.tally.observe(derived.state, now);
  context.history.onDerived(derived, context.connection.state, now);
  context.history.heartbeat(derived, context.connection.state, now);
}

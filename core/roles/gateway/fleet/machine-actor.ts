/**
 * The machine actor (XState v5): one per active machine, with three parallel
 * regions.
 *  - connection: connecting → online; a failure or loss backs off with
 *    jitter (exponential, bounded) and, after `offlineAfterAttempts`
 *    failures, waits in `offline` at the bound before trying again.
 *  - sampling: one region per task class, each with its own fixed-rate
 *    schedule (no drift: the next due time is the previous one plus the
 *    interval). A due sample is taken only while online.
 *  - heartbeat: a periodic Heartbeat row and a re-derivation of the state, so
 *    that a machine whose status goes stale is reported offline on time.
 * The actor does I/O only through its DriverClient and the samplers.
 */
import { assign, enqueueActions, fromPromise, setup, type ActorRefFrom, type SnapshotFrom } from 'xstate';
import { MACHINE_TASK_CLASSES, type MachineConfig, type MachineTaskClass } from '../machine-config.js';
import type { DriverClient } from '../../../driver.js';
import { GatewayError, toGatewayError, type ErrorName } from '../../../errors.js';
import { deriveState, type ConnectionState, type DerivedState } from './derive-state.js';
import { MachineHistory, type HistorySink } from './machine-history.js';
import { StateTally } from './state-tally.js';
import { withTimeout } from '../../../timeout.js';
import { schedulePhase } from './schedule-phase.js';
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

/** What the actor needs from its surroundings. */
export interface MachineActorDeps {
  config: MachineConfig;
  client: DriverClient;
  sink: HistorySink;
  timeZone: string;
  heartbeatMs: number;
  now: () => number;
  /** Random number in [0, 1) for backoff jitter; injectable for tests. */
  random?: () => number;
  /** Called with the lag between when a sample was due and when it was cached. */
  onSampleLag?: (task: MachineTaskClass, lagMs: number) => void;
}

interface MachineContext {
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
type MachineEvent =
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

/** Derives the state from an actor context at `now`. */
export function deriveFromContext(context: Pick<MachineContext, 'deps' | 'cache' | 'connection'>, now: number): DerivedState {
  const status = context.cache.CNCStatus;
  return deriveState({
    isActive: context.deps.config.isActive,
    statusTaskEnabled: context.deps.config.tasks.CNCStatus.enabled,
    connection: { state: context.connection.state, ...(context.connection.error ? { error: context.connection.error.message } : {}) },
    ...(status.value && status.sampledAt !== undefined ? { status: { value: status.value.status, sampledAt: status.sampledAt } } : {}),
    ...(status.error ? { statusError: status.error.message } : {}),
    statusIntervalMs: context.deps.config.tasks.CNCStatus.intervalMs,
    now,
  });
}

function observe(context: MachineContext): void {
  const now = context.deps.now();
  const derived = deriveFromContext(context, now);
  context.tally.observe(derived.state, now);
  context.history.onDerived(derived, context.connection.state, now);
}

function taskRegion(task: MachineTaskClass) {
  return {
    initial: 'check' as const,
    states: {
      check: {
        always: [{ guard: { type: 'taskEnabled' as const, params: { task } }, target: 'waiting' }, { target: 'disabled' }],
      },
      disabled: {},
      waiting: {
        after: {
          [`due_${task}`]: [
            { guard: 'isOnline' as const, target: 'sampling', actions: { type: 'advanceSchedule' as const, params: { task } } },
            // Offline: skip this slot, but re-derive so a stale status turns into offline on time.
            { target: 'waiting', reenter: true, actions: [{ type: 'advanceSchedule' as const, params: { task } }, { type: 'observe' as const }] },
          ],
        },
      },
      sampling: {
        entry: { type: 'startSample' as const, params: { task } },
        on: {
          [`sampled.${task}`]: { target: 'waiting', actions: { type: 'storeSample' as const, params: { task } } },
          [`failed.${task}`]: { target: 'waiting', actions: { type: 'storeError' as const, params: { task } } },
        },
      },
    },
  };
}

const dueDelays = Object.fromEntries(
  MACHINE_TASK_CLASSES.map((task) => [
    `due_${task}`,
    ({ context }: { context: MachineContext }) => Math.max(0, context.nextDue[task] - context.deps.now()),
  ]),
);

export const machineActorLogic = setup({
  types: {
    context: {} as MachineContext,
    input: {} as MachineActorDeps,
    events: {} as MachineEvent,
  },
  actors: {
    connectDriver: fromPromise<void, { context: MachineContext }>(({ input }) =>
      withTimeout(input.context.deps.client.connect(), input.context.deps.config.connection.connectTimeoutMs, 'connect', 'connection.connectTimeoutMs'),
    ),
  },
  delays: {
    ...dueDelays,
    reconnect: ({ context }) =>
      backoffDelay(
        context.connection.attempts,
        context.deps.config.connection.backoffBaseMs,
        context.deps.config.connection.backoffMaxMs,
        context.deps.random ?? Math.random,
      ),
    // Heartbeats sit on the machine's own phase, so a fleet's rows spread over the interval.
    heartbeat: ({ context }) => {
      const period = context.deps.heartbeatMs;
      const phase = schedulePhase(context.deps.config.machineID, period);
      const into = (((context.deps.now() - phase) % period) + period) % period;
      return period - into;
    },
  },
  guards: {
    taskEnabled: ({ context }, params: { task: MachineTaskClass }) => context.deps.config.tasks[params.task].enabled,
    isOnline: ({ context }) => context.connection.state === 'online',
    tooManyAttempts: ({ context }) => context.connection.attempts + 1 >= context.deps.config.connection.offlineAfterAttempts,
  },
  actions: {
    startSample: ({ context, self }, params: { task: MachineTaskClass }) => {
      const { task } = params;
      const sampler = TASK_SAMPLERS[task] as (c: SamplerContext) => Promise<unknown>;
      const sample = withTimeout(
        sampler({
          client: context.deps.client,
          hadAlarms: context.history.hasActiveAlarms,
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
    },
    advanceSchedule: assign(({ context }, params: { task: MachineTaskClass }) => {
      const interval = context.deps.config.tasks[params.task].intervalMs;
      const now = context.deps.now();
      const due = context.nextDue[params.task];
      let next = due + interval;
      // Fell behind (e.g. the process was paused): skip the missed slots, keep the phase.
      if (next <= now) next += Math.ceil((now - next + 1) / interval) * interval;
      return { dueAt: { ...context.dueAt, [params.task]: due }, nextDue: { ...context.nextDue, [params.task]: next } };
    }),
    storeSample: assign(({ context, event }, params: { task: MachineTaskClass }) => {
      const now = context.deps.now();
      const value = 'output' in event ? event.output : undefined;
      const { task } = params;
      const { history, tally } = context;
      if (task === 'CNCStatus') history.onStatus(value as TaskValues['CNCStatus'], now);
      if (task === 'Count') tally.addParts(history.onCount(value as TaskValues['Count'], now), now);
      context.deps.onSampleLag?.(task, now - context.dueAt[task]);
      const cache = { ...context.cache, [task]: { value, sampledAt: now } } as TaskCache;
      const connection = context.connection.failures ? { ...context.connection, failures: 0 } : context.connection;
      const next = { ...context, cache, connection };
      if (task === 'CNCStatus') observe(next);
      return { cache, connection };
    }),
    storeError: enqueueActions(({ context, event, enqueue }, params: { task: MachineTaskClass }) => {
      const now = context.deps.now();
      const err = toGatewayError('error' in event ? event.error : undefined);
      const { task } = params;
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
      enqueue.assign({ cache, connection });
      if (lost) enqueue.raise({ type: 'CONNECTION_LOST', reason: err.message });
    }),
    observe: ({ context }) => observe(context),
    enterConnecting: assign(({ context }) => ({
      connection: { ...context.connection, state: 'connecting' as const, since: context.deps.now() },
    })),
    enterOnline: assign(({ context }) => {
      const connection: ConnectionHealth = { state: 'online', since: context.deps.now(), attempts: 0, failures: 0 };
      observe({ ...context, connection });
      return { connection };
    }),
    connectFailed: assign(({ context, event }, params: { state: 'backoff' | 'offline' }) => {
      const error = errorInfo((event as unknown as { error: unknown }).error);
      const connection: ConnectionHealth = {
        state: params.state,
        since: context.deps.now(),
        attempts: context.connection.attempts + 1,
        failures: 0,
        error,
      };
      observe({ ...context, connection });
      return { connection };
    }),
    connectionLost: assign(({ context, event }) => {
      const reason = event.type === 'CONNECTION_LOST' ? event.reason : 'connection lost';
      const connection: ConnectionHealth = {
        state: 'backoff',
        since: context.deps.now(),
        attempts: 1,
        failures: 0,
        error: { ...errorInfo(new GatewayError('MACHINE_NOT_CONNECTED', reason)) },
      };
      observe({ ...context, connection });
      return { connection };
    }),
    writeHeartbeat: ({ context }) => {
      const now = context.deps.now();
      const derived = deriveFromContext(context, now);
      context.tally.observe(derived.state, now);
      context.history.onDerived(derived, context.connection.state, now);
      context.history.heartbeat(derived, context.connection.state, now);
    },
  },
}).createMachine({
  id: 'machine',
  type: 'parallel',
  context: ({ input }) => {
    const now = input.now();
    const nextDue = {} as Record<MachineTaskClass, number>;
    for (const task of MACHINE_TASK_CLASSES) {
      const interval = input.config.tasks[task].intervalMs;
      nextDue[task] = now + schedulePhase(input.config.machineID, interval);
    }
    const cache = Object.fromEntries(MACHINE_TASK_CLASSES.map((t) => [t, {}])) as TaskCache;
    return {
      deps: input,
      cache,
      connection: { state: 'connecting', since: now, attempts: 0, failures: 0 },
      nextDue,
      dueAt: { ...nextDue },
      history: new MachineHistory(input.config.machineID, input.sink),
      tally: new StateTally(now, input.timeZone),
    };
  },
  states: {
    connection: {
      initial: 'connecting',
      states: {
        connecting: {
          entry: 'enterConnecting',
          invoke: {
            src: 'connectDriver',
            input: ({ context }) => ({ context }),
            onDone: { target: 'online' },
            onError: [
              { guard: 'tooManyAttempts', target: 'offline', actions: { type: 'connectFailed', params: { state: 'offline' } } },
              { target: 'backoff', actions: { type: 'connectFailed', params: { state: 'backoff' } } },
            ],
          },
        },
        online: {
          entry: 'enterOnline',
          on: { CONNECTION_LOST: { target: 'backoff', actions: 'connectionLost' } },
        },
        backoff: { after: { reconnect: 'connecting' } },
        offline: { after: { reconnect: 'connecting' } },
      },
    },
    sampling: {
      type: 'parallel',
      states: Object.fromEntries(MACHINE_TASK_CLASSES.map((task) => [task, taskRegion(task)])) as Record<
        MachineTaskClass,
        ReturnType<typeof taskRegion>
      >,
    },
    heartbeat: {
      initial: 'waiting',
      states: {
        waiting: { after: { heartbeat: { target: 'waiting', reenter: true, actions: 'writeHeartbeat' } } },
      },
    },
  },
});

export type MachineActorRef = ActorRefFrom<typeof machineActorLogic>;
export type MachineActorSnapshot = SnapshotFrom<typeof machineActorLogic>;

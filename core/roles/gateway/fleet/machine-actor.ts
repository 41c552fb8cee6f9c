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
import { MACHINE_TASK_CLASSES, type MachineTaskClass } from '../machine-config.js';
import { withTimeout } from '../../../driver-seam/timeout.js';
import { MachineHistory } from './machine-history.js';
import { StateTally } from './state-tally.js';
import { schedulePhase } from './schedule-phase.js';
import * as step from './machine-actions.js';
import { backoffDelay, type MachineActorDeps, type MachineContext, type MachineEvent, type TaskCache } from './machine-actions.js';

export { backoffDelay, deriveFromContext, type CacheEntry, type ConnectionHealth, type MachineActorDeps, type PublishKind, type TaskCache } from './machine-actions.js';

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
    startSample: ({ context, self }, params: { task: MachineTaskClass }) => step.startSample(context, self, params.task),
    advanceSchedule: assign(({ context }, params: { task: MachineTaskClass }) => step.advanceSchedule(context, params.task)),
    storeSample: assign(({ context, event }, params: { task: MachineTaskClass }) => step.storeSample(context, 'output' in event ? event.output : undefined, params.task)),
    storeError: enqueueActions(({ context, event, enqueue }, params: { task: MachineTaskClass }) => {
      const { lost, ...stored } = step.storeError(context, 'error' in event ? event.error : undefined, params.task);
      enqueue.assign(stored);
      if (lost !== undefined) enqueue.raise({ type: 'CONNECTION_LOST', reason: lost });
    }),
    observe: ({ context }) => step.observe(context),
    enterConnecting: assign(({ context }) => ({ connection: step.enterConnecting(context) })),
    enterOnline: assign(({ context }) => ({ connection: step.enterOnline(context) })),
    connectFailed: assign(({ context, event }, params: { state: 'backoff' | 'offline' }) => ({
      connection: step.connectFailed(context, (event as unknown as { error: unknown }).error, params.state),
    })),
    connectionLost: assign(({ context, event }) => ({
      connection: step.connectionLost(context, event.type === 'CONNECTION_LOST' ? event.reason : 'connection lost'),
    })),
    writeHeartbeat: ({ context }) => step.writeHeartbeat(context),
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
      history: new MachineHistory(input.config.machineID, input.sink, input.motion?.minIntervalMs ?? 0),
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

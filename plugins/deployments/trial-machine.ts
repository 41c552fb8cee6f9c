/**
 * One trial's lifecycle as an XState machine:
 *
 *   deploying ──(its deployment Succeeded)──→ active.watching ⇄ (evaluate every few seconds)
 *       └─(Failed)→ Cancelled                    │  verdict fail → pullingBack (automatic)
 *                                                │  trial time over → active.waiting
 *   active + PROMOTE → Promoted                  │
 *   active + PULL_BACK → pullingBack → PulledBack (the previous release deployed back, verified)
 *                             └─(failed)→ active.waiting, with the reason
 *
 * A trial is active until promoted or pulled back (PV-25): the end of its
 * time stops the watching, not the trial. As for deployments, the I/O is done
 * by promise actors the runner provides; a restored promise actor runs again,
 * and each of them is safe to run twice. TRIAL_MACHINE_VERSION goes with every
 * persisted snapshot.
 */
import { assign, fromPromise, setup } from 'xstate';
import type { Verdict } from './trial-verdict.js';

export const TRIAL_MACHINE_VERSION = 1;

export const TRIAL_STATUSES = ['Deploying', 'Active', 'PullingBack', 'Promoted', 'PulledBack', 'Cancelled'] as const;
export type TrialStatus = (typeof TRIAL_STATUSES)[number];

export interface Decision {
  by: string;
  onBehalfOf: string | null;
  authMethod: string;
  /** Why, in words (an automatic pull-back names the failed rules). */
  note: string;
  automatic: boolean;
  /** Set on a decision received by an instance that did not hold the trial: how that instance knows its holder carried it out. */
  requestId?: string;
}

export interface TrialContext {
  trialId: string;
  lastError: string | null;
  decision: Decision | null;
}

export type TrialEvent = { type: 'PROMOTE'; decision: Decision } | { type: 'PULL_BACK'; decision: Decision };

export const trialMachine = setup({
  types: {
    context: {} as TrialContext,
    input: {} as { trialId: string },
    events: {} as TrialEvent,
  },
  actors: {
    awaitDeployment: fromPromise<{ succeeded: boolean; reason: string | null }, { trialId: string }>(() => Promise.reject(new Error('awaitDeployment not provided'))),
    watch: fromPromise<{ verdict: Verdict | null; expired: boolean; failedRules: string[] }, { trialId: string }>(() => Promise.reject(new Error('watch not provided'))),
    pullBack: fromPromise<void, { trialId: string }>(() => Promise.reject(new Error('pullBack not provided'))),
  },
  guards: {
    deployed: ({ event }) => (event as unknown as { output: { succeeded: boolean } }).output.succeeded,
    failed: ({ event }) => (event as unknown as { output: { verdict: Verdict | null } }).output.verdict === 'fail',
    expired: ({ event }) => (event as unknown as { output: { expired: boolean } }).output.expired,
  },
}).createMachine({
  id: 'trial',
  context: ({ input }) => ({ trialId: input.trialId, lastError: null, decision: null }),
  initial: 'deploying',
  states: {
    deploying: {
      invoke: {
        src: 'awaitDeployment',
        input: ({ context }) => ({ trialId: context.trialId }),
        onDone: [
          { guard: 'deployed', target: 'active' },
          { target: 'Cancelled', actions: assign({ lastError: ({ event }) => `the trial's deployment failed: ${event.output.reason ?? 'no reason given'}` }) },
        ],
        onError: { target: 'Cancelled', actions: assign({ lastError: ({ event }) => `the trial's deployment could not be followed: ${String((event.error as Error)?.message ?? event.error).slice(0, 300)}` }) },
      },
    },
    active: {
      initial: 'watching',
      on: {
        PROMOTE: { target: 'Promoted', actions: assign({ decision: ({ event }) => event.decision, lastError: null }) },
        PULL_BACK: { target: 'pullingBack', actions: assign({ decision: ({ event }) => event.decision, lastError: null }) },
      },
      states: {
        watching: {
          invoke: {
            src: 'watch',
            input: ({ context }) => ({ trialId: context.trialId }),
            onDone: [
              {
                guard: 'failed',
                target: '#trial.pullingBack',
                actions: assign({
                  decision: ({ event }) => ({ by: 'system', onBehalfOf: null, authMethod: 'internal', automatic: true, note: `automatic pull-back: ${event.output.failedRules.join('; ')}`.slice(0, 1000) }),
                }),
              },
              { guard: 'expired', target: 'waiting' },
              { target: 'watching', reenter: true },
            ],
            // A watch that cannot read the machine tries again at its next turn (the error is on the trial).
            onError: { target: 'watching', reenter: true },
          },
        },
        /** Not watched any more (its time is over, or a pull-back failed): a person promotes or pulls back. */
        waiting: {},
      },
    },
    pullingBack: {
      invoke: {
        src: 'pullBack',
        input: ({ context }) => ({ trialId: context.trialId }),
        onDone: 'PulledBack',
        onError: { target: 'active.waiting', actions: assign({ lastError: ({ event }) => `pull-back failed: ${String((event.error as Error)?.message ?? event.error).slice(0, 500)}` }) },
      },
    },
    Promoted: { type: 'final' },
    PulledBack: { type: 'final' },
    Cancelled: { type: 'final' },
  },
});

/** The status the API shows for a state value of the machine. */
export function trialStatusOf(value: unknown): TrialStatus {
  if (typeof value === 'object' && value !== null && 'active' in value) return 'Active';
  switch (value) {
    case 'deploying':
      return 'Deploying';
    case 'pullingBack':
      return 'PullingBack';
    case 'Promoted':
      return 'Promoted';
    case 'PulledBack':
      return 'PulledBack';
    default:
      return 'Cancelled';
  }
}

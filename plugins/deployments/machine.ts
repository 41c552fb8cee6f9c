/**
 * One deployment's lifecycle as an XState machine:
 *
 *   queued → transferring → verifying → Succeeded
 *                 ↘ transferRetry ↗  ↘ verifyRetry ↗
 *                 (transient failures, with backoff, until the deadline)
 *   any failure that is not transient, or the deadline passed → Failed
 *
 * The I/O (transfer, read-back, waiting) is done by promise actors that the
 * runner provides, so the machine is pure and its persisted snapshot is all a
 * restart needs: a restored promise actor runs again (a transfer starts by
 * reading the file back, so a transfer that completed before the crash is not
 * repeated). DEPLOYMENT_MACHINE_VERSION goes with every persisted snapshot.
 */
import { assign, fromPromise, setup } from 'xstate';

export const DEPLOYMENT_MACHINE_VERSION = 1;

/** Final and working statuses as the API shows them. */
export const DEPLOYMENT_STATUSES = ['Queued', 'Transferring', 'Verifying', 'Retrying', 'Succeeded', 'Failed'] as const;
export type DeploymentStatus = (typeof DEPLOYMENT_STATUSES)[number];

export interface DeploymentContext {
  deploymentId: string;
  /** Unix ms after which a transient failure is no longer retried. */
  deadline: number;
  attempts: number;
  lastError: string | null;
  /** A transfer retried after a transient failure first reads the file back (the failed call may have reached the machine). */
  resumed: boolean;
  /** SHA-256 of the file read back from the machine, stored with the final status. */
  readBackSha256?: string | null;
}

/** A failed step: whether it may succeed later, and why it failed, in words a person can act on. */
export interface StepFailure {
  transient: boolean;
  reason: string;
  /** A read-back that did not match: the hash it had. */
  readBackSha256?: string;
}

export const isStepFailure = (e: unknown): e is StepFailure => typeof e === 'object' && e !== null && 'transient' in e && 'reason' in e;

export const deploymentMachine = setup({
  types: {
    context: {} as DeploymentContext,
    input: {} as { deploymentId: string; deadline: number },
  },
  actors: {
    transfer: fromPromise<{ skipped: boolean }, { deploymentId: string; resumed: boolean }>(() => Promise.reject(new Error('transfer not provided'))),
    verify: fromPromise<{ readBackSha256: string }, { deploymentId: string }>(() => Promise.reject(new Error('verify not provided'))),
    wait: fromPromise<void, { ms: number }>(() => Promise.reject(new Error('wait not provided'))),
  },
  guards: {
    retryable: ({ context, event }) => {
      const error = (event as { error?: unknown }).error;
      return isStepFailure(error) && error.transient && Date.now() < context.deadline;
    },
  },
  actions: {
    noteReadBack: assign({
      readBackSha256: ({ context, event }) => {
        const error = (event as { error?: unknown }).error;
        return isStepFailure(error) && error.readBackSha256 ? error.readBackSha256 : (context.readBackSha256 ?? null);
      },
    }),
    noteFailure: assign({
      attempts: ({ context }) => context.attempts + 1,
      lastError: ({ event }) => {
        const error = (event as { error?: unknown }).error;
        return isStepFailure(error) ? error.reason : `unexpected: ${String((error as Error)?.message ?? error).slice(0, 300)}`;
      },
    }),
  },
}).createMachine({
  id: 'deployment',
  context: ({ input }) => ({ deploymentId: input.deploymentId, deadline: input.deadline, attempts: 0, lastError: null, resumed: false }),
  initial: 'queued',
  states: {
    queued: { always: 'transferring' },
    transferring: {
      invoke: {
        src: 'transfer',
        input: ({ context }) => ({ deploymentId: context.deploymentId, resumed: context.resumed }),
        onDone: { target: 'verifying', actions: assign({ resumed: false }) },
        onError: [
          { guard: 'retryable', target: 'transferRetry', actions: ['noteFailure', assign({ resumed: true })] },
          { target: 'Failed', actions: 'noteFailure' },
        ],
      },
    },
    transferRetry: {
      invoke: {
        src: 'wait',
        input: ({ context }) => ({ ms: backoffMs(context.attempts) }),
        onDone: 'transferring',
        onError: 'transferring',
      },
    },
    verifying: {
      invoke: {
        src: 'verify',
        input: ({ context }) => ({ deploymentId: context.deploymentId }),
        onDone: { target: 'Succeeded', actions: assign({ readBackSha256: ({ event }) => event.output.readBackSha256 }) },
        onError: [
          { guard: 'retryable', target: 'verifyRetry', actions: 'noteFailure' },
          { target: 'Failed', actions: ['noteFailure', 'noteReadBack'] },
        ],
      },
    },
    verifyRetry: {
      invoke: {
        src: 'wait',
        input: ({ context }) => ({ ms: backoffMs(context.attempts) }),
        onDone: 'verifying',
        onError: 'verifying',
      },
    },
    Succeeded: { type: 'final' },
    Failed: { type: 'final' },
  },
});

/** 1 s, 2 s, 4 s … up to 30 s, with ±20 % jitter so retries of a batch spread out. */
export function backoffMs(attempts: number): number {
  const base = Math.min(30_000, 1000 * 2 ** Math.max(0, attempts - 1));
  return Math.round(base * (0.8 + Math.random() * 0.4));
}

/** The status the API shows for a state of the machine. */
export function statusOf(state: string): DeploymentStatus {
  switch (state) {
    case 'queued':
      return 'Queued';
    case 'transferring':
      return 'Transferring';
    case 'verifying':
      return 'Verifying';
    case 'transferRetry':
    case 'verifyRetry':
      return 'Retrying';
    case 'Succeeded':
      return 'Succeeded';
    default:
      return 'Failed';
  }
}

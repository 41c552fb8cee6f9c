/** How a deployment step's failures are told: transient or not, and why, in words a person can act on. */
import type { GatewayLinkError } from '../../core/gateway-link/types.js';
import type { StepFailure } from './machine.js';

export const failure = (transient: boolean, reason: string): StepFailure => ({ transient, reason });

/** A failed link call of `what` (transfer, read-back), with what to do about it. */
export function linkFailure(err: unknown, what: string): StepFailure {
  const e = err as Partial<GatewayLinkError> & Error;
  if (typeof e?.kind === 'string') {
    const advice: Record<string, string> = {
      unreachable: 'the gateway did not answer; it is retried until the deadline',
      'machine-unavailable': 'the machine is offline or did not answer in time; it is retried until the deadline',
      unauthorized: 'the gateway refused the service\'s key: register the gateway again with a valid secret key',
      'not-found': 'the gateway does not know the machine (sync the gateway) or the directory',
      unsupported: 'this machine\'s driver cannot write program files: deploy to it another way, or change its driver',
      rejected: 'the gateway refused the file (its name, its directory, its size, or a byte the machine\'s driver cannot carry: the message names it)',
      superseded: 'another instance of the service holds this deployment now and transfers it',
      failed: 'the gateway reported a failure',
    };
    return failure(e.transient === true, `${what}: ${e.message} — ${advice[e.kind] ?? ''}`.slice(0, 600));
  }
  return failure(false, `${what}: ${String(e?.message ?? err).slice(0, 300)}`);
}

/** A failure of the service's own database in a step: transient, tried again. */
export const databaseFailure = (what: string, err: unknown): StepFailure =>
  failure(true, `${what} in the service's database: ${String((err as Error)?.message ?? err).slice(0, 200)}`);

/**
 * A deployment is refused at once, before anything is stored or sent, when a
 * machine cannot take its file: its driver has no program transfer, or the
 * file holds a byte the driver cannot carry (core/gateway-link/program-takers.ts).
 * A machine its gateway cannot vouch for now (offline) is not refused: its
 * transfer is tried and retried as usual, and the gateway checks again then.
 */
import { checkTargets, type ProgramTarget } from '../../core/gateway-link/program-takers.js';
import type { GatewayLink } from '../../core/gateway-link/types.js';
import { ProblemError } from '../../core/rest/problem.js';
import type { FleetMachine } from './runner.js';

/** A machine of a deployment request, with the request field that named it. */
export interface DeploymentTarget extends ProgramTarget {
  /** `body.assignmentIds[i]`. */
  field: string;
  machine: FleetMachine;
}

/** Machines named in one problem; the count says how many there were. */
const LISTED = 20;

/** Throws 422 naming each machine that cannot take its file and why; `what` names the program (`version 3 of SHAFT`). */
export async function refuseUntakeable(targets: readonly DeploymentTarget[], linkFor: (t: DeploymentTarget) => Promise<GatewayLink>, what: string): Promise<void> {
  if (targets.length === 0) return;
  const { refused } = await checkTargets(targets, linkFor);
  if (refused.length === 0) return;
  const named = (t: DeploymentTarget) => `machine ${t.machine.name} (${t.machine.machineId})`;
  const first = refused[0] as (typeof refused)[number];
  const others = refused.length > 1 ? ` (and ${refused.length - 1} more machine${refused.length > 2 ? 's' : ''}, listed in errors)` : '';
  throw new ProblemError('unacceptable', `${named(first.target)} cannot take ${what}: ${first.reason}${others}. Nothing was deployed; deploy without ${refused.length > 1 ? 'these machines' : 'this machine'}, or fix what is named.`.slice(0, 1200), {
    errors: refused.slice(0, LISTED).map(({ target, reason }) => ({ field: target.field, message: `${named(target)} cannot take ${what}: ${reason}`.slice(0, 600) })),
    extensions: { machinesRefused: refused.length },
  });
}

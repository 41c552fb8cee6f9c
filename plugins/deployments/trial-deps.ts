/**
 * What the trial runner (trial-runner.ts) is given, and what the files it
 * calls see of it: the transitions it stores (trial-effects.ts) and the
 * decisions it carries out (trial-decisions.ts) take these instead of the
 * runner itself, so none of them imports the runner.
 */
import type { RestPrincipal } from '../../core/rest/operation.js';
import type { ProgramsContext, ProgramsServices } from '../../core/roles/programs/context.js';
import type { DeploymentOutcome } from './service.js';
import type { AuditAppender } from './store.js';
import type { TrialEvent, TrialStatus } from './trial-machine.js';
import type { TrialRepository, TrialRow } from './trial-store.js';

export interface TrialDeps {
  /** Resolves when a deployment is Succeeded or Failed. */
  outcome(deploymentId: string): Promise<DeploymentOutcome>;
  /** Starts a pull-back deployment of `trial`'s previous release, recording its id on the trial in the creating transaction. */
  deployPullBack(trial: TrialRow, principal: Pick<RestPrincipal, 'name' | 'onBehalfOf' | 'authMethod'>): Promise<string>;
  outbox: Pick<ProgramsServices['webhooks.outbox'], 'enqueue' | 'kick'>;
}

/** What the runner needs of the service: its fleet and clock, its database and the audit chain. */
export type TrialRunnerContext = Pick<ProgramsContext, 'services' | 'now' | 'db'> & { audit: AuditAppender };

/** The runner as a decision sees it: the trials' rows, which trials run here, and the events their actors take. */
export interface TrialHolder {
  readonly trials: TrialRepository;
  now(): number;
  readonly decisionWaitMs: number | undefined;
  statusOf(trialId: string): TrialStatus | undefined;
  runs(trialId: string): boolean;
  can(trialId: string, event: TrialEvent): boolean;
  send(trialId: string, event: TrialEvent): Promise<void>;
}

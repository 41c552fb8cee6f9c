/**
 * Deployments: a released version to the machines of some assignments, one
 * persisted XState actor per machine (queued → transferring → verifying →
 * Succeeded or Failed), transfer and SHA-256 read-back through the machine's
 * gateway, retries of transient failures until a deadline, resumed after a
 * restart. docs/programs-deployments.md.
 */
import { definePlugin } from '../../core/runtime/plugin-host.js';
import type { ProgramsContext } from '../../core/roles/programs/context.js';
import { deploymentOperations } from './operations.js';
import { DEPLOYMENTS_FIELDS, DEPLOYMENTS_PART } from './config.js';
import { leaseOf } from './lease.js';
import { LEASE_MIGRATIONS, TRACE_MIGRATIONS } from './schema.js';
import { MIGRATIONS } from './store.js';
import { TRIAL_MIGRATIONS } from './trial-store.js';
import { trialOperations } from './trials.js';
import { trialRulesSchema, type TrialRulesInput } from './trial-verdict.js';
import { wireDeployments } from './wiring.js';
import { registerDeploymentMetrics } from './metrics.js';

export { DEFAULT_TRIAL_HOURS, type BatchStarter } from './operations.js';
export { DEPLOYMENT_DEADLINE_MS } from './wiring.js';

export interface DeploymentsOptions {
  /** Defaults of every trial's rules (a request's trialRules replace single fields). */
  trialRules?: TrialRulesInput;
  /** This instance's lease on the deployments it drives: its holder id (new at each start unless given) and the lease time (`programs.deployments.leaseSec`, 30 s, unless given). */
  lease?: { holder?: string; ms?: number };
}

export function createDeploymentsPlugin(options: DeploymentsOptions = {}) {
  const trialDefaults = trialRulesSchema.parse(options.trialRules ?? {});
  // Checked now; the holder id is made at each registration (each instance).
  leaseOf(options.lease);
  return definePlugin<ProgramsContext, typeof DEPLOYMENTS_FIELDS>({
    name: 'deployments',
    dependsOn: ['vault', 'gateways', 'assignments', 'webhooks'],
    migrations: [...MIGRATIONS, ...TRIAL_MIGRATIONS, ...LEASE_MIGRATIONS, ...TRACE_MIGRATIONS],
    config: DEPLOYMENTS_PART,
    async register(ctx) {
      // The plugin's own option first (tests), then the operator's setting.
      const lease = leaseOf({ ...options.lease, ms: options.lease?.ms ?? ctx.settings.deployments.leaseSec * 1000 });
      const { repo, trialRepo, runner, trialRunner, startBatch, service } = wireDeployments(ctx, lease);
      registerDeploymentMetrics(ctx.metrics, ctx.db, (id) => runner.waitingForSlot(id), ctx.now);
      ctx.services.provide('deployments', service);
      for (const op of deploymentOperations(ctx, repo, startBatch, trialDefaults, runner)) ctx.rest.define(op);
      for (const op of trialOperations(ctx, trialRepo, trialRunner)) ctx.rest.define(op);
      const resumed = await runner.resumeAll();
      if (resumed) ctx.logger.info({ deployments: resumed }, 'unfinished deployments resumed');
      const trialsResumed = await trialRunner.resumeAll();
      if (trialsResumed) ctx.logger.info({ trials: trialsResumed }, 'unfinished trials resumed');
      return {
        stop: async () => {
          await trialRunner.stop();
          await runner.stop();
        },
      };
    },
  });
}

export const deploymentsPlugin = createDeploymentsPlugin();

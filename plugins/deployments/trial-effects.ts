/**
 * What a trial's transition means, stored with it in one transaction: its
 * row (status, decision, snapshot, a renewed lease), its audit record, the
 * release on promotion, and its webhook. Stored only while this instance
 * holds the trial, so a trial taken over by another instance is decided,
 * audited and announced once, by its holder.
 */
import type { SnapshotFrom } from 'xstate';
import type { DeploymentRepository } from './store.js';
import { TRIAL_MACHINE_VERSION, type trialMachine, type TrialStatus } from './trial-machine.js';
import type { TrialDeps, TrialRunnerContext } from './trial-deps.js';
import type { TrialRepository } from './trial-store.js';

export interface TrialTransition {
  status: TrialStatus;
  /** The state value before, as JSON ('' at the start). */
  previous: string;
  final: boolean;
  snapshot: string;
  context: SnapshotFrom<typeof trialMachine>['context'];
}

export async function storeTrialTransition(
  ctx: TrialRunnerContext, trials: TrialRepository, deployments: DeploymentRepository, outbox: TrialDeps['outbox'], id: string, s: TrialTransition,
): Promise<void> {
  const at = ctx.now();
  await ctx.db.write(async (tx) => {
    const t = await trials.heldTx(tx, id);
    if (!t) return;
    const decision = s.context.decision;
    // A decision another instance stored is carried out by this transition (or can no longer be, the trial having ended).
    const clearPending = s.final || (t.pendingDecision !== null && decision?.requestId === t.pendingDecision.decision.requestId);
    await trials.transition(tx, id, { status: s.status, reason: s.context.lastError, decision, snapshot: s.snapshot, machineVersion: TRIAL_MACHINE_VERSION, at, final: s.final, clearPending });
    const audit = (action: string, details: Record<string, unknown>, by = decision) =>
      ctx.audit.appendMany(tx, [{
        principalName: by?.by ?? 'system', onBehalfOf: by?.onBehalfOf ?? null, authMethod: by?.authMethod ?? 'internal', category: 'deployment', action,
        entityType: 'trial', entityId: id, machine: t.machineId, details: { versionId: t.versionId, deploymentId: t.deploymentId, ...details },
      }]);
    const hook = (event: 'trial.promoted' | 'trial.pulled-back' | 'trial.started', data: Record<string, unknown> = {}) =>
      outbox.enqueue(tx, event, { trialId: id, machineId: t.machineId, assignmentId: t.assignmentId, versionId: t.versionId, previousVersionId: t.previous?.versionId ?? null, at: new Date(at).toISOString(), ...data });
    if (s.status === 'Active' && s.previous.includes('deploying')) {
      await audit('trial.start', { startedAt: t.startedAt, endsAt: t.endsAt, rules: t.rules }, null);
      await hook('trial.started', { endsAt: t.endsAt === null ? null : new Date(t.endsAt).toISOString() });
    } else if (s.status === 'PullingBack') {
      await audit('trial.pull-back', { automatic: decision?.automatic ?? false, note: decision?.note ?? null, verdict: t.verdict, evidence: t.evidence, previousVersionId: t.previous?.versionId ?? null });
    } else if (s.status === 'PulledBack') {
      await audit('trial.pulled-back', { pullBackDeploymentId: t.pullBackDeploymentId, previousVersionId: t.previous?.versionId ?? null });
      await hook('trial.pulled-back', { automatic: decision?.automatic ?? false, verdict: t.verdict, pullBackDeploymentId: t.pullBackDeploymentId });
    } else if (s.status === 'Promoted') {
      const d = await deployments.get(t.deploymentId);
      if (d) {
        await deployments.setRelease(tx, { assignmentId: t.assignmentId, machineId: t.machineId, versionId: t.versionId, sha256: d.sha256, dir: d.dir, fileName: d.fileName, deploymentId: d.id, releasedAt: at, releasedBy: decision?.by ?? 'system' });
      }
      await audit('trial.promote', { verdict: t.verdict, evidence: t.evidence, note: decision?.note ?? null });
      await hook('trial.promoted', { verdict: t.verdict });
    } else if (s.status === 'Cancelled') {
      await audit('trial.cancelled', { reason: s.context.lastError }, null);
    } else if (s.status === 'Active' && s.previous.includes('pullingBack')) {
      await audit('trial.pull-back-failed', { reason: s.context.lastError });
    }
  }, { transaction: true });
}

/**
 * Runs trial actors: each persisted at every transition (snapshot, status,
 * decision) in one transaction with its audit record and webhook; restored
 * at start. While a trial is active its machine is read through its gateway
 * (trial-watch.ts) and judged against the baseline of the release it
 * replaced; a failing verdict pulls it back. Several instances on one
 * database each run the trials they hold a lease on (lease.ts), and a
 * decision received by an instance that does not hold the trial is stored
 * for its holder (trial-decisions.ts).
 */
import { createActor, fromPromise, type Actor, type SnapshotFrom } from 'xstate';
import type { Logger } from 'pino';
import type { RestPrincipal } from '../../core/rest/operation.js';
import { SYSTEM_ACTOR } from '../../core/rest/principal.js';
import { keepLeases, repeatPasses } from './lease.js';
import type { DeploymentRepository } from './store.js';
import { storeTrialTransition } from './trial-effects.js';
import { carryOutDecisions } from './trial-decisions.js';
import type { TrialDeps, TrialHolder, TrialRunnerContext } from './trial-deps.js';
import { TRIAL_MACHINE_VERSION, trialMachine, trialStatusOf, type TrialEvent, type TrialStatus } from './trial-machine.js';
import type { TrialRepository, TrialRow } from './trial-store.js';
import type { TrialEvidence, Verdict } from './trial-verdict.js';
import { evaluateTrial } from './trial-watch.js';

export interface TrialRunnerOptions {
  /** Whether at start every unfinished trial is this instance's at once: by default on SQLite (one process opens it), as for deployments. */
  takeOverAtStart?: boolean;
  /** How often the holder looks for decisions other instances stored for it, ms (1 s unless given). */
  decisionPollMs?: number;
  /** How long an instance that received a decision for a trial another holds waits for it before answering 202, ms (trial-decisions.ts, 5 s unless given). */
  decisionWaitMs?: number;
}

/** How often a holder looks for decisions other instances stored for it, ms. */
export const DECISION_POLL_MS = 1000;

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(resolve, Math.max(0, ms));
    timer.unref();
    signal.addEventListener('abort', () => {
      clearTimeout(timer);
      resolve();
    }, { once: true });
  });
}

export class TrialRunner implements TrialHolder {
  private readonly actors = new Map<string, Actor<typeof trialMachine>>();
  private readonly writes = new Set<Promise<unknown>>();
  /** Callers waiting for a trial's next stored transition. */
  private readonly waiters = new Map<string, (() => void)[]>();
  private stopping = false;
  private keeper: ReturnType<typeof keepLeases> | undefined;
  private decisions: ReturnType<typeof repeatPasses> | undefined;

  constructor(
    private readonly ctx: TrialRunnerContext,
    readonly trials: TrialRepository,
    private readonly deployments: DeploymentRepository,
    private readonly deps: TrialDeps,
    private readonly logger: Logger,
    private readonly options: TrialRunnerOptions = {},
  ) {}

  /** The service's clock. */
  now(): number {
    return this.ctx.now();
  }

  /** How long a decision for a trial another instance holds is waited for (undefined: the default). */
  get decisionWaitMs(): number | undefined {
    return this.options.decisionWaitMs;
  }

  /** The machine with this runner's actors, made once (providing it is not free). */
  private provided: ReturnType<typeof this.provide> | undefined;

  private machine() {
    return (this.provided ??= this.provide());
  }

  private provide() {
    return trialMachine.provide({
      actors: {
        awaitDeployment: fromPromise(async ({ input }: { input: { trialId: string } }) => {
          const t = await this.trials.get(input.trialId);
          if (!t) throw new Error(`trial ${input.trialId} is gone`);
          const outcome = await this.deps.outcome(t.deploymentId);
          if (outcome.status === 'Succeeded') {
            const row = await this.deployments.get(t.deploymentId);
            const startedAt = row?.finishedAt ?? this.ctx.now();
            await this.trials.started(t.id, startedAt, startedAt + t.trialHours * 3_600_000);
          }
          return { succeeded: outcome.status === 'Succeeded', reason: outcome.reason };
        }),
        watch: fromPromise(async ({ input, signal }: { input: { trialId: string }; signal: AbortSignal }): Promise<{ verdict: Verdict | null; expired: boolean; failedRules: string[] }> => {
          const first = await this.trials.get(input.trialId);
          if (!first || first.startedAt === null || first.endsAt === null) throw new Error(`trial ${input.trialId} has not started`);
          const due = (first.evaluatedAt ?? first.startedAt) + first.rules.evaluateEverySec * 1000;
          await sleep(Math.min(due, first.endsAt) - this.ctx.now(), signal);
          if (signal.aborted) return { verdict: null, expired: false, failedRules: [] };
          const t = (await this.trials.get(input.trialId)) ?? first;
          let evidence: TrialEvidence;
          try {
            evidence = await evaluateTrial(this.ctx, t);
          } catch (err) {
            const reason = `the machine could not be read for the trial: ${String((err as Error)?.message ?? err).slice(0, 300)}`;
            await this.trials.setReason(t.id, reason, this.ctx.now());
            throw new Error(reason, { cause: err });
          }
          const at = this.ctx.now();
          const held = await this.ctx.db.write(async (tx) => {
            // Stored (and audited) only while this instance holds the trial: one taken over is judged by its new holder.
            const now = await this.trials.heldTx(tx, t.id);
            if (!now) return false;
            await this.trials.recordVerdict(tx, t.id, evidence, at);
            // A verdict that changed is audited with its evidence; the same verdict again is only stored.
            if (evidence.verdict !== now.verdict) {
              await this.ctx.audit.appendMany(tx, [{
                ...SYSTEM_ACTOR, category: 'deployment', action: 'trial.verdict', entityType: 'trial', entityId: t.id, machine: t.machineId,
                details: { verdict: evidence.verdict, previous: now.verdict, evidence },
              }]);
            }
            return true;
          }, { transaction: true });
          if (!held) return { verdict: null, expired: false, failedRules: [] };
          if (t.reason?.startsWith('the machine could not be read')) await this.trials.setReason(t.id, null, at);
          return { verdict: evidence.verdict, expired: at >= t.endsAt!, failedRules: evidence.failedRules };
        }),
        pullBack: fromPromise(async ({ input }: { input: { trialId: string } }) => {
          const t = await this.trials.get(input.trialId);
          if (!t) throw new Error(`trial ${input.trialId} is gone`);
          if (!t.previous) throw new Error('nothing was released to this machine under the assignment before the trial, so there is no earlier file to put back; deploy a version, or promote the trial');
          let deploymentId = t.pullBackDeploymentId;
          if (!deploymentId) {
            const d = t.decision;
            deploymentId = await this.deps.deployPullBack(t, { name: d?.by ?? 'system', onBehalfOf: d?.onBehalfOf ?? null, authMethod: (d?.authMethod ?? 'internal') as RestPrincipal['authMethod'] });
          }
          const outcome = await this.deps.outcome(deploymentId);
          if (outcome.status !== 'Succeeded') {
            // A new pull-back (by a person) makes a new deployment.
            await this.ctx.db.write((tx) => this.trials.setPullBack(tx, t.id, null));
            throw new Error(`deployment ${deploymentId} of the earlier release failed: ${outcome.reason ?? ''}`);
          }
        }),
      },
    });
  }

  /** Starts a new trial's actor; a new trial is held under epoch 1, its first claim (stored with it). */
  start(trialId: string): void {
    if (this.trials.held.epochOf(trialId) === undefined) this.trials.held.hold(trialId, 1, performance.now());
    this.run(trialId, createActor(this.machine(), { input: { trialId } }));
  }

  /**
   * Claims the unfinished trials this instance may run now (at start on
   * SQLite all of them; otherwise those whose lease has ended), restores
   * each from its snapshot, and from then on keeps the leases and carries
   * out the decisions other instances store for it.
   */
  async resumeAll(): Promise<number> {
    const everything = this.options.takeOverAtStart ?? this.ctx.db.dialect.engine === 'sqlite';
    const open = await this.trials.claim(this.ctx.now(), { everything });
    await this.resumeClaimed(open);
    this.keeper = keepLeases(this.trials.lease, (renew) => this.tend(renew));
    this.decisions = repeatPasses(this.options.decisionPollMs ?? DECISION_POLL_MS, () =>
      carryOutDecisions(this).catch((err: unknown) => this.logger.warn({ err }, 'trial decisions not carried out this round; tried again next round')));
    return open.length;
  }

  private async resumeClaimed(open: readonly TrialRow[]): Promise<void> {
    for (const t of open) {
      if (this.stopping) return;
      // Still running here under an older epoch (renewed too late, and claimed again by this instance): it goes on from what is stored.
      if (this.actors.has(t.id)) this.drop(t.id);
      if (t.machineVersion !== TRIAL_MACHINE_VERSION || !t.snapshot) {
        if (t.snapshot || t.machineVersion !== TRIAL_MACHINE_VERSION) {
          await this.trials.finishUnresumable(t.id, `interrupted by a restart with another version of the trial lifecycle (${t.machineVersion} → ${TRIAL_MACHINE_VERSION})`, this.ctx.now());
          continue;
        }
        // Stored before its first transition: start it afresh.
        this.start(t.id);
        continue;
      }
      const snapshot = JSON.parse(t.snapshot) as SnapshotFrom<typeof trialMachine>;
      // The restored state is stored already: only what follows it is stored (and audited) again.
      this.run(t.id, createActor(this.machine(), { snapshot: snapshot as never, input: { trialId: t.id } }), JSON.stringify(snapshot.value));
    }
  }

  /** One pass of the lease keeper: with `renew`, renews and stops the actors of trials taken over meanwhile; then claims trials whose lease ended. */
  private async tend(renew: boolean): Promise<void> {
    try {
      if (renew) {
        const running = [...this.actors.keys()];
        const held = await this.trials.renew();
        for (const id of running) {
          if (held.get(id) === this.trials.held.epochOf(id)) continue;
          this.drop(id);
          this.trials.held.forget(id);
        }
      }
      if (this.stopping) return;
      const claimed = await this.trials.claim(this.ctx.now());
      if (claimed.length > 0) this.logger.info({ trials: claimed.length, holder: this.trials.lease.holder }, 'trials taken over from an instance whose lease ended');
      await this.resumeClaimed(claimed);
    } catch (err) {
      this.logger.warn({ err }, 'trial leases not kept this round; tried again next round');
    }
  }

  /** The status of the trial's actor here (undefined: not run here). */
  statusOf(trialId: string): TrialStatus | undefined {
    const actor = this.actors.get(trialId);
    return actor ? trialStatusOf(actor.getSnapshot().value) : undefined;
  }

  /** Whether this instance runs the trial's actor. */
  runs(trialId: string): boolean {
    return !this.stopping && this.actors.has(trialId);
  }

  /** Whether the trial's actor accepts `event` now. */
  can(trialId: string, event: TrialEvent): boolean {
    const actor = this.actors.get(trialId);
    return Boolean(actor && !this.stopping && actor.getSnapshot().can(event));
  }

  /** Sends an event and resolves once the transition it caused is stored. */
  async send(trialId: string, event: TrialEvent): Promise<void> {
    const actor = this.actors.get(trialId);
    if (!actor) throw new Error(`trial ${trialId} is not running`);
    const stored = new Promise<void>((resolve) => {
      const list = this.waiters.get(trialId) ?? [];
      list.push(resolve);
      this.waiters.set(trialId, list);
    });
    actor.send(event);
    await stored;
  }

  /** Stops a trial's actor here without storing anything more: another instance holds it now. */
  private drop(id: string): void {
    const actor = this.actors.get(id);
    this.actors.delete(id);
    actor?.stop();
    for (const resolve of this.waiters.get(id)?.splice(0) ?? []) resolve();
  }

  /** Runs an actor, storing each state it reaches after `last` (the restored one's, as JSON; '' for a new one). */
  private run(id: string, actor: Actor<typeof trialMachine>, last = ''): void {
    this.actors.set(id, actor);
    actor.subscribe({
      next: (snapshot) => {
        const key = JSON.stringify(snapshot.value);
        if (key === last || this.stopping || this.actors.get(id) !== actor) return;
        const previous = last;
        last = key;
        const status = trialStatusOf(snapshot.value);
        const final = snapshot.status === 'done';
        const persisted = JSON.stringify(actor.getPersistedSnapshot());
        const write = storeTrialTransition(this.ctx, this.trials, this.deployments, this.deps.outbox, id, { status, previous, final, snapshot: persisted, context: snapshot.context })
          .then(() => {
            if (final && this.actors.get(id) === actor) {
              this.actors.delete(id);
              this.trials.held.forget(id);
            }
            for (const resolve of this.waiters.get(id)?.splice(0) ?? []) resolve();
            this.deps.outbox.kick();
          })
          .catch((err: unknown) => this.logger.error({ err, trial: id }, 'trial state not stored'));
        this.writes.add(write);
        void write.finally(() => this.writes.delete(write));
      },
      error: (err) => this.logger.error({ err, trial: id }, 'trial actor failed'),
    });
    actor.start();
  }

  /**
   * Stops every actor (their snapshots are stored; a restart, or another
   * instance, resumes them) and waits for pending writes. With `release`
   * (a clean stop) its leases end at once.
   */
  async stop(options: { release?: boolean } = { release: true }): Promise<void> {
    this.stopping = true;
    const keeping = [this.keeper?.stop(), this.decisions?.stop()];
    for (const actor of this.actors.values()) actor.stop();
    this.actors.clear();
    for (const list of this.waiters.values()) for (const resolve of list.splice(0)) resolve();
    await Promise.allSettled([...this.writes, ...keeping]);
    if (options.release) await this.trials.release().catch((err: unknown) => this.logger.warn({ err }, 'trial leases not released'));
  }
}

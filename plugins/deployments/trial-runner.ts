/**
 * Runs trial actors: each persisted at every transition (snapshot, status,
 * decision) in one transaction with its audit record and webhook; restored
 * at start. While a trial is active its machine is read through its gateway
 * (cycle times and alarms from the gateway's history) and judged against the
 * baseline of the release it replaced; a failing verdict pulls it back.
 */
import { createActor, fromPromise, type Actor, type SnapshotFrom } from 'xstate';
import type { Logger } from 'pino';
import type { GatewayLink, LinkHistoryRow } from '../../core/gateway-link/types.js';
import type { RestPrincipal } from '../../core/rest/operation.js';
import { SYSTEM } from './common.js';
import type { ProgramsContext, ProgramsServices } from '../../core/roles/programs/context.js';
import type { DeploymentOutcome } from './service.js';
import type { DeploymentRepository } from './store.js';
import { TRIAL_MACHINE_VERSION, trialMachine, trialStatusOf, type TrialEvent } from './trial-machine.js';
import type { TrialRepository, TrialRow } from './trial-store.js';
import { judge, programKey, type TrialAlarm, type TrialEvidence, type Verdict } from './trial-verdict.js';
import { SYSTEM_ACTOR } from '../../core/rest/principal.js';

/** Rows read per history call, and at most per window. */
const HISTORY_PAGE = 1000;
const HISTORY_MAX = 5000;


export interface TrialDeps {
  /** Resolves when a deployment is Succeeded or Failed. */
  outcome(deploymentId: string): Promise<DeploymentOutcome>;
  /** Starts a pull-back deployment of `trial`'s previous release; `inTx` records its id on the trial in the creating transaction. */
  deployPullBack(trial: TrialRow, principal: Pick<RestPrincipal, 'name' | 'onBehalfOf' | 'authMethod'>): Promise<string>;
  outbox: ProgramsServices['webhooks.outbox'];
}

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

export class TrialRunner {
  private readonly actors = new Map<string, Actor<typeof trialMachine>>();
  private readonly writes = new Set<Promise<unknown>>();
  /** Callers waiting for a trial's next stored transition. */
  private readonly waiters = new Map<string, (() => void)[]>();
  private stopping = false;

  constructor(
    private readonly ctx: ProgramsContext,
    private readonly trials: TrialRepository,
    private readonly deployments: DeploymentRepository,
    private readonly deps: TrialDeps,
    private readonly logger: Logger,
  ) {}

  /**
   * Reads one class of rows for [from, to), page by page, up to HISTORY_MAX.
   * The gateway's windows are whole seconds, so the read covers the seconds
   * around the window and the rows are cut to it by their own times (in ms).
   */
  private async rows(link: GatewayLink, machineID: string, type: string, from: number, to: number): Promise<{ rows: LinkHistoryRow[]; truncated: boolean }> {
    const rows: LinkHistoryRow[] = [];
    if (to <= from) return { rows, truncated: false };
    const start = Math.floor(from / 1000) * 1000;
    const end = Math.ceil(to / 1000) * 1000 + 1000;
    let afterSeq: number | undefined;
    for (;;) {
      const page = await link.history(machineID, type, start, end, HISTORY_PAGE, afterSeq);
      rows.push(...page.rows.filter((r) => r.time >= from && r.time < to));
      if (!page.limitReached || page.rows.length === 0) return { rows, truncated: false };
      if (rows.length >= HISTORY_MAX) return { rows, truncated: true };
      afterSeq = page.rows[page.rows.length - 1]?.seq;
    }
  }

  /** Reads the machine and judges the trial now. */
  async evaluate(t: TrialRow): Promise<TrialEvidence> {
    const fleet = this.ctx.services.get('gateway-machines');
    const machine = await fleet.machine(t.machineId, SYSTEM);
    if (!machine) throw new Error(`machine ${t.machineId} is no longer in the fleet`);
    const link = await fleet.linkFor(machine);
    const started = t.startedAt ?? t.createdAt;
    const now = this.ctx.now();
    const trialTo = Math.max(started, Math.min(now, t.endsAt ?? now));
    const baselineFrom = t.createdAt - t.rules.baselineHours * 3_600_000;
    const program = programKey(t.fileName);
    const cycles = (rows: LinkHistoryRow[]) =>
      rows.filter((r) => typeof r.data.program === 'string' && programKey(r.data.program) === program && typeof r.data.lastCycleTime === 'number' && r.data.lastCycleTime > 0)
        .map((r) => r.data.lastCycleTime as number);
    const [baseline, trial, alarmRows] = await Promise.all([
      this.rows(link, machine.machineId, 'Count', baselineFrom, t.createdAt),
      this.rows(link, machine.machineId, 'Count', started, trialTo + 1),
      this.rows(link, machine.machineId, 'AlarmLog', started, trialTo + 1),
    ]);
    const alarms: TrialAlarm[] = alarmRows.rows
      .filter((r) => r.data.event === 'start')
      .map((r) => ({ code: String(r.data.code ?? ''), message: String(r.data.message ?? '').slice(0, 200), level: String(r.data.level ?? ''), at: r.time }));
    return judge(t.rules, {
      program,
      baseline: { cycleSecs: cycles(baseline.rows), from: baselineFrom, to: t.createdAt },
      trial: { cycleSecs: cycles(trial.rows), from: started, to: trialTo },
      alarms,
      truncated: baseline.truncated || trial.truncated || alarmRows.truncated,
    });
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
            evidence = await this.evaluate(t);
          } catch (err) {
            const reason = `the machine could not be read for the trial: ${String((err as Error)?.message ?? err).slice(0, 300)}`;
            await this.trials.setReason(t.id, reason, this.ctx.now());
            throw new Error(reason, { cause: err });
          }
          const at = this.ctx.now();
          await this.ctx.db.write(async (tx) => {
            await this.trials.recordVerdict(tx, t.id, evidence, at);
            // A verdict that changed is audited with its evidence; the same verdict again is only stored.
            if (evidence.verdict !== t.verdict) {
              await this.ctx.audit.append(tx, {
                ...SYSTEM_ACTOR, category: 'deployment', action: 'trial.verdict', entityType: 'trial', entityId: t.id, machine: t.machineId,
                details: { verdict: evidence.verdict, previous: t.verdict, evidence },
              });
            }
          }, { transaction: true });
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

  start(trialId: string): void {
    this.run(trialId, createActor(this.machine(), { input: { trialId } }));
  }

  async resumeAll(): Promise<number> {
    const open = await this.trials.unfinished();
    for (const t of open) {
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
      this.run(t.id, createActor(this.machine(), { snapshot: snapshot as never, input: { trialId: t.id } }));
    }
    return open.length;
  }

  /** Whether the trial's actor accepts `event` now. */
  can(trialId: string, event: TrialEvent): boolean {
    const actor = this.actors.get(trialId);
    return Boolean(actor && actor.getSnapshot().can(event));
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

  private run(id: string, actor: Actor<typeof trialMachine>): void {
    this.actors.set(id, actor);
    let last = '';
    actor.subscribe({
      next: (snapshot) => {
        const key = JSON.stringify(snapshot.value);
        if (key === last || this.stopping) return;
        const previous = last;
        last = key;
        const status = trialStatusOf(snapshot.value);
        const final = snapshot.status === 'done';
        const persisted = JSON.stringify(actor.getPersistedSnapshot());
        const write = this.store(id, { status, previous, value: key, final, snapshot: persisted, context: snapshot.context })
          .then(() => {
            if (final) this.actors.delete(id);
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

  /** Stores a transition with what it means: audit record, release on promotion, webhook. */
  private async store(id: string, s: { status: ReturnType<typeof trialStatusOf>; previous: string; value: string; final: boolean; snapshot: string; context: SnapshotFrom<typeof trialMachine>['context'] }): Promise<void> {
    const at = this.ctx.now();
    await this.ctx.db.write(async (tx) => {
      const t = await this.trials.getTx(tx, id);
      if (!t || t.finishedAt !== null) return;
      const decision = s.context.decision;
      await this.trials.transition(tx, id, { status: s.status, reason: s.context.lastError, decision, snapshot: s.snapshot, machineVersion: TRIAL_MACHINE_VERSION, at, final: s.final });
      const audit = (action: string, details: Record<string, unknown>, by = decision) =>
        this.ctx.audit.append(tx, {
          principalName: by?.by ?? 'system', onBehalfOf: by?.onBehalfOf ?? null, authMethod: by?.authMethod ?? 'internal', category: 'deployment', action,
          entityType: 'trial', entityId: id, machine: t.machineId, details: { versionId: t.versionId, deploymentId: t.deploymentId, ...details },
        });
      const hook = (event: 'trial.promoted' | 'trial.pulled-back' | 'trial.started', data: Record<string, unknown> = {}) =>
        this.deps.outbox.enqueue(tx, event, { trialId: id, machineId: t.machineId, assignmentId: t.assignmentId, versionId: t.versionId, previousVersionId: t.previous?.versionId ?? null, at: new Date(at).toISOString(), ...data });
      if (s.status === 'Active' && s.previous.includes('deploying')) {
        await audit('trial.start', { startedAt: t.startedAt, endsAt: t.endsAt, rules: t.rules }, null);
        await hook('trial.started', { endsAt: t.endsAt === null ? null : new Date(t.endsAt).toISOString() });
      } else if (s.status === 'PullingBack') {
        await audit('trial.pull-back', { automatic: decision?.automatic ?? false, note: decision?.note ?? null, verdict: t.verdict, evidence: t.evidence, previousVersionId: t.previous?.versionId ?? null });
      } else if (s.status === 'PulledBack') {
        await audit('trial.pulled-back', { pullBackDeploymentId: t.pullBackDeploymentId, previousVersionId: t.previous?.versionId ?? null });
        await hook('trial.pulled-back', { automatic: decision?.automatic ?? false, verdict: t.verdict, pullBackDeploymentId: t.pullBackDeploymentId });
      } else if (s.status === 'Promoted') {
        const d = await this.deployments.get(t.deploymentId);
        if (d) {
          await this.deployments.setRelease(tx, { assignmentId: t.assignmentId, machineId: t.machineId, versionId: t.versionId, sha256: d.sha256, dir: d.dir, fileName: d.fileName, deploymentId: d.id, releasedAt: at, releasedBy: decision?.by ?? 'system' });
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

  async stop(): Promise<void> {
    this.stopping = true;
    for (const actor of this.actors.values()) actor.stop();
    this.actors.clear();
    for (const list of this.waiters.values()) for (const resolve of list.splice(0)) resolve();
    await Promise.allSettled([...this.writes]);
  }
}

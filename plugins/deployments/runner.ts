/**
 * Runs deployment actors: one XState actor per deployment, its snapshot
 * persisted (with the machine version) at every transition together with
 * the status and timeline, in one transaction with the audit record of a
 * final status. At start, every deployment that had not finished is
 * restored from its snapshot and carries on. Transfers are limited per
 * gateway. Several instances on one database each run the deployments they
 * hold a lease on, and take over those whose holder stopped renewing
 * (plugins/deployments/lease.ts).
 */
import { createActor, type Actor, type SnapshotFrom } from 'xstate';
import type { Logger } from 'pino';
import { fromPromise } from 'xstate';
import type { GatewayLink } from '../../core/gateway-link/types.js';
import { Semaphore } from '../../core/runtime/semaphore.js';
import type { ProgramsServices } from '../../core/roles/programs/context.js';
import { SYSTEM } from './common.js';
import type { ProgramsContext } from '../../core/roles/programs/context.js';
import type { SqlDatabase } from '../../core/store/sql-database.js';
import { GatewayClaims } from './gateway-claims.js';
import { CLAIM_LIMIT, claimDeployments, keepLeases, raiseDeploymentEpoch, releaseDeployments } from './lease.js';
import { DEPLOYMENT_MACHINE_VERSION, deploymentMachine, isStepFailure, statusOf, type StepFailure } from './machine.js';
import { failure, linkFailure } from './step-failures.js';
import { StepFencing } from './step-fencing.js';
import type { DeploymentRepository, DeploymentRow } from './store.js';
import { TransferSpans, type DeploymentStep, type TraceCarrier } from './trace.js';
import { VaultVersions } from './vault-version.js';

export type FleetMachine = NonNullable<Awaited<ReturnType<ProgramsServices['gateway-machines']['machine']>>>;

/** What a deployment's steps need: its row, its machine and the link to its gateway. */
type Target = { row: DeploymentRow; machine: FleetMachine; link: GatewayLink };

/** Transfers at once per gateway; more wait their turn. */
export const TRANSFERS_PER_GATEWAY = 4;

export interface RunnerOptions {
  /**
   * Whether at start every unfinished deployment is this instance's at once:
   * by default on SQLite, whose database one process opens (the data
   * directory's lock), so whatever is unfinished was left by its previous
   * run; not where other instances may be running them.
   */
  takeOverAtStart?: boolean;
  /** Deployments claimed by one statement (CLAIM_LIMIT unless given). */
  claimLimit?: number;
}

export class DeploymentRunner {
  private readonly actors = new Map<string, Actor<typeof deploymentMachine>>();
  private readonly slots = new Map<string, Semaphore>();
  private stopping = false;
  private readonly writes = new Set<Promise<unknown>>();
  /** Transferring deployments waiting for one of their gateway's transfer slots. */
  private readonly slotWaits = new Set<string>();
  /** Deployments restored after a restart: their next transfer first reads the file back. */
  private readonly resumed = new Set<string>();

  /** The transfer span of each deployment running here, in its batch's trace (trace.ts). */
  private readonly spans = new TransferSpans();

  /** The lease keeper: renews this instance's leases and claims ended ones, every third of the lease time. */
  private keeper: ReturnType<typeof keepLeases> | undefined;

  constructor(
    private readonly ctx: Pick<ProgramsContext, 'services' | 'now'> & { db: SqlDatabase },
    private readonly repo: DeploymentRepository,
    private readonly logger: Logger,
    /** Told when a deployment reaches Succeeded or Failed (after it is stored). */
    private readonly onFinished: (row: DeploymentRow) => void = () => undefined,
    private readonly options: RunnerOptions = {},
  ) {
    this.takeOverAtStart = options.takeOverAtStart ?? ctx.db.dialect.engine === 'sqlite';
    this.vaultVersions = new VaultVersions(ctx);
    this.fencing = new StepFencing(repo, ctx.now, (id, epoch) => this.lost(id, epoch), (id, epoch, highest) => this.aheadAtGateway(id, epoch, highest));
    this.claims = new GatewayClaims(async (room, limit) => {
      const at = performance.now();
      const claimed = await claimDeployments(this.ctx.db, this.repo.lease, this.ctx.now(), { limit, perGroup: room });
      // One that had started elsewhere (it has a snapshot) is a takeover, worth an operator's notice; the rest is the routine share of a batch.
      const takenOver = claimed.filter((r) => r.snapshot !== null).length;
      if (takenOver > 0) this.logger.info({ deployments: takenOver, holder: this.repo.lease.holder }, 'deployments taken over from an instance whose lease ended');
      else if (claimed.length > 0) this.logger.debug({ deployments: claimed.length, holder: this.repo.lease.holder }, 'deployments claimed');
      await this.resumeClaimed(claimed, at);
      return claimed;
    }, TRANSFERS_PER_GATEWAY, options.claimLimit ?? CLAIM_LIMIT, (err) => this.logger.warn({ err }, 'deployments not claimed; tried again at the lease keeper\'s next pass'));
  }

  /** What this instance claims of the deployments whose lease ended: per gateway, what it can start soon (gateway-claims.ts). */
  private readonly claims: GatewayClaims;

  /** How each step is fenced under its epoch (step-fencing.ts). */
  private readonly fencing: StepFencing;

  private readonly takeOverAtStart: boolean;

  /** Whether this instance still runs the deployment's actor. */
  private runs(deploymentId: string): boolean {
    return !this.stopping && this.actors.has(deploymentId);
  }

  /** Whether a Transferring deployment of this process still waits for a transfer slot of its gateway. */
  waitingForSlot(deploymentId: string): boolean {
    return this.slotWaits.has(deploymentId);
  }

  private slot(gatewayId: string): Semaphore {
    let s = this.slots.get(gatewayId);
    if (!s) this.slots.set(gatewayId, (s = new Semaphore(TRANSFERS_PER_GATEWAY)));
    return s;
  }

  /** Deployments claimed and not yet looked up: their rows as the claim answered them. */
  private readonly claimedRows = new Map<string, DeploymentRow>();
  /** What a deployment's steps need, read once per deployment while it runs. */
  private readonly targets = new Map<string, Promise<Target>>();
  /** The vault version each deployment names in its upload (vault-version.ts). */
  private readonly vaultVersions: VaultVersions;

  /** The contents being sent, by SHA-256: a batch usually sends one file to every machine. */
  private readonly contents = new Map<string, Promise<Buffer>>();

  private content(sha256: string): Promise<Buffer> {
    return this.contents.get(sha256) ?? this.remember(sha256, this.repo.content(sha256));
  }

  private remember(sha256: string, content: Promise<Buffer>): Promise<Buffer> {
    this.contents.set(sha256, content);
    if (this.contents.size > 8) this.contents.delete(this.contents.keys().next().value as string);
    return content;
  }

  /** The machine with this runner's actors, made once (providing it is not free). */
  private provided: ReturnType<typeof this.provide> | undefined;

  private machine() {
    return (this.provided ??= this.provide());
  }

  private provide() {
    const fleet = () => this.ctx.services.get('gateway-machines');
    const resolveTarget = async (deploymentId: string) => {
      // A deployment just claimed has its row at hand.
      const row = this.claimedRows.get(deploymentId) ?? (await this.repo.get(deploymentId));
      this.claimedRows.delete(deploymentId);
      if (!row) throw failure(false, `deployment ${deploymentId} is gone`);
      const machine = await fleet().machine(row.machineId, SYSTEM);
      if (!machine) throw failure(false, `machine ${row.machineId} is no longer in the fleet`);
      if (!machine.present) throw failure(false, `machine ${machine.machineId} is no longer listed by its gateway (sync the gateway)`);
      // No way to the machine's gateway from here now (another instance's gateway without an address): retried until the deadline, never another gateway.
      const link = await fleet().linkFor(machine).catch((err: unknown) => {
        throw linkFailure(err, 'gateway');
      });
      return { row, machine, link };
    };
    const target = (deploymentId: string) => {
      let known = this.targets.get(deploymentId);
      if (!known) {
        known = resolveTarget(deploymentId);
        this.targets.set(deploymentId, known);
        // A failed look-up is tried afresh next time.
        known.catch(() => this.targets.delete(deploymentId));
      }
      return known;
    };
    return deploymentMachine.provide({
      // The deadline is on the service's clock.
      guards: {
        retryable: ({ context, event }) => {
          const error = (event as { error?: unknown }).error;
          return isStepFailure(error) && error.transient && this.ctx.now() < context.deadline;
        },
      },
      actors: {
        transfer: fromPromise(({ input, signal }: { input: { deploymentId: string; resumed: boolean }; signal: AbortSignal }) => this.transfer(input, signal, target)),
        verify: fromPromise(({ input, signal }: { input: { deploymentId: string }; signal: AbortSignal }) => this.verify(input.deploymentId, signal, target)),
        wait: fromPromise(({ input }: { input: { ms: number } }) => new Promise<void>((resolve) => setTimeout(resolve, input.ms).unref())),
      },
    });
  }

  /**
   * A transfer, under the epoch its actor runs with: opened in the database
   * (which confirms the epoch, and counts a first transfer before it starts,
   * so one cut off by a crash still counts), then, once its gateway has a
   * slot and the hold is still sure, the upload (after a read-back when
   * resumed: a transfer was opened before, here or at a former holder) with
   * the epoch as fencing token. A holder that finds its epoch
   * superseded at any step stops there.
   */
  private async transfer(input: { deploymentId: string; resumed: boolean }, signal: AbortSignal, target: (id: string) => Promise<Target>): Promise<{ skipped: boolean }> {
    const id = input.deploymentId;
    const epoch = this.epochOf(id, signal);
    const { row, machine, link } = await target(id);
    this.spans.note(id, { 'cncgw.machine.id': machine.machineId });
    // A restored promise actor runs again with the input it had before the restart, so the runner keeps this itself.
    const resumed = this.resumed.delete(id) || input.resumed;
    const content = await this.content(row.sha256);
    const vault = await this.vaultVersions.of(row);
    await this.fencing.open(id, epoch, !resumed);
    const fence = { lease: id, epoch };
    const file = { machineID: machine.machineId, dir: row.dir, name: row.fileName, fence };
    // Taken over: the gateway learns the new epoch at once, not when a slot comes, and refuses the former holder from then on.
    if (resumed) await this.fencing.announce(link, file);
    // The gateway's slot is held only while the gateway works, not while this service reads or writes its own database.
    // Marked until its turn comes; a free slot runs the job at once, within this same step.
    this.slotWaits.add(id);
    const sent = await this.slot(machine.gatewayId).run(async () => {
      this.slotWaits.delete(id);
      // Stopped while it waited for its turn (this instance stopped, or another took the deployment over): nothing is sent.
      if (!this.runs(id) || signal.aborted) throw failure(false, 'no longer run by this instance');
      await this.fencing.mustHold(id, epoch);
      if (resumed) {
        // After a restart or a failed call: if the file is already there, whole, it is not sent again.
        const there = await this.fencing.call(link, file, 'read-back', this.step(id, 'read-back', machine, () => link.programHash(machine.machineId, row.dir, row.fileName, fence))).catch((err: unknown) => {
          if (this.repo.held.epochOf(id) !== epoch) throw err;
          return undefined;
        });
        if (there?.sha256 === row.sha256) return false;
      }
      await this.fencing.call(link, file, 'transfer', this.step(id, 'upload', machine, () => link.uploadProgram(machine.machineId, row.dir, row.fileName, content, fence, vault)));
      return true;
    });
    if (sent && resumed) await this.fencing.open(id, epoch, true);
    return { skipped: !sent };
  }

  /** The read-back, under the epoch the actor runs with, the epoch sent as fencing token. */
  private async verify(id: string, signal: AbortSignal, target: (id: string) => Promise<Target>): Promise<{ readBackSha256: string }> {
    const epoch = this.epochOf(id, signal);
    const { row, machine, link } = await target(id);
    await this.fencing.mustHold(id, epoch);
    // The gateway hashes what it reads from the machine: the bytes need not travel to be compared.
    const fence = { lease: id, epoch };
    const back = await this.fencing.call(link, { machineID: machine.machineId, dir: row.dir, name: row.fileName, fence }, 'read-back', this.step(id, 'verify', machine, () => link.programHash(machine.machineId, row.dir, row.fileName, fence)));
    if (back.sha256 !== row.sha256) {
      throw { ...failure(false, `read-back: the file on the machine has SHA-256 ${back.sha256}, not the transferred ${row.sha256}`), readBackSha256: back.sha256 };
    }
    return { readBackSha256: back.sha256 };
  }

  /** A step's link call, as a span under the deployment's transfer span (trace.ts). */
  private step<T>(id: string, step: DeploymentStep, machine: FleetMachine, call: () => Promise<T>): Promise<T> {
    return this.spans.step(id, step, { 'cncgw.machine.id': machine.machineId, 'cncgw.lease.epoch': this.repo.held.epochOf(id) }, call);
  }

  /** The epoch a step of `id` runs under: its actor's, while it runs here. */
  private epochOf(id: string, signal: AbortSignal): number {
    const epoch = this.repo.held.epochOf(id);
    if (epoch === undefined || signal.aborted || !this.runs(id)) throw failure(false, 'no longer run by this instance');
    return epoch;
  }

  /**
   * Another instance holds the deployment now (a higher epoch): its actor
   * here stops without storing anything more, unless this instance has
   * claimed it again since under a newer epoch. Answers the failure the step
   * throws (which nothing stores).
   */
  private lost(id: string, epoch: number): StepFailure {
    if (this.repo.held.epochOf(id) === epoch) {
      this.logger.warn({ deployment: id, epoch, holder: this.repo.lease.holder }, 'deployment taken over by another instance; stopped here before touching its machine again');
      this.drop(id);
    }
    return failure(false, `taken over by another instance (epoch ${epoch} superseded)`);
  }

  /**
   * A gateway has seen `highest` of the deployment's lease, above the epoch
   * its actor here runs with. When the database still holds it for this
   * instance under that epoch, the gateway's epoch came from a history the
   * database no longer has (it was restored from an older backup): the
   * deployment is claimed again above it and goes on from what is stored,
   * read back first when a transfer was opened before. Otherwise another
   * instance holds it, and it stops here. Answers the failure the step throws
   * (which nothing stores: its actor has stopped).
   */
  private async aheadAtGateway(id: string, epoch: number, highest: number): Promise<StepFailure> {
    if (this.repo.held.epochOf(id) !== epoch || this.stopping) return this.lost(id, epoch);
    const at = performance.now();
    const row = await raiseDeploymentEpoch(this.ctx.db, this.repo.lease, id, epoch, highest + 1, this.ctx.now()).catch((err: unknown) => {
      this.logger.warn({ err, deployment: id }, 'deployment epoch not raised above the gateway\'s; tried again at its next step');
      return null;
    });
    if (row === null) return failure(true, `the gateway has seen epoch ${highest} of this deployment, above ${epoch}; its epoch could not be raised yet`);
    if (!row || this.repo.held.epochOf(id) !== epoch || this.stopping) return this.lost(id, epoch);
    this.logger.warn({ deployment: id, epoch, gatewayEpoch: highest, raisedTo: row.leaseEpoch }, 'the gateway has seen a newer epoch of this deployment than the database holds (restored from an older backup?); claimed again above it');
    await this.resumeClaimed([row], at);
    return failure(false, `claimed again under epoch ${row.leaseEpoch}, above the gateway's ${highest}`);
  }

  /**
   * Starts a new deployment's actor. `known` is what its steps need, when the
   * caller has it at hand (a batch just stored): the steps then read nothing
   * before the transfer. A new deployment is held under epoch 1, its first claim.
   * `trace`: its batch's trace context, which its transfer span continues (its row's, when known).
   */
  start(deploymentId: string, deadline: number, known?: { row: DeploymentRow; machine: FleetMachine; link: GatewayLink; content: Buffer }, trace?: TraceCarrier | null): void {
    if (known) {
      this.targets.set(deploymentId, Promise.resolve({ row: known.row, machine: known.machine, link: known.link }));
      if (!this.contents.has(known.row.sha256)) this.remember(known.row.sha256, Promise.resolve(known.content));
    }
    // Confirmed when it was stored: the lease stored with it runs from its creation.
    if (this.repo.held.epochOf(deploymentId) === undefined) this.repo.held.hold(deploymentId, known?.row.leaseEpoch ?? 1, performance.now() - Math.max(0, this.ctx.now() - (known?.row.updatedAt ?? this.ctx.now())));
    const actor = createActor(this.machine(), { input: { deploymentId, deadline } });
    this.claims.started(deploymentId, known?.row.gatewayId ?? this.claimedRows.get(deploymentId)?.gatewayId);
    this.run(deploymentId, actor, known?.row.trace ?? trace, this.resumed.has(deploymentId));
  }

  /**
   * Claims the unfinished deployments this instance may run now (at start on
   * SQLite all of them; otherwise those whose lease has ended), restores each
   * from its snapshot, and keeps the leases from then on.
   */
  async resumeAll(): Promise<number> {
    let resumed: number;
    if (this.takeOverAtStart) {
      const at = performance.now();
      const open = await claimDeployments(this.ctx.db, this.repo.lease, this.ctx.now(), { everything: true });
      await this.resumeClaimed(open, at);
      resumed = open.length;
    } else {
      resumed = await this.claims.claim();
    }
    this.keeper = keepLeases(this.repo.lease, (renew) => this.tend(renew));
    return resumed;
  }

  /**
   * Restores claimed deployments from their snapshots, each held under the
   * epoch of its claim (`at`: when the claim was sent). One whose transfer
   * was opened before (counted in `transfers`, before it starts) may have
   * reached its machine: its next transfer announces the new epoch to the
   * gateway and reads the file back first. One with none opened was never
   * sent by anyone (a former holder opens a transfer in the database, under
   * its epoch, before it touches the machine): it is sent as a new one.
   */
  private async resumeClaimed(rows: readonly DeploymentRow[], at: number): Promise<void> {
    for (const row of rows) {
      if (this.stopping) return;
      // Still running here under an older epoch (this instance renewed too late and claimed its own row again):
      // that actor stops, and the deployment goes on from what is stored, as after any claim.
      if (this.actors.has(row.id)) this.drop(row.id);
      this.repo.held.hold(row.id, row.leaseEpoch, at);
      // As claimed (the claim locked it): its first state change appends to this timeline without reading it back.
      this.repo.track([row]);
      if (row.machineVersion !== DEPLOYMENT_MACHINE_VERSION) {
        await this.repo.finish(row.id, row.leaseEpoch, 'Failed', `interrupted by a restart with another version of the deployment lifecycle (${row.machineVersion} → ${DEPLOYMENT_MACHINE_VERSION}); deploy again`, this.ctx.now(), null);
        this.repo.held.forget(row.id);
        continue;
      }
      if (row.transfers > 0) this.resumed.add(row.id);
      this.targets.delete(row.id);
      // Its first step reads nothing back either.
      this.claimedRows.set(row.id, row);
      if (!row.snapshot) {
        // Stored, but stopped before its first state change was: it starts from the beginning.
        this.start(row.id, row.deadline, undefined, row.trace);
        continue;
      }
      const snapshot = JSON.parse(row.snapshot) as SnapshotFrom<typeof deploymentMachine>;
      const actor = createActor(this.machine(), { snapshot: snapshot as never, input: { deploymentId: row.id, deadline: row.deadline } });
      this.claims.started(row.id, row.gatewayId);
      this.run(row.id, actor, row.trace, true);
    }
  }

  /**
   * One pass of the lease keeper: with `renew`, renews this instance's leases
   * and stops the actors of deployments another instance has taken over
   * meanwhile (this one renewed too late); then claims deployments whose
   * lease has ended.
   */
  private async tend(renew: boolean): Promise<void> {
    try {
      if (renew) {
        // Only actors started before the renewal read its rows: one started since holds a row the renewal may not have seen.
        const running = [...this.actors.keys()];
        const held = await this.repo.held.renew();
        for (const id of running) if (held.get(id) !== this.repo.held.epochOf(id)) this.drop(id);
      }
      if (this.stopping) return;
      await this.claims.claim();
    } catch (err) {
      this.logger.warn({ err }, 'deployment leases not kept this round; tried again next round');
    }
  }

  /** Stops a deployment's actor here without storing anything more: another instance holds it now, or it finished. */
  private drop(id: string): void {
    const actor = this.actors.get(id);
    this.actors.delete(id);
    this.claims.ended(id);
    this.targets.delete(id);
    this.slotWaits.delete(id);
    this.resumed.delete(id);
    this.claimedRows.delete(id);
    this.repo.forget([id]);
    this.repo.held.forget(id);
    this.spans.end(id, 'taken_over');
    actor?.stop();
  }

  /**
   * Runs an actor under the epoch its deployment is held with now, storing
   * each state it reaches under that epoch; its transfer span here continues
   * `trace` (`resumed`: restored from its snapshot, or started again).
   */
  private run(id: string, actor: Actor<typeof deploymentMachine>, trace: TraceCarrier | null | undefined, resumed: boolean): void {
    const epoch = this.repo.held.epochOf(id) ?? 0;
    this.actors.set(id, actor);
    this.spans.begin(id, trace, { 'cncgw.deployment.resumed': resumed, 'cncgw.lease.epoch': epoch });
    let last = '';
    actor.subscribe({
      next: (snapshot) => {
        const state = String(snapshot.value);
        if (state === last || this.stopping || this.actors.get(id) !== actor) return;
        last = state;
        const status = statusOf(state);
        const persisted = JSON.stringify(actor.getPersistedSnapshot());
        const final = snapshot.status === 'done';
        if (final) this.spans.end(id, status, status === 'Failed');
        const write = (final
          ? this.repo.finish(id, epoch, status, status === 'Failed' ? snapshot.context.lastError : null, this.ctx.now(), persisted, snapshot.context.readBackSha256 ?? null).then((row) => {
            if (this.actors.get(id) === actor) {
              this.actors.delete(id);
              this.claims.ended(id);
              this.repo.held.forget(id);
            }
            this.targets.delete(id);
            this.claimedRows.delete(id);
            if (row) this.onFinished(row);
          })
          : this.repo.transition(id, epoch, status, snapshot.context.lastError, this.ctx.now(), persisted, DEPLOYMENT_MACHINE_VERSION).then((stored) => {
            // Not stored: another instance holds it under a newer epoch (or it finished there), so it stops here.
            if (!stored && this.actors.get(id) === actor) this.lost(id, epoch);
          })
        )
          .catch((err: unknown) => this.logger.error({ err, deployment: id }, 'deployment state not stored'));
        this.writes.add(write);
        void write.finally(() => this.writes.delete(write));
      },
      error: (err) => this.logger.error({ err, deployment: id }, 'deployment actor failed'),
    });
    actor.start();
  }

  /**
   * Stops every actor (their snapshots are stored; a restart, or another
   * instance, resumes them) and waits for pending writes. With `release`
   * (a clean stop) its leases end at once, so another instance takes its
   * deployments over without waiting for them to run out.
   */
  async stop(options: { release?: boolean } = { release: true }): Promise<void> {
    this.stopping = true;
    const keeping = this.keeper?.stop();
    const claiming = this.claims.stop();
    for (const actor of this.actors.values()) actor.stop();
    this.spans.endAll('stopped');
    this.slotWaits.clear();
    this.actors.clear();
    await Promise.allSettled([...this.writes, keeping, claiming]);
    if (options.release) await releaseDeployments(this.ctx.db, this.repo.lease).catch((err: unknown) => this.logger.warn({ err }, 'deployment leases not released'));
  }
}

/**
 * The fencing of a deployment's steps: each runs under the epoch its
 * deployment was claimed with (lease.ts). A transfer is opened in the
 * database under it; before the machine is touched the hold must still be
 * sure (held-rows.ts); a deployment taken over is announced to its gateway
 * before it waits for a transfer slot, so the gateway refuses its former
 * holder from then on; and every answer that the epoch is superseded (the
 * database's or the gateway's) stops the deployment here, before it
 * touches the machine again. A gateway that has seen a newer epoch than the
 * database holds while this instance still holds the row under its own (the
 * database restored from an older backup) is not another holder: the
 * deployment is claimed again above the gateway's epoch and goes on.
 * docs/programs-deployments.md, "Several instances".
 */
import { isSuperseded, type GatewayLink, type LinkFence, type LinkFenceAnswer } from '../../core/gateway-link/types.js';
import { WriteRounds } from '../../core/store/write-rounds.js';
import { FENCES_PER_CALL } from '../../core/roles/gateway/contract/program-files.js';
import type { StepFailure } from './machine.js';
import { databaseFailure, linkFailure } from './step-failures.js';
import type { DeploymentRepository } from './store.js';

export class StepFencing {
  /** Fences announced to each gateway link, in rounds: one call per link for the deployments taken over together (weakly held: a remote gateway's link may be made anew per deployment). */
  private readonly announcing = new WeakMap<GatewayLink, WriteRounds<LinkFence, LinkFenceAnswer>>();

  constructor(
    private readonly repo: DeploymentRepository,
    /** The service's clock. */
    private readonly now: () => number,
    /** Stops a deployment here whose epoch is superseded; answers the failure its step throws. */
    private readonly lost: (id: string, epoch: number) => StepFailure,
    /**
     * A gateway has seen `highestEpoch` of the deployment's lease, above `epoch`:
     * stops it here, or claims it again above that epoch when the database still
     * holds it for this instance under `epoch`; answers the failure its step throws.
     */
    private readonly ahead: (id: string, epoch: number, highestEpoch: number) => Promise<StepFailure>,
  ) {}

  /** Opens a transfer under `epoch` (with `count`, counting it); stops the deployment here when the epoch is superseded. */
  async open(id: string, epoch: number, count: boolean): Promise<void> {
    const at = performance.now();
    const held = await this.repo.openTransfer(id, epoch, count, this.now()).catch((err: unknown) => {
      throw databaseFailure('the transfer could not be opened', err);
    });
    if (!held) throw this.lost(id, epoch);
    this.repo.held.confirm(id, epoch, at);
  }

  /** Before the machine is touched: stops the deployment here unless it is still held under `epoch`. */
  async mustHold(id: string, epoch: number): Promise<void> {
    const held = await this.repo.held.stillHeld(id, epoch).catch((err: unknown) => {
      throw databaseFailure('the lease could not be confirmed', err);
    });
    if (!held) throw this.lost(id, epoch);
  }

  /** Announces a taken-over deployment's fencing token to its gateway; stops it here when the gateway has seen a newer epoch. */
  async announce(link: GatewayLink, fence: LinkFence): Promise<void> {
    const answer = await this.ask(link, fence);
    if (answer.superseded) throw await this.ahead(fence.fence.lease, fence.fence.epoch, answer.highestEpoch);
  }

  /** Asks the gateway, in a round with others, to note `fence`: it answers whether a newer epoch was seen, and the highest. */
  private ask(link: GatewayLink, fence: LinkFence): Promise<LinkFenceAnswer> {
    let rounds = this.announcing.get(link);
    if (!rounds) {
      rounds = new WriteRounds(async (jobs) => {
        for (let i = 0; i < jobs.length; i += FENCES_PER_CALL) {
          const part = jobs.slice(i, i + FENCES_PER_CALL);
          const answers = await link.announceFences(part.map((j) => j.item));
          part.forEach((j, k) => j.resolve(answers[k] as LinkFenceAnswer));
        }
      });
      this.announcing.set(link, rounds);
    }
    return rounds.add(fence).catch((err: unknown) => {
      throw linkFailure(err, 'fencing');
    });
  }

  /**
   * A link call of `what` under `fence`: a refusal as superseded stops the
   * deployment here (after asking the gateway which epoch it has seen, see
   * `ahead`); another failure is told as `what`'s.
   */
  call<T>(link: GatewayLink, fence: LinkFence, what: string, call: Promise<T>): Promise<T> {
    return call.catch(async (err: unknown) => {
      if (!isSuperseded(err)) throw linkFailure(err, what);
      const answer = await this.ask(link, fence);
      throw answer.superseded ? await this.ahead(fence.fence.lease, fence.fence.epoch, answer.highestEpoch) : this.lost(fence.fence.lease, fence.fence.epoch);
    });
  }
}

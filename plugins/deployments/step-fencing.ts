/**
 * The fencing of a deployment's steps: each runs under the epoch its
 * deployment was claimed with (lease.ts). A transfer is opened in the
 * database under it; before the machine is touched the hold must still be
 * sure (held-rows.ts); a deployment taken over is announced to its gateway
 * before it waits for a transfer slot, so the gateway refuses its former
 * holder from then on; and every answer that the epoch is superseded (the
 * database's or the gateway's) stops the deployment here, before it
 * touches the machine again. docs/programs-deployments.md, "Several instances".
 */
import { isSuperseded, type FencingToken, type GatewayLink, type LinkFence, type LinkFenceAnswer } from '../../core/gateway-link/types.js';
import { WriteRounds } from '../../core/store/write-rounds.js';
import { FENCES_PER_CALL } from '../../core/roles/gateway/contract/program-files.js';
import type { StepFailure } from './machine.js';
import { databaseFailure, linkFailure } from './step-failures.js';
import type { DeploymentRepository } from './store.js';

export class StepFencing {
  /** Fences announced to each gateway, in rounds: one call per gateway for the deployments taken over together. */
  private readonly announcing = new Map<GatewayLink, WriteRounds<LinkFence, LinkFenceAnswer>>();

  constructor(
    private readonly repo: DeploymentRepository,
    /** The service's clock. */
    private readonly now: () => number,
    /** Stops a deployment here whose epoch is superseded; answers the failure its step throws. */
    private readonly lost: (id: string, epoch: number) => StepFailure,
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
    const answer = await rounds.add(fence).catch((err: unknown) => {
      throw linkFailure(err, 'fencing');
    });
    if (answer.superseded) throw this.lost(fence.fence.lease, fence.fence.epoch);
  }

  /** A link call of `what` under `fence`: a refusal as superseded stops the deployment here; another failure is told as `what`'s. */
  call<T>(fence: FencingToken, what: string, call: Promise<T>): Promise<T> {
    return call.catch((err: unknown) => {
      throw isSuperseded(err) ? this.lost(fence.lease, fence.epoch) : linkFailure(err, what);
    });
  }
}

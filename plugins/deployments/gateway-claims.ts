/**
 * How much of the deployments whose lease has ended an instance claims: per
 * gateway, what it can start soon (its transfer slots there and as many
 * again waiting), not the whole batch. The rest stays claimable, so several
 * instances share each gateway's machines instead of one holding a
 * gateway's queue while another idles. When the deployments an instance
 * runs at a gateway fall to its slots there, it claims again at once (not
 * at the lease keeper's next pass), unless its last claim found nothing
 * more at that gateway; the keeper's passes find new work and leases that
 * ended. Claims run one at a time.
 */
import type { ClaimOptions } from './lease.js';

/** How soon after a deployment ends here a claim for its gateway's next ones runs, ms: ends that come together make one claim. */
export const CLAIM_SOON_MS = 20;

/** One claim statement: `room` says how many it may take per gateway; answers the gateways of the deployments it took. */
export type ClaimStep = (room: NonNullable<ClaimOptions['perGroup']>, limit: number) => Promise<readonly { gatewayId: string }[]>;

export class GatewayClaims {
  /** The gateway of each deployment running here. */
  private readonly gatewayOf = new Map<string, string>();
  /** Deployments running here, by gateway. */
  private readonly running = new Map<string, number>();
  /** Gateways where the last claim found less than it had room for: nothing more to claim there until a keeper's pass finds some. */
  private readonly drained = new Set<string>();
  private pass: Promise<number> | undefined;
  private again = false;
  private soon: ReturnType<typeof setTimeout> | undefined;
  private stopped = false;

  constructor(
    private readonly step: ClaimStep,
    /** Transfers at once per gateway. */
    private readonly slots: number,
    /** Rows one claim statement takes at most. */
    private readonly limit: number,
    /** Told when a claim started by an end here fails (the keeper's next pass tries again). */
    private readonly onError: (err: unknown) => void,
  ) {}

  /** Deployments held at most per gateway: the slots, and as many again waiting for them. */
  get most(): number {
    return 2 * this.slots;
  }

  /** Notes a deployment that runs here now, at `gatewayId` (undefined: not known yet, not counted). */
  started(id: string, gatewayId: string | undefined): void {
    if (gatewayId === undefined || this.gatewayOf.has(id)) return;
    this.gatewayOf.set(id, gatewayId);
    this.running.set(gatewayId, (this.running.get(gatewayId) ?? 0) + 1);
  }

  /** Notes that a deployment no longer runs here (finished, or taken over); claims its gateway's next ones soon when there is room and may be more. */
  ended(id: string): void {
    const gatewayId = this.gatewayOf.get(id);
    if (gatewayId === undefined) return;
    this.gatewayOf.delete(id);
    const left = (this.running.get(gatewayId) ?? 1) - 1;
    if (left > 0) this.running.set(gatewayId, left);
    else this.running.delete(gatewayId);
    if (left <= this.slots && !this.drained.has(gatewayId)) this.claimSoon();
  }

  private claimSoon(): void {
    if (this.soon || this.stopped) return;
    this.soon = setTimeout(() => {
      this.soon = undefined;
      this.claim().catch(this.onError);
    }, CLAIM_SOON_MS);
    this.soon.unref();
  }

  /** Claims what there is room for at each gateway, in as many statements as the limit needs; answers how many it took. One claim at a time: one asked for meanwhile runs after. */
  claim(): Promise<number> {
    if (this.pass) {
      this.again = true;
      return this.pass;
    }
    const pass = this.claimRounds().finally(() => {
      this.pass = undefined;
      if (this.again && !this.stopped) {
        this.again = false;
        this.claim().catch(this.onError);
      }
    });
    this.pass = pass;
    return pass;
  }

  private async claimRounds(): Promise<number> {
    let total = 0;
    while (!this.stopped) {
      const held = new Map(this.running);
      const taken = await this.step({ column: 'gateway_id', most: this.most, held }, this.limit);
      total += taken.length;
      const byGateway = new Map<string, number>();
      for (const t of taken) byGateway.set(t.gatewayId, (byGateway.get(t.gatewayId) ?? 0) + 1);
      // Cut short by the limit: more may be left anywhere.
      if (taken.length >= this.limit) {
        this.drained.clear();
        continue;
      }
      for (const gatewayId of new Set([...held.keys(), ...byGateway.keys()])) {
        const room = this.most - (held.get(gatewayId) ?? 0);
        if (room <= 0) continue;
        if ((byGateway.get(gatewayId) ?? 0) < room) this.drained.add(gatewayId);
        else this.drained.delete(gatewayId);
      }
      return total;
    }
    return total;
  }

  /** Claims nothing more; waits for the claim under way. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.soon) clearTimeout(this.soon);
    this.soon = undefined;
    await this.pass?.catch(() => undefined);
  }
}

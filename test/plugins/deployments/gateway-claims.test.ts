/**
 * What an instance claims per gateway (plugins/deployments/gateway-claims.ts):
 * its slots and as many again, less what it runs there; again as soon as what
 * it runs at a gateway falls to its slots, unless its last claim found nothing
 * more there; one claim at a time. The claim statement itself is checked on
 * both engines in store-cases.ts.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { ClaimOptions } from '../../../plugins/deployments/lease.js';
import { CLAIM_SOON_MS, GatewayClaims } from '../../../plugins/deployments/gateway-claims.js';

type Room = NonNullable<ClaimOptions['perGroup']>;

/** A queue of unclaimed deployments per gateway that answers claims as the statement would. */
function claimsOver(queues: Record<string, number>, slots = 2) {
  const asked: Record<string, number>[] = [];
  let next = 0;
  // Called only once `claims` is made.
  const step = async (room: Room, limit: number) => {
    asked.push(Object.fromEntries(room.held));
    const taken: { gatewayId: string }[] = [];
    for (const [gatewayId, left] of Object.entries(queues)) {
      const n = Math.min(left, room.most - (room.held.get(gatewayId) ?? 0), limit - taken.length);
      for (let i = 0; i < n; i++) {
        taken.push({ gatewayId });
        claims.started(`dep_${next++}`, gatewayId);
      }
      queues[gatewayId] = left - Math.max(0, n);
    }
    return taken;
  };
  const claims: GatewayClaims = new GatewayClaims(step, slots, 100, (err) => {
    throw err;
  });
  return { claims, asked };
}

describe('gateway claims', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('claims per gateway its slots and as many again, and leaves the rest', async () => {
    const queues = { gw_1: 10, gw_2: 3 };
    const { claims } = claimsOver(queues);
    expect(await claims.claim()).toBe(4 + 3);
    expect(queues).toEqual({ gw_1: 6, gw_2: 0 });
    await claims.stop();
  });

  it('claims again soon after what it runs at a gateway falls to its slots, and not at a gateway where its last claim found nothing more', async () => {
    vi.useFakeTimers();
    const queues = { gw_1: 10, gw_2: 3 };
    const { claims, asked } = claimsOver(queues);
    await claims.claim();
    // dep_0..dep_3 at gw_1 (4 held), dep_4..dep_6 at gw_2 (3 held, nothing more there).
    claims.ended('dep_0');
    await vi.advanceTimersByTimeAsync(CLAIM_SOON_MS * 2);
    // Three left at gw_1, above its two slots: no claim yet.
    expect(asked).toHaveLength(1);
    claims.ended('dep_1');
    await vi.advanceTimersByTimeAsync(CLAIM_SOON_MS * 2);
    expect(asked).toHaveLength(2);
    expect(asked[1]).toEqual({ gw_1: 2, gw_2: 3 });
    expect(queues.gw_1).toBe(4);
    // gw_2 was drained by the first claim: its ends claim nothing.
    claims.ended('dep_4');
    claims.ended('dep_5');
    await vi.advanceTimersByTimeAsync(CLAIM_SOON_MS * 2);
    expect(asked).toHaveLength(2);
    await claims.stop();
  });

  it('runs one claim at a time: one asked for while another runs follows it', async () => {
    let release: () => void = () => undefined;
    let running = 0;
    let most = 0;
    const claims = new GatewayClaims(async () => {
      running++;
      most = Math.max(most, running);
      await new Promise<void>((r) => (release = r));
      running--;
      return [];
    }, 2, 100, (err) => {
      throw err;
    });
    const first = claims.claim();
    const second = claims.claim();
    release();
    await first;
    await second;
    await vi.waitFor(() => expect(running).toBe(1));
    release();
    await vi.waitFor(() => expect(running).toBe(0));
    expect(most).toBe(1);
    await claims.stop();
  });
});

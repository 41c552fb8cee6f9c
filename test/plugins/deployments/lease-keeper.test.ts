/**
 * The lease keeper's rhythm: it looks for ended leases every second (or
 * every third of the lease when that is shorter) and renews at least every
 * third of the lease, so a dead instance's work is taken over within the lease plus
 * one second of its death.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { keepLeases, leaseOf } from '../../../plugins/deployments/lease.js';

describe('the lease keeper', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  /** The passes over `ms` of time: for each, whether it renewed. */
  const passes = async (leaseMs: number, ms: number): Promise<boolean[]> => {
    const seen: boolean[] = [];
    const keeper = keepLeases(leaseOf({ holder: 'h', ms: leaseMs }), async (renew) => void seen.push(renew));
    await vi.advanceTimersByTimeAsync(ms);
    await keeper.stop();
    return seen;
  };

  it('claims every second and renews at the last pass before a third of a 9 s lease has gone by', async () => {
    expect(await passes(9_000, 9_000)).toEqual([false, true, false, true, false, true, false, true, false]);
  });

  it('with the default 30 s lease: 30 claims in 30 s, renewing every 9 s, never later than 10 s', async () => {
    const seen = await passes(30_000, 30_000);
    expect(seen).toHaveLength(30);
    expect(seen.flatMap((renew, i) => (renew ? [i + 1] : []))).toEqual([9, 18, 27]);
  });

  it('a lease shorter than 3 s: every pass claims and renews, every third of the lease', async () => {
    expect(await passes(900, 1_500)).toEqual([true, true, true, true, true]);
  });

  it('a pass still running when the next is due is not started twice', async () => {
    let running = 0;
    let most = 0;
    const keeper = keepLeases(leaseOf({ holder: 'h', ms: 3_000 }), async () => {
      most = Math.max(most, ++running);
      await new Promise((r) => setTimeout(r, 2_500));
      running--;
    });
    await vi.advanceTimersByTimeAsync(10_000);
    const stopping = keeper.stop();
    await vi.advanceTimersByTimeAsync(2_500);
    await stopping;
    expect(most).toBe(1);
  });
});

import { afterEach, describe, expect, it, vi } from 'vitest';
import { WriteRounds } from '../../core/store/write-rounds.js';

describe('write rounds', () => {
  it('stores what is queued in one turn as one round, what comes during a round in the next, one round at a time', async () => {
    const rounds: number[][] = [];
    let running = 0;
    let overlapped = false;
    let release: () => void = () => undefined;
    const w = new WriteRounds<number, number>(async (jobs) => {
      if (++running > 1) overlapped = true;
      rounds.push(jobs.map((j) => j.item));
      // The first round waits until the test has queued more.
      if (rounds.length === 1) await new Promise<void>((r) => (release = r));
      for (const j of jobs) j.resolve(j.item * 10);
      running--;
    });
    const first = [w.add(1), w.add(2), w.add(3)];
    await new Promise((r) => setImmediate(r));
    expect(rounds).toEqual([[1, 2, 3]]);
    const second = [w.add(4), w.add(5)];
    release();
    expect(await Promise.all([...first, ...second])).toEqual([10, 20, 30, 40, 50]);
    expect(rounds).toEqual([[1, 2, 3], [4, 5]]);
    expect(overlapped).toBe(false);
  });

  it('a round whose write throws rejects its items; the next round is still written', async () => {
    let calls = 0;
    const w = new WriteRounds<string>(async (jobs) => {
      if (++calls === 1) throw new Error('disk full');
      for (const j of jobs) j.resolve();
    });
    await expect(w.add('a')).rejects.toThrow('disk full');
    await expect(w.add('b')).resolves.toBeUndefined();
    expect(calls).toBe(2);
  });

  describe('with a gap', () => {
    afterEach(() => vi.useRealTimers());

    it('items that trickle in during the gap after a round started go together into the next, which starts once the gap has passed', async () => {
      vi.useFakeTimers();
      const rounds: [number, number[]][] = [];
      const w = new WriteRounds<number>(async (jobs) => {
        rounds.push([Date.now(), jobs.map((j) => j.item)]);
        for (const j of jobs) j.resolve();
      }, { gapMs: 100 });
      const start = Date.now();
      const all = [w.add(1)];
      await vi.advanceTimersByTimeAsync(0);
      for (let i = 2; i <= 5; i++) {
        await vi.advanceTimersByTimeAsync(20);
        all.push(w.add(i));
      }
      await vi.advanceTimersByTimeAsync(100);
      await Promise.all(all);
      expect(rounds.map(([at, items]) => [at - start, items])).toEqual([[0, [1]], [100, [2, 3, 4, 5]]]);
      // Long after the gap, an item goes at once.
      await vi.advanceTimersByTimeAsync(500);
      const late = w.add(6);
      await vi.advanceTimersByTimeAsync(0);
      await late;
      expect(rounds.at(-1)).toEqual([start + 680, [6]]);
    });
  });
});

/** core/runtime/semaphore.ts: at most `limit` jobs at once, the others in the order they came. */
import { describe, expect, it } from 'vitest';
import { Semaphore } from '../../core/runtime/semaphore.js';

/** A job that records how many ran at once and finishes when `release` is called. */
function gate() {
  let release!: () => void;
  const done = new Promise<void>((resolve) => (release = resolve));
  return { done, release };
}

describe('Semaphore', () => {
  it('runs at most limit jobs at once, and the waiting ones in arrival order', async () => {
    const semaphore = new Semaphore(2);
    let running = 0;
    let most = 0;
    const started: number[] = [];
    const gates = [gate(), gate(), gate(), gate()];
    const runs = gates.map((g, i) =>
      semaphore.run(async () => {
        started.push(i);
        most = Math.max(most, ++running);
        await g.done;
        running--;
        return i;
      }),
    );
    await Promise.resolve();
    expect(started).toEqual([0, 1]);
    gates[1]?.release();
    await runs[1];
    await new Promise((resolve) => setImmediate(resolve));
    expect(started).toEqual([0, 1, 2]);
    for (const g of gates) g.release();
    expect(await Promise.all(runs)).toEqual([0, 1, 2, 3]);
    expect(started).toEqual([0, 1, 2, 3]);
    expect(most).toBe(2);
  });

  it('a slot freed is handed to the job that waited, not taken by one that arrives at that moment', async () => {
    // The slot is freed and the waiting job woken in one step, but the woken job runs a few microtasks later;
    // a job arriving in between (tried at each microtask) must queue behind it instead of running beside it.
    for (let ticks = 0; ticks < 12; ticks++) {
      const semaphore = new Semaphore(1);
      let running = 0;
      let most = 0;
      const job = (g: { done: Promise<void> }) => async () => {
        most = Math.max(most, ++running);
        await g.done;
        running--;
      };
      const first = gate();
      const waiting = gate();
      const late = gate();
      const a = semaphore.run(job(first));
      const b = semaphore.run(job(waiting));
      first.release();
      for (let i = 0; i < ticks; i++) await Promise.resolve();
      const c = semaphore.run(job(late));
      await a;
      await new Promise((resolve) => setImmediate(resolve));
      waiting.release();
      late.release();
      await Promise.all([b, c]);
      expect(most, `a job arriving ${ticks} microtasks after the slot was freed`).toBe(1);
    }
  });

  it('a job that throws gives its slot back', async () => {
    const semaphore = new Semaphore(1);
    await expect(semaphore.run(() => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    expect(await semaphore.run(() => Promise.resolve('next'))).toBe('next');
  });
});

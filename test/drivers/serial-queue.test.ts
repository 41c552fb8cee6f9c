/**
 * core/runtime/semaphore.ts `SerialQueue`: the request queue of the Modbus connection,
 * the FOCAS session's handle and the OPC UA session. One job at a time, in
 * arrival order; a job that waited too long for its turn is not run.
 */
import { describe, expect, it } from 'vitest';
import { SerialQueue } from '../../core/runtime/semaphore.js';

/** A job that finishes when `release` is called. */
function gate() {
  let release!: () => void;
  const done = new Promise<void>((resolve) => (release = resolve));
  return { done, release };
}

const settled = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('SerialQueue', () => {
  it('runs one job at a time, in the order they came, and a failed job hands the turn on', async () => {
    const queue = new SerialQueue();
    let running = 0;
    let most = 0;
    const started: number[] = [];
    const gates = [gate(), gate(), gate()];
    const runs = gates.map((g, i) =>
      queue.run(async () => {
        started.push(i);
        most = Math.max(most, ++running);
        await g.done;
        running--;
        if (i === 0) throw new Error('first failed');
        return i;
      }),
    );
    await settled();
    expect(started).toEqual([0]);
    gates[2]?.release();
    gates[1]?.release();
    await settled();
    expect(started).toEqual([0]);
    gates[0]?.release();
    await expect(runs[0]).rejects.toThrow('first failed');
    expect(await runs[1]).toBe(1);
    expect(await runs[2]).toBe(2);
    expect(started).toEqual([0, 1, 2]);
    expect(most).toBe(1);
  });

  it('fails a job that waited longer than maxWaitMs without running it, with the error onWaitedTooLong gives', async () => {
    const clock = { now: 1_000 };
    const queue = new SerialQueue(() => clock.now);
    const slow = gate();
    const ran: string[] = [];
    const first = queue.run(async () => {
      ran.push('first');
      await slow.done;
      return 'first';
    });
    const late = queue.run(async () => {
      ran.push('late');
      return 'late';
    }, { maxWaitMs: 500, onWaitedTooLong: (waited) => new Error(`waited ${waited} ms`) });
    const plain = queue.run(async () => {
      ran.push('plain');
      return 'plain';
    }, { maxWaitMs: 500 });
    const unbounded = queue.run(async () => {
      ran.push('unbounded');
      return 'unbounded';
    });
    clock.now += 501;
    slow.release();
    expect(await first).toBe('first');
    await expect(late).rejects.toThrow('waited 501 ms');
    await expect(plain).rejects.toThrow(/waited 501 ms for its turn, longer than 500 ms/);
    expect(await unbounded).toBe('unbounded');
    expect(ran).toEqual(['first', 'unbounded']);
  });

  it('runs a job that waited exactly maxWaitMs', async () => {
    const clock = { now: 0 };
    const queue = new SerialQueue(() => clock.now);
    const slow = gate();
    const first = queue.run(() => slow.done);
    const next = queue.run(async () => 'ran', { maxWaitMs: 200 });
    clock.now = 200;
    slow.release();
    await first;
    expect(await next).toBe('ran');
  });
});

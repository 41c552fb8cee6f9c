/**
 * At most `limit` jobs at once; more wait their turn, first come first
 * served. The program service's deployment runner limits transfers per
 * gateway with it; `SerialQueue` below is the one-at-a-time form the drivers
 * use.
 *
 * A job that ends hands its slot straight to the first waiting job: the
 * count of running jobs does not drop in between, so a job that arrives
 * while the woken one has not run yet queues behind it instead of running
 * beside it.
 */
export class Semaphore {
  private active = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(private readonly limit: number) {}

  async run<T>(job: () => Promise<T>): Promise<T> {
    if (this.active < this.limit) this.active++;
    else await new Promise<void>((resolve) => this.waiting.push(resolve));
    try {
      return await job();
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.active--;
    }
  }
}

/** How long a job may wait for its turn in a `SerialQueue`, and what it fails with past that. */
export interface SerialRunOptions {
  /** A job that waited longer than this for its turn fails unsent; no bound when left out. */
  maxWaitMs?: number;
  /** The error such a job fails with, given how long it waited; a plain Error when left out. */
  onWaitedTooLong?: (waitedMs: number) => Error;
}

/**
 * One job at a time, the others in the order they came: the request queue of
 * a connection whose peer takes one request at a time (a Modbus link, a FOCAS
 * handle, an OPC UA session). A job that waited longer than its `maxWaitMs`
 * is not run at all, so a hung peer cannot pile up requests that nobody
 * waits for any more.
 */
export class SerialQueue {
  private readonly slot = new Semaphore(1);

  /** `now` is the clock the waits are measured on. */
  constructor(private readonly now: () => number = Date.now) {}

  run<T>(job: () => Promise<T>, options: SerialRunOptions = {}): Promise<T> {
    const { maxWaitMs, onWaitedTooLong } = options;
    if (maxWaitMs === undefined) return this.slot.run(job);
    const queuedAt = this.now();
    return this.slot.run(() => {
      const waited = this.now() - queuedAt;
      if (waited > maxWaitMs) {
        throw onWaitedTooLong?.(waited) ?? new Error(`the job waited ${waited} ms for its turn, longer than ${maxWaitMs} ms`);
      }
      return job();
    });
  }
}

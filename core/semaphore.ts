/**
 * At most `limit` jobs at once; more wait their turn, first come first
 * served. The program service's deployment runner limits transfers per
 * gateway with it.
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

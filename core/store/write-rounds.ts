/**
 * Writes that happen together, stored together. Items queued in one turn of
 * the event loop go into one round; items queued while a round is being
 * written go into the next, so under load each round takes everything that
 * arrived during the last one (a group commit), and rounds never overlap.
 * `write` settles each job of its round (or throws, which rejects those it
 * left unsettled).
 */
export interface RoundJob<T, R> {
  item: T;
  resolve(result: R): void;
  reject(err: unknown): void;
}

export interface WriteRoundsOptions {
  /**
   * Least time from the start of one round to the start of the next, ms (0
   * unless given): items that arrive meanwhile wait and go together, so
   * writes that trickle in from a process with little else to do are not
   * one transaction each. Each item waits at most this long more.
   */
  gapMs?: number;
}

export class WriteRounds<T, R = void> {
  private queued: RoundJob<T, R>[] = [];
  private scheduled = false;
  private running = false;
  /** performance.now() when the last round started. */
  private lastStart = -Infinity;

  constructor(
    private readonly write: (jobs: RoundJob<T, R>[]) => Promise<void>,
    private readonly options: WriteRoundsOptions = {},
  ) {}

  /** Queues `item` for the next round; resolves with what `write` answers for it. */
  add(item: T): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.queued.push({ item, resolve, reject });
      if (this.scheduled || this.running) return;
      this.schedule();
    });
  }

  /** Runs the next round after this turn of the event loop, or once the gap since the last round's start has passed. */
  private schedule(): void {
    this.scheduled = true;
    const wait = this.lastStart + (this.options.gapMs ?? 0) - performance.now();
    if (wait > 0) setTimeout(() => void this.run(), wait);
    else setImmediate(() => void this.run());
  }

  private async run(): Promise<void> {
    this.scheduled = false;
    this.running = true;
    try {
      while (this.queued.length > 0) {
        const jobs = this.queued.splice(0);
        this.lastStart = performance.now();
        await this.write(jobs).catch((err: unknown) => {
          for (const job of jobs) job.reject(err);
        });
        // What came during the round waits for the gap, if any is left.
        if (this.queued.length > 0 && this.lastStart + (this.options.gapMs ?? 0) > performance.now()) {
          this.running = false;
          this.schedule();
          return;
        }
      }
    } finally {
      if (!this.scheduled) this.running = false;
    }
  }
}

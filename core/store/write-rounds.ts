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

export class WriteRounds<T, R = void> {
  private queued: RoundJob<T, R>[] = [];
  private scheduled = false;
  private running = false;

  constructor(private readonly write: (jobs: RoundJob<T, R>[]) => Promise<void>) {}

  /** Queues `item` for the next round; resolves with what `write` answers for it. */
  add(item: T): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.queued.push({ item, resolve, reject });
      if (this.scheduled || this.running) return;
      this.scheduled = true;
      setImmediate(() => void this.run());
    });
  }

  private async run(): Promise<void> {
    this.scheduled = false;
    this.running = true;
    try {
      while (this.queued.length > 0) {
        const jobs = this.queued.splice(0);
        await this.write(jobs).catch((err: unknown) => {
          for (const job of jobs) job.reject(err);
        });
      }
    } finally {
      this.running = false;
    }
  }
}

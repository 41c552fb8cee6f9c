/**
 * Reads shared between streams that asked the same thing: ten clients
 * following /sample from the same place, with the same filter and format,
 * get one read of the history and one document, written and encoded once,
 * for as long as the live state has not moved on (the answer to a read up to
 * the same history row is the same whoever asks). A few are kept at a time;
 * beyond them a read is made for its stream alone.
 */
export class SharedReads<T> {
  private through = Number.NaN;
  private readonly kept = new Map<string, Promise<T>>();

  constructor(private readonly max: number) {}

  /** The answer for `key` up to the history row `through`: the one under way or made for it, else `read()`'s. */
  get(key: string, through: number, read: () => Promise<T>): Promise<T> {
    if (through !== this.through) {
      this.kept.clear();
      this.through = through;
    }
    const found = this.kept.get(key);
    if (found) return found;
    const made = read();
    if (this.kept.size < this.max) {
      this.kept.set(key, made);
      // A refusal (OUT_OF_RANGE, …) reaches every stream that shares it, and is not kept for later ones.
      made.catch(() => {
        if (this.kept.get(key) === made) this.kept.delete(key);
      });
    }
    return made;
  }
}

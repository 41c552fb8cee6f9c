/**
 * Buffers for large responses, used again once a response has been written:
 * an answer of some hundred kilobytes otherwise costs a fresh allocation per
 * call, which the C library maps and unmaps from the system each time (its
 * mmap threshold is 128 KiB), with the page faults that go with it. Answers
 * larger than a slab get a buffer of their own.
 */
export class ResponseBuffers {
  private readonly free: Buffer[] = [];

  constructor(
    /** Bytes per slab; a smaller need takes a slab only from `min` bytes on. */
    readonly slab = 512 * 1024,
    readonly min = 32 * 1024,
    /** Idle slabs kept. */
    readonly keep = 8,
  ) {}

  /** A buffer of at least `size` bytes, and whether it is a slab to give back. */
  take(size: number): { buffer: Buffer; pooled: boolean } {
    if (size < this.min || size > this.slab) return { buffer: Buffer.allocUnsafe(size), pooled: false };
    return { buffer: this.free.pop() ?? Buffer.allocUnsafeSlow(this.slab), pooled: true };
  }

  /** Gives back a slab that is no longer read. */
  give(buffer: Buffer): void {
    if (buffer.length === this.slab && this.free.length < this.keep) this.free.push(buffer);
  }
}

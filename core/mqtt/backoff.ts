/**
 * Exponential backoff with jitter, for a client that reconnects to a broker.
 * The wait after the n-th failure in a row is a random time between half
 * and all of min(cap, first × 2^(n−1)) ("equal jitter"): never less than
 * half a step, so a refused client does not hammer the broker, and clients
 * refused together (a broker restart, a password file reloaded) spread over
 * the other half instead of coming back in one wave. The cap bounds how long
 * a client may stay away after the cause is gone.
 */

/** The first wait after a failure. */
export const FIRST_RETRY_MS = 1000;
/** The longest wait between two attempts, unless configured. */
export const DEFAULT_RETRY_CAP_MS = 60_000;

export interface BackoffOptions {
  /** The longest wait. */
  capMs?: number;
  /** The first wait's step (the wait is between half of it and all of it). */
  firstMs?: number;
  /** A number in [0, 1); Math.random unless told (tests pass their own). */
  random?: () => number;
}

export class Backoff {
  readonly capMs: number;
  readonly firstMs: number;
  private readonly random: () => number;
  private failures = 0;

  constructor(options: BackoffOptions = {}) {
    this.capMs = options.capMs ?? DEFAULT_RETRY_CAP_MS;
    this.firstMs = Math.min(options.firstMs ?? FIRST_RETRY_MS, this.capMs);
    this.random = options.random ?? Math.random;
  }

  /** Failures in a row so far. */
  get failedAttempts(): number {
    return this.failures;
  }

  /** Counts one more failure; the wait before the next attempt, in ms. */
  next(): number {
    // 2^30 steps of a second are far past any cap; the exponent stops there so the number stays finite.
    const step = Math.min(this.capMs, this.firstMs * 2 ** Math.min(this.failures, 30));
    this.failures++;
    return Math.round(step / 2 + (this.random() * step) / 2);
  }

  /** A connection was accepted: the next failure waits the first step again. */
  reset(): void {
    this.failures = 0;
  }
}

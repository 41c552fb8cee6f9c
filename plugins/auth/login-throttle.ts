/**
 * Throttles repeated login failures per source IP and username: after
 * `freeAttempts` failures within `windowMs`, further attempts are refused for
 * a delay that doubles with each failure, up to `maxDelayMs`. A success
 * clears the record. Bounded: the oldest records are dropped past `maxKeys`.
 */
export interface ThrottleOptions {
  freeAttempts?: number;
  windowMs?: number;
  baseDelayMs?: number;
  maxDelayMs?: number;
  maxKeys?: number;
}

interface Record {
  failures: number;
  firstAt: number;
  blockedUntil: number;
}

export class LoginThrottle {
  private readonly records = new Map<string, Record>();
  private readonly freeAttempts: number;
  private readonly windowMs: number;
  private readonly baseDelayMs: number;
  private readonly maxDelayMs: number;
  private readonly maxKeys: number;

  constructor(options: ThrottleOptions = {}) {
    this.freeAttempts = options.freeAttempts ?? 5;
    this.windowMs = options.windowMs ?? 15 * 60_000;
    this.baseDelayMs = options.baseDelayMs ?? 30_000;
    this.maxDelayMs = options.maxDelayMs ?? 15 * 60_000;
    this.maxKeys = options.maxKeys ?? 10_000;
  }

  /** Seconds to wait before another attempt is accepted, or 0. */
  retryAfterSec(key: string, now: number): number {
    const r = this.records.get(key);
    if (!r || r.blockedUntil <= now) return 0;
    return Math.ceil((r.blockedUntil - now) / 1000);
  }

  fail(key: string, now: number): void {
    let r = this.records.get(key);
    if (!r || now - r.firstAt > this.windowMs) r = { failures: 0, firstAt: now, blockedUntil: 0 };
    r.failures++;
    if (r.failures >= this.freeAttempts) {
      const delay = Math.min(this.maxDelayMs, this.baseDelayMs * 2 ** (r.failures - this.freeAttempts));
      r.blockedUntil = now + delay;
    }
    this.records.delete(key);
    this.records.set(key, r);
    if (this.records.size > this.maxKeys) {
      const oldest = this.records.keys().next().value;
      if (oldest !== undefined) this.records.delete(oldest);
    }
  }

  succeed(key: string): void {
    this.records.delete(key);
  }
}

/**
 * Throttles repeated login failures per source IP and username: after
 * `freeAttempts` failures within `windowMs`, further attempts are refused for
 * a delay that doubles with each failure, up to `maxDelayMs`. A success
 * clears the record.
 *
 * The records are kept by a store: this process's memory (`LoginThrottle`
 * below) or a database shared by several instances (login-throttle-sql.ts);
 * both apply the same `ThrottlePolicy`. Either is bounded without ever
 * forgetting a lock (see docs/security.md, "Login throttling"): a record expires once its window has passed and it is
 * not locked; past `maxKeysPerSource` records for one source, or `maxKeys`
 * in all, the oldest unlocked records make room; when only locked records
 * are left, a new name is refused (from that source, or from everyone when
 * the whole table is locked) until the first of those locks ends. So
 * flooding failures under other names cannot clear a lock on a victim.
 */
export interface ThrottleOptions {
  freeAttempts?: number;
  windowMs?: number;
  baseDelayMs?: number;
  maxDelayMs?: number;
  /** Records kept in all. */
  maxKeys?: number;
  /** Records kept for one source IP, so one source cannot fill the table. */
  maxKeysPerSource?: number;
}

/** A source address and a user name are stored at most this long (longer ones are cut, so two such names share a count). */
export const MAX_THROTTLE_SOURCE = 64;
export const MAX_THROTTLE_NAME = 128;

/** The key a store keeps for `source` and `name`, bounded in length. */
export function throttleKey(source: string, name: string): { source: string; name: string } {
  return { source: source.slice(0, MAX_THROTTLE_SOURCE), name: name.slice(0, MAX_THROTTLE_NAME) };
}

/**
 * The throttle as its callers use it, whichever store keeps the counts: in
 * this process's memory (`LoginThrottle`, the gateway) or in a database that
 * several instances share (`SqlLoginThrottle`, login-throttle-sql.ts, the
 * program service). A password never reaches it.
 */
export interface Throttle {
  /** Seconds to wait before an attempt for `name` from `source` is accepted, or 0. */
  retryAfterSec(source: string, name: string, now: number): number | Promise<number>;
  /** Records a failed attempt. */
  fail(source: string, name: string, now: number): void | Promise<void>;
  /** Clears the record after a successful attempt. */
  succeed(source: string, name: string): void | Promise<void>;
}

/** What a store keeps per source and name. */
export interface FailureRecord {
  failures: number;
  firstAt: number;
  lastAt: number;
  blockedUntil: number;
}

/** The rules every store applies: free attempts, the doubling delay, when a record expires, and the bounds on records. */
export class ThrottlePolicy {
  readonly freeAttempts: number;
  readonly windowMs: number;
  readonly baseDelayMs: number;
  readonly maxDelayMs: number;
  readonly maxKeys: number;
  readonly maxKeysPerSource: number;

  constructor(options: ThrottleOptions = {}) {
    this.freeAttempts = options.freeAttempts ?? 5;
    this.windowMs = options.windowMs ?? 15 * 60_000;
    this.baseDelayMs = options.baseDelayMs ?? 30_000;
    this.maxDelayMs = options.maxDelayMs ?? 15 * 60_000;
    this.maxKeys = options.maxKeys ?? 10_000;
    this.maxKeysPerSource = options.maxKeysPerSource ?? 100;
  }

  /** When a record with `failures` failures, the last at `now`, is locked until; 0 while attempts are free. */
  blockedUntil(failures: number, now: number): number {
    if (failures < this.freeAttempts) return 0;
    return now + Math.min(this.maxDelayMs, this.baseDelayMs * 2 ** (failures - this.freeAttempts));
  }

  /** A record is forgotten once it is not locked and its window has passed. */
  expired(record: Pick<FailureRecord, 'firstAt' | 'blockedUntil'>, now: number): boolean {
    return record.blockedUntil <= now && now - record.firstAt > this.windowMs;
  }

  /** Seconds from `now` until `until`, rounded up; 0 when it has passed. */
  static secondsUntil(until: number, now: number): number {
    return until > now ? Math.ceil((until - now) / 1000) : 0;
  }
}

/** The memory store: records of this process only, bounded as the head of this file says. */
export class LoginThrottle implements Throttle {
  /** Source → username → record; each inner map is ordered by last failure, oldest first. */
  private readonly sources = new Map<string, Map<string, FailureRecord>>();
  private count = 0;
  private readonly policy: ThrottlePolicy;
  private readonly maxKeys: number;
  private readonly maxKeysPerSource: number;

  constructor(options: ThrottleOptions = {}) {
    this.policy = new ThrottlePolicy(options);
    this.maxKeys = this.policy.maxKeys;
    this.maxKeysPerSource = this.policy.maxKeysPerSource;
  }

  /** Records held, for tests and diagnostics. */
  get size(): number {
    return this.count;
  }

  /** Seconds to wait before an attempt for `name` from `source` is accepted, or 0. */
  retryAfterSec(rawSource: string, rawName: string, now: number): number {
    const { source, name } = throttleKey(rawSource, rawName);
    const record = this.current(source, name, now);
    const until = record ? record.blockedUntil : this.refusedUntil(source, now);
    return ThrottlePolicy.secondsUntil(until, now);
  }

  /** Records a failed attempt. */
  fail(rawSource: string, rawName: string, now: number): void {
    const { source, name } = throttleKey(rawSource, rawName);
    let record = this.current(source, name, now);
    if (!record) {
      if (!this.makeRoom(source, now)) return; // refused: retryAfterSec says so until a lock ends
      record = { failures: 0, firstAt: now, lastAt: now, blockedUntil: 0 };
      this.count++;
    }
    record.failures++;
    record.lastAt = now;
    if (record.failures >= this.policy.freeAttempts) record.blockedUntil = this.policy.blockedUntil(record.failures, now);
    let names = this.sources.get(source);
    if (!names) this.sources.set(source, (names = new Map()));
    names.delete(name);
    names.set(name, record);
  }

  /** Clears the record after a successful attempt. */
  succeed(rawSource: string, rawName: string): void {
    const { source, name } = throttleKey(rawSource, rawName);
    const names = this.sources.get(source);
    if (names?.delete(name)) {
      this.count--;
      if (names.size === 0) this.sources.delete(source);
    }
  }

  private expired(record: FailureRecord, now: number): boolean {
    return this.policy.expired(record, now);
  }

  /** The live record, dropping it when it has expired. */
  private current(source: string, name: string, now: number): FailureRecord | undefined {
    const record = this.sources.get(source)?.get(name);
    if (record && this.expired(record, now)) {
      this.succeed(source, name);
      return undefined;
    }
    return record;
  }

  /** When a new name from `source` would be refused for lack of room: the end of the first lock in the way, or 0. */
  private refusedUntil(source: string, now: number): number {
    const names = this.sources.get(source);
    if (names && names.size >= this.maxKeysPerSource && !this.hasUnlocked([names], now)) return this.firstLockEnd([names]);
    if (this.count >= this.maxKeys && !this.hasUnlocked(this.sources.values(), now)) return this.firstLockEnd(this.sources.values());
    return 0;
  }

  /** Frees a slot for a new record from `source`; false when only locked records stand in the way. */
  private makeRoom(source: string, now: number): boolean {
    const names = this.sources.get(source);
    if (names && names.size >= this.maxKeysPerSource && !this.evictOldestUnlocked(source, 1, now)) return false;
    // A full table is scanned once for a tenth of it, not once per new record.
    if (this.count >= this.maxKeys && !this.evictOldestUnlocked(undefined, Math.ceil(this.maxKeys / 10), now)) return false;
    return true;
  }

  /**
   * Drops every expired record in scope (one source, or all); if none had expired, the `batch` oldest
   * unlocked ones. False when every record in scope is locked.
   */
  private evictOldestUnlocked(onlySource: string | undefined, batch: number, now: number): boolean {
    const before = this.count;
    const unlocked: { source: string; name: string; lastAt: number }[] = [];
    for (const [source, names] of this.sources) {
      if (onlySource !== undefined && source !== onlySource) continue;
      for (const [name, record] of names) {
        if (this.expired(record, now)) this.succeed(source, name);
        else if (record.blockedUntil <= now) unlocked.push({ source, name, lastAt: record.lastAt });
      }
    }
    if (this.count < before) return true;
    if (unlocked.length === 0) return false;
    unlocked.sort((a, b) => a.lastAt - b.lastAt);
    for (const r of unlocked.slice(0, batch)) this.succeed(r.source, r.name);
    return true;
  }

  private hasUnlocked(groups: Iterable<Map<string, FailureRecord>>, now: number): boolean {
    for (const names of groups) for (const record of names.values()) if (record.blockedUntil <= now) return true;
    return false;
  }

  private firstLockEnd(groups: Iterable<Map<string, FailureRecord>>): number {
    let first = Infinity;
    for (const names of groups) for (const record of names.values()) first = Math.min(first, record.blockedUntil);
    return first === Infinity ? 0 : first;
  }
}

/**
 * Waiting for a role's database at start. A role whose database is on
 * PostgreSQL (the program service, the cloud's tokens) is started by
 * `npm start` while that server may not answer yet: after a power cut the
 * database host boots more slowly than the cell's PC, and a unit started by
 * systemd must not give up for it. So the first connection is tried again
 * with backoff (BACKOFF_FIRST_MS doubling up to BACKOFF_MAX_MS, with jitter
 * so several instances do not knock together), for as long as it takes:
 * the process never exits for it. Meanwhile the role's listener answers the
 * probes only (core/http/waiting-listener.ts, opened at the first failure):
 * `/healthz` 200, `/readyz` 503 with `database: unavailable` and the reason
 * in a few words; the log says the reason when it changes and, every
 * LOG_EVERY_MS while it lasts, that it still waits. A stop signal ends the
 * wait (StartCancelled). The plugins boot once the database answers: they
 * need it (migrations, the first administrator, stores), so none of the
 * role's interfaces is served before. docs/operations.md, "Waiting for the
 * database".
 */
import type { Logger } from 'pino';
import type { Readiness } from './health.js';
import { StartCancelled } from './start-cancelled.js';
import { unavailableReason } from '../store/database-unavailable.js';

export const BACKOFF_FIRST_MS = 500;
export const BACKOFF_MAX_MS = 15_000;
/** How often the log repeats that the role still waits, with the same reason. */
const LOG_EVERY_MS = 60_000;

/** Where and how to wait. */
export interface DatabaseWait {
  /** The readiness check that says why (`database`, `token-database`). */
  check: string;
  /** The server and database, without credentials, for the log. */
  target: string;
  readiness: Readiness;
  logger: Logger;
  /** Ends the wait: the start was stopped. */
  signal?: AbortSignal | undefined;
  /** Called once, at the first attempt that fails (the role opens its waiting listener); answers what the log should say of it. */
  onFirstFailure?: () => Promise<string | undefined>;
  /** Pauses between attempts; tests shorten them. */
  backoff?: { firstMs: number; maxMs: number };
}

/** The reason a failed attempt gives, in a few fixed words for /readyz. */
function reasonOf(err: unknown): string {
  return unavailableReason((err as { cause?: unknown }).cause ?? err) ?? unavailableReason(err) ?? 'failed (the log says why)';
}

/** Waits `ms`, or less when `signal` ends it; false when it was ended. */
function pause(ms: number, signal: AbortSignal | undefined): Promise<boolean> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve(false);
    const done = (ok: boolean) => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      resolve(ok);
    };
    const onAbort = () => done(false);
    const timer = setTimeout(() => done(true), ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** `attempt` raced with `signal`: its value, or StartCancelled (a value that comes later is given to `discard`). */
async function unlessStopped<T>(attempt: Promise<T>, signal: AbortSignal | undefined, discard: (value: T) => void): Promise<T> {
  if (!signal) return attempt;
  let onAbort: () => void = () => undefined;
  const stopped = new Promise<never>((_, reject) => {
    onAbort = () => reject(new StartCancelled('the wait for the database'));
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
  });
  try {
    return await Promise.race([attempt, stopped]);
  } catch (err) {
    if (err instanceof StartCancelled) void attempt.then(discard, () => undefined);
    throw err;
  } finally {
    signal.removeEventListener('abort', onAbort);
  }
}

/**
 * Opens the database with `open`, trying again after each failure until it
 * answers or `wait.signal` ends the start; `close` closes what an attempt
 * opened after the start was stopped.
 */
export async function openWhenAnswering<T>(open: () => Promise<T>, close: (db: T) => Promise<void>, wait: DatabaseWait): Promise<T> {
  const { firstMs, maxMs } = wait.backoff ?? { firstMs: BACKOFF_FIRST_MS, maxMs: BACKOFF_MAX_MS };
  const since = Date.now();
  let reason: string | undefined;
  let delay = firstMs;
  let loggedAt = 0;
  for (let attempt = 1; ; attempt++) {
    if (wait.signal?.aborted) throw new StartCancelled('the wait for the database');
    try {
      const db = await unlessStopped(open(), wait.signal, (late) => void close(late).catch(() => undefined));
      if (reason !== undefined) wait.logger.info({ check: wait.check, database: wait.target, attempts: attempt, waitedSec: Math.round((Date.now() - since) / 1000) }, 'the database answers; starting');
      return db;
    } catch (err) {
      if (err instanceof StartCancelled) throw err;
      const now = reasonOf(err);
      wait.readiness.add(wait.check, () => ({ unavailable: now }));
      if (reason === undefined) {
        const where = await wait.onFirstFailure?.();
        wait.logger.warn({ check: wait.check, database: wait.target, reason: now, err: (err as Error).message, ...(where ? { probes: where } : {}) }, 'the database does not answer; waiting for it, retrying with backoff (the process does not exit for it)');
        loggedAt = Date.now();
      } else if (now !== reason || Date.now() - loggedAt >= LOG_EVERY_MS) {
        wait.logger.warn({ check: wait.check, database: wait.target, reason: now, err: (err as Error).message, attempts: attempt, waitedSec: Math.round((Date.now() - since) / 1000) }, 'still waiting for the database');
        loggedAt = Date.now();
      }
      reason = now;
    }
    const jittered = Math.round(delay * (0.8 + Math.random() * 0.4));
    if (!(await pause(jittered, wait.signal))) throw new StartCancelled('the wait for the database');
    delay = Math.min(delay * 2, maxMs);
  }
}

/**
 * Runs history retention in the background every `history.retention.intervalSec`
 * and answers GET /api/history/retention with the policy and the last run.
 * Runs never overlap: the next one is scheduled when the previous finished.
 * Stopping clears the timer and ends a run in progress between two batches.
 */
import type { Logger } from 'pino';
import type { GatewayContext } from '../../core/roles/gateway/context.js';
import { DEFAULT_BATCH_ROWS, runRetention, type RetentionPolicy, type RetentionRun } from '../../core/roles/gateway/history/retention.js';
import { formatInZone } from '../../core/values/time.js';
import { HISTORY } from '../../core/roles/gateway/contract/history.js';
import type { RetentionConfig } from './config.js';

/** The first run waits this long (or the interval, if shorter), so that start-up is not slowed by deletions. */
export const FIRST_RUN_DELAY_MS = 60_000;

export interface RetentionStatus {
  policy: RetentionPolicy & { intervalSec: number };
  batchRows: number;
  running: boolean;
  nextRunAtMs: number | null;
  nextRunAt: string | null;
  lastRun: (RetentionRun & { startedAt: string; finishedAt: string; error: string | null }) | null;
}

export class RetentionScheduler {
  private timer: NodeJS.Timeout | undefined;
  private current: Promise<RetentionRun | null> | undefined;
  private stopped = false;
  private nextRunAtMs: number | null = null;
  private lastRun: RetentionStatus['lastRun'] = null;

  constructor(
    private readonly ctx: GatewayContext,
    /** `history.retention` of the configuration. */
    private readonly retention: RetentionConfig,
    private readonly logger: Logger,
    readonly batchRows = DEFAULT_BATCH_ROWS,
  ) {}

  private get intervalMs(): number {
    return this.retention.intervalSec * 1000;
  }

  start(): void {
    this.schedule(Math.min(this.intervalMs, FIRST_RUN_DELAY_MS));
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    this.nextRunAtMs = this.ctx.now() + delayMs;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.runNow().finally(() => this.schedule(this.intervalMs));
    }, delayMs);
    this.timer.unref();
  }

  /** Runs retention now, or joins the run in progress; resolves null when it failed (the failure is in the status). */
  runNow(): Promise<RetentionRun | null> {
    if (this.current) return this.current;
    const { retention } = this;
    const clock = this.ctx.now;
    const startedAtMs = clock();
    this.nextRunAtMs = null;
    const run = runRetention(this.ctx.db, retention, { now: startedAtMs, clock, batchRows: this.batchRows, shouldStop: () => this.stopped })
      .then((result) => {
        this.record(result, null);
        if (result.totalDeleted > 0) this.logger.info({ deleted: result.deleted, durationMs: result.durationMs }, 'history retention deleted rows');
        return result;
      })
      .catch((err: unknown) => {
        const finishedAtMs = clock();
        this.record({ startedAtMs, finishedAtMs, durationMs: finishedAtMs - startedAtMs, deleted: {}, totalDeleted: 0, batches: 0, interrupted: false }, err);
        this.logger.error({ err }, 'history retention failed');
        return null;
      })
      .finally(() => {
        this.current = undefined;
        // Whatever was deleted (a failed run may have committed batches), what was computed from it is stale.
        const last = this.lastRun;
        if (!last || last.error !== null || last.totalDeleted > 0) this.ctx.history.revisions.bumpAll();
      });
    this.current = run;
    return run;
  }

  private record(run: RetentionRun, err: unknown): void {
    const tz = this.ctx.timeZone;
    this.lastRun = {
      ...run,
      startedAt: formatInZone(run.startedAtMs, tz),
      finishedAt: formatInZone(run.finishedAtMs, tz),
      error: err === null ? null : err instanceof Error ? err.message : String(err),
    };
  }

  status(): RetentionStatus {
    const { intervalSec, default: byDefault, classes } = this.retention;
    return {
      policy: { intervalSec, default: byDefault, classes },
      batchRows: this.batchRows,
      running: this.current !== undefined,
      nextRunAtMs: this.nextRunAtMs,
      nextRunAt: this.nextRunAtMs === null ? null : formatInZone(this.nextRunAtMs, this.ctx.timeZone),
      lastRun: this.lastRun,
    };
  }

  /** Clears the timer and waits for a run in progress, which ends at its next batch boundary. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.nextRunAtMs = null;
    await this.current;
  }
}

export function defineRetentionInterface(ctx: GatewayContext, scheduler: RetentionScheduler): void {
  ctx.interfaces.implement(HISTORY.retention, {
    handler: () => scheduler.status(),
  });
}

/**
 * How a long-running command (`npm start`, `npm run sim`) stops on SIGINT or
 * SIGTERM. One Ctrl-C in a terminal reaches the process several times: the
 * terminal signals the whole foreground process group, and npm, cross-env and
 * tsx each forward their copy as well (three copies within ~50 ms under
 * `npm start`). So copies that arrive close together count as one press; only
 * a press well after the first, or a third press, forces the exit. The clean
 * stop itself has a deadline, after which the process exits non-zero naming
 * what did not stop.
 */

/** One thing to stop, named for the messages. */
export interface StopPart {
  name: string;
  stop(): Promise<void>;
  /** Extra state for the "did not stop" message (e.g. rows still pending). */
  detail?(): string;
}

/** What the stop needs from the process; tests pass a fake clock. */
export interface StopProcess {
  now(): number;
  setTimer(run: () => void, ms: number): { cancel(): void };
  exit(code: number): void;
  /** A line for the operator (stderr). */
  warn(line: string): void;
}

export interface StopOnSignalsOptions {
  /**
   * What to stop, or a function that says it when a stop begins: `npm start`
   * listens for signals before its roles start, so its parts are the start
   * under way until the roles run, then the roles.
   */
  parts: readonly StopPart[] | (() => readonly StopPart[]);
  /**
   * Stop the parts one after another in the order given (each once the one before
   * finished or failed), e.g. the program service before the gateway; by
   * default they stop all at once.
   */
  inOrder?: boolean;
  /** Called once everything stopped, before exit(0) (e.g. to log "stopped cleanly"). */
  onStopped?: () => void;
  /** Signals closer than this to the previous one are copies of the same press. */
  burstMs?: number;
  /** A new press later than this after the first forces the exit. */
  forceAfterMs?: number;
  /** The clean stop must finish within this, or the process exits 1. */
  deadlineMs?: number;
}

export const DEFAULT_BURST_MS = 500;
export const DEFAULT_FORCE_AFTER_MS = 2000;

/** The real process: wall clock, unref'd timers, process.exit, stderr. */
export const REAL_PROCESS: StopProcess = {
  now: () => Date.now(),
  setTimer(run, ms) {
    const timer = setTimeout(run, ms);
    timer.unref();
    return { cancel: () => clearTimeout(timer) };
  },
  exit: (code) => process.exit(code),
  warn: (line) => void process.stderr.write(`${line}\n`),
};

/** Turns a stream of stop signals into one clean stop, a forced exit, or a deadline exit. */
export class StopOnSignals {
  private readonly burstMs: number;
  private readonly forceAfterMs: number;
  private readonly deadlineMs: number;
  private readonly stopped = new Set<string>();
  private firstAt: number | undefined;
  private lastSignalAt = 0;
  private presses = 0;
  private exited = false;
  private deadline: { cancel(): void } | undefined;
  /** The parts as they were when the stop began. */
  private stopping: readonly StopPart[] | undefined;

  constructor(
    private readonly options: StopOnSignalsOptions,
    private readonly proc: StopProcess = REAL_PROCESS,
  ) {
    this.burstMs = options.burstMs ?? DEFAULT_BURST_MS;
    this.forceAfterMs = options.forceAfterMs ?? DEFAULT_FORCE_AFTER_MS;
    this.deadlineMs = options.deadlineMs ?? 15_000;
  }

  /** The parts being stopped, or as they are now before a stop began. */
  private parts(): readonly StopPart[] {
    if (this.stopping) return this.stopping;
    const { parts } = this.options;
    return typeof parts === 'function' ? parts() : parts;
  }

  /** Names (with detail) of the parts that have not finished stopping. */
  notStopped(): string[] {
    return this.parts()
      .filter((p) => !this.stopped.has(p.name))
      .map((p) => {
        const detail = p.detail?.();
        return detail ? `${p.name} (${detail})` : p.name;
      });
  }

  /** Handles one delivery of `signal`. */
  receive(signal: string): void {
    if (this.exited) return;
    const now = this.proc.now();
    if (this.firstAt === undefined) {
      this.firstAt = now;
      this.lastSignalAt = now;
      this.presses = 1;
      this.begin();
      return;
    }
    const copy = now - this.lastSignalAt <= this.burstMs;
    this.lastSignalAt = now;
    if (copy) return;
    this.presses++;
    if (now - this.firstAt > this.forceAfterMs || this.presses >= 3) {
      this.finish(1, `${signal} again: exiting without a clean stop; not stopped: ${this.notStopped().join(', ') || 'nothing'}`);
      return;
    }
    this.proc.warn(`${signal} again: still stopping (${this.notStopped().join(', ')}); send it again to exit without a clean stop`);
  }

  /** Listens for SIGINT and SIGTERM on the real process; returns a function that stops listening. */
  install(signals: readonly NodeJS.Signals[] = ['SIGINT', 'SIGTERM']): () => void {
    const handler = (signal: NodeJS.Signals) => this.receive(signal);
    for (const s of signals) process.on(s, handler);
    return () => {
      for (const s of signals) process.off(s, handler);
    };
  }

  private begin(): void {
    this.deadline = this.proc.setTimer(() => {
      this.finish(1, `stop did not finish within ${this.deadlineMs / 1000} s; not stopped: ${this.notStopped().join(', ')}; exiting`);
    }, this.deadlineMs);
    const failures: string[] = [];
    const stopPart = (part: StopPart): Promise<void> =>
      part
        .stop()
        .then(
          () => void this.stopped.add(part.name),
          (err: unknown) => void failures.push(`${part.name}: ${err instanceof Error ? err.message : String(err)}`),
        );
    const parts = this.parts();
    this.stopping = parts;
    const all = this.options.inOrder
      ? parts.reduce<Promise<void>>((before, part) => before.then(() => (this.exited ? undefined : stopPart(part))), Promise.resolve())
      : Promise.all(parts.map(stopPart));
    void all.then(() => {
      if (this.exited) return;
      if (failures.length) {
        this.finish(1, `stop failed: ${failures.join('; ')}`);
        return;
      }
      this.options.onStopped?.();
      this.finish(0);
    });
  }

  private finish(code: number, message?: string): void {
    if (this.exited) return;
    this.exited = true;
    this.deadline?.cancel();
    if (message) this.proc.warn(message);
    this.proc.exit(code);
  }
}

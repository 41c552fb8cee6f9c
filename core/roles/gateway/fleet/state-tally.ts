/**
 * Time spent in each derived state and parts made since local midnight, kept
 * by each machine actor for its live OEE task. The analysis interfaces
 * recompute the same figures from history; this is the cheap running view.
 */
import { DERIVED_STATES, type DerivedStateName } from './derive-state.js';
import { startOfLocalDay } from '../../../values/time.js';

export interface OeeSample {
  /** Start of the period: local midnight, or when the gateway started watching if later. */
  since: number;
  plannedTimeSec: number;
  runningTimeSec: number;
  idealCycleTimeSec: number | null;
  totalCount: number;
  goodCount: number;
  availability: number | null;
  performance: number | null;
  quality: number | null;
  oee: number | null;
  stateTimeSec: Record<DerivedStateName, number>;
}

/** States that do not count as planned production time. */
const UNPLANNED: ReadonlySet<DerivedStateName> = new Set(['inactive', 'noData']);

/** The local midnight after `dayStart`: 30 h later always falls in the next day, even across DST (23 h or 25 h days). */
function nextMidnight(dayStart: number, timeZone: string): number {
  return startOfLocalDay(dayStart + 30 * 3_600_000, timeZone);
}

export class StateTally {
  private dayStart: number;
  /** Next local midnight; computing it is costly (Intl), so it is done once a day. */
  private nextDayStart: number;
  private since: number;
  private current: DerivedStateName | undefined;
  private lastAt: number;
  private seconds = Object.fromEntries(DERIVED_STATES.map((s) => [s, 0])) as Record<DerivedStateName, number>;
  private parts = 0;

  constructor(
    now: number,
    private readonly timeZone: string,
  ) {
    this.dayStart = startOfLocalDay(now, timeZone);
    this.nextDayStart = nextMidnight(this.dayStart, timeZone);
    this.since = now;
    this.lastAt = now;
  }

  /** Accounts the time since the last observation to the previous state, then switches to `state`. */
  observe(state: DerivedStateName, now: number): void {
    this.rollDay(now);
    if (this.current) this.seconds[this.current] += Math.max(0, now - this.lastAt) / 1000;
    this.current = state;
    this.lastAt = now;
  }

  addParts(n: number, now: number): void {
    this.rollDay(now);
    this.parts += n;
  }

  private rollDay(now: number): void {
    if (now < this.nextDayStart) return;
    const day = startOfLocalDay(now, this.timeZone);
    this.nextDayStart = nextMidnight(day, this.timeZone);
    if (this.current) this.seconds[this.current] += Math.max(0, day - this.lastAt) / 1000;
    this.dayStart = day;
    this.since = day;
    this.lastAt = Math.max(this.lastAt, day);
    this.seconds = Object.fromEntries(DERIVED_STATES.map((s) => [s, 0])) as Record<DerivedStateName, number>;
    this.parts = 0;
  }

  /** OEE = availability × performance × quality over today so far. */
  oee(now: number, idealCycleTimeSec: number | undefined): OeeSample {
    if (this.current) this.observe(this.current, now);
    const stateTimeSec = { ...this.seconds };
    const plannedTimeSec = DERIVED_STATES.filter((s) => !UNPLANNED.has(s)).reduce((t, s) => t + stateTimeSec[s], 0);
    const runningTimeSec = stateTimeSec.running;
    const availability = plannedTimeSec > 0 ? runningTimeSec / plannedTimeSec : null;
    const performance =
      idealCycleTimeSec !== undefined && runningTimeSec > 0 ? Math.min(1, (idealCycleTimeSec * this.parts) / runningTimeSec) : null;
    // No scrap signal exists yet, so every part counts as good.
    const quality = this.parts > 0 ? 1 : null;
    const oee = availability !== null && performance !== null && quality !== null ? availability * performance * quality : null;
    return {
      since: Math.max(this.since, this.dayStart),
      plannedTimeSec,
      runningTimeSec,
      idealCycleTimeSec: idealCycleTimeSec ?? null,
      totalCount: this.parts,
      goodCount: this.parts,
      availability,
      performance,
      quality,
      oee,
      stateTimeSec,
    };
  }
}

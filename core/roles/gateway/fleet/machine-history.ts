/**
 * Turns one machine's samples into history rows: CNCStatus on change,
 * Motion when the axis positions, spindle or tool the status sample read changed,
 * AlarmLog for every alarm start and end, AlarmHistory for every finished
 * alarm, Count for every part-counter increase, State for every derived-state
 * change, and a periodic Heartbeat.
 */
import type { ActiveAlarm, CncStatus, PartCount } from '../../../driver-seam/driver.js';
import type { HistoryRow } from '../history/writer.js';
import type { DerivedState } from './derive-state.js';
import { motionChanged, type MotionSample } from './motion.js';
import type { StatusSample } from './task-samplers.js';

/** Where rows go; the HistoryWriter in production. */
export interface HistorySink {
  push(row: HistoryRow): number;
}

/** Every class a machine actor writes; the history interfaces accept these even before the first row. */
export const HISTORY_CLASSES = ['CNCStatus', 'Motion', 'AlarmLog', 'AlarmHistory', 'Count', 'State', 'Heartbeat'] as const;
export type HistoryClass = (typeof HISTORY_CLASSES)[number];

const STATUS_KEYS = ['cncStatus', 'adjustedStatus', 'alarmStatus', 'alarmLevel', 'mode', 'programStatus', 'emergency', 'program'] as const;

function statusChanged(a: CncStatus | undefined, b: CncStatus): boolean {
  if (!a) return true;
  return STATUS_KEYS.some((k) => a[k] !== b[k]);
}

const alarmKey = (a: ActiveAlarm) => `${a.code}\u0000${a.message}`;

export class MachineHistory {
  private lastStatus: CncStatus | undefined;
  /** The last Motion row written, and when. */
  private lastMotion: MotionSample | undefined;
  private lastMotionAt = -Infinity;
  private activeAlarms = new Map<string, ActiveAlarm>();
  private lastPartsTotal: number | undefined;
  private lastState: string | undefined;

  constructor(
    private readonly machineID: string,
    private readonly sink: HistorySink,
    /** The least time between two Motion rows (history.motion.minIntervalMs): a change within it is recorded when it has passed, if the reading still differs from the last row. */
    private readonly motionMinIntervalMs = 0,
  ) {}

  get hasActiveAlarms(): boolean {
    return this.activeAlarms.size > 0;
  }

  private write(cls: HistoryClass, ts: number, data: unknown): void {
    this.sink.push({ machineID: this.machineID, cls, ts, data });
  }

  onStatus(sample: StatusSample, now: number): void {
    if (statusChanged(this.lastStatus, sample.status)) this.write('CNCStatus', now, sample.status);
    this.lastStatus = sample.status;
    if (sample.motion && now - this.lastMotionAt >= this.motionMinIntervalMs && motionChanged(this.lastMotion, sample.motion)) {
      this.write('Motion', now, sample.motion);
      this.lastMotion = sample.motion;
      this.lastMotionAt = now;
    }
    const seen = new Map(sample.alarms.map((a) => [alarmKey(a), a]));
    for (const [key, alarm] of seen) {
      if (this.activeAlarms.has(key)) continue;
      this.activeAlarms.set(key, alarm);
      this.write('AlarmLog', now, { event: 'start', code: alarm.code, message: alarm.message, level: alarm.level, since: alarm.since });
    }
    for (const [key, alarm] of this.activeAlarms) {
      if (seen.has(key)) continue;
      this.activeAlarms.delete(key);
      this.endAlarm(alarm, now);
    }
  }

  private endAlarm(alarm: ActiveAlarm, now: number): void {
    const base = { code: alarm.code, message: alarm.message, level: alarm.level };
    this.write('AlarmLog', now, { event: 'end', ...base, since: alarm.since });
    this.write('AlarmHistory', now, { ...base, start: alarm.since, end: now, durationSec: Math.max(0, now - alarm.since) / 1000 });
  }

  /** Records a Count row when the total counter rose; returns the number of new parts. */
  onCount(count: PartCount, now: number): number {
    const previous = this.lastPartsTotal;
    this.lastPartsTotal = count.partsTotal;
    if (previous === undefined || count.partsTotal <= previous) return 0;
    const delta = count.partsTotal - previous;
    this.write('Count', now, {
      delta,
      partCount: count.partCount,
      partsTotal: count.partsTotal,
      lastCycleTime: count.lastCycleTime ?? null,
      program: count.program ?? null,
    });
    return delta;
  }

  /** Records a State row when the derived state changed. */
  onDerived(derived: DerivedState, connection: string, now: number): void {
    if (derived.state === this.lastState) return;
    this.lastState = derived.state;
    this.write('State', now, { state: derived.state, reason: derived.reason, connection });
  }

  heartbeat(derived: DerivedState, connection: string, now: number): void {
    this.write('Heartbeat', now, { state: derived.state, connection, statusStale: derived.statusStale });
  }
}

/**
 * Alarm occurrences clipped to a window and its sub-windows. An occurrence is
 * counted once, in the sub-window where it starts, or in the first one when it
 * was already active at the window start; its duration is split over every
 * sub-window it overlaps. Durations are the part inside the analysed range.
 */
import type { AlarmRecord, TimeSpan } from './model.js';
import { spanIndex } from './sub-windows.js';

/** The part of one alarm occurrence inside one sub-window. */
export interface AlarmPiece {
  code: string;
  message: string;
  level: string;
  durationMs: number;
  /** When the occurrence started (clipped to its end), unix ms; tells whether it was carried into a sub-window. */
  startMs: number;
  /** This sub-window counts the occurrence. */
  counted: boolean;
}

const alarmKey = (a: { code: string; message: string }) => `${a.code}\u0000${a.message}`;

/**
 * When an occurrence ends: its recorded end; for one without an end, now if
 * the machine still shows it, else the start of the first gateway gap after it
 * was logged (the gateway lost sight of it), else the end of the range.
 */
export function alarmEnd(alarm: AlarmRecord, range: TimeSpan, gaps: readonly TimeSpan[]): number {
  if (alarm.endMs !== null) return alarm.endMs;
  if (alarm.activeNow) return range.endMs;
  const gap = gaps.find((g) => g.startMs >= alarm.loggedMs);
  return gap ? gap.startMs : range.endMs;
}

/**
 * One record per occurrence (code, message, start): the gateway logs an alarm
 * again after a restart, and an ended alarm has both a start log and an end
 * record. A recorded end wins; otherwise the occurrence is active now if any
 * of its records says so, and was last seen at its latest log.
 */
export function uniqueAlarms(alarms: readonly AlarmRecord[]): AlarmRecord[] {
  // Ended alarms are unique already (one AlarmHistory row each); only records without an end need matching.
  const ended = alarms.filter((a) => a.endMs !== null);
  if (ended.length === alarms.length) return ended;
  const endedByStart = new Map<number, AlarmRecord[]>();
  for (const a of ended) endedByStart.set(a.startMs, [...(endedByStart.get(a.startMs) ?? []), a]);
  const open = new Map<string, AlarmRecord>();
  for (const a of alarms) {
    if (a.endMs !== null || endedByStart.get(a.startMs)?.some((e) => e.code === a.code && e.message === a.message)) continue;
    const key = `${alarmKey(a)}\u0000${a.startMs}`;
    const seen = open.get(key);
    open.set(key, seen ? { ...seen, activeNow: seen.activeNow || a.activeNow, loggedMs: Math.max(seen.loggedMs, a.loggedMs) } : a);
  }
  return [...ended, ...open.values()];
}

/** Every piece of every occurrence overlapping `range`, with the index of its sub-window. */
export function clipAlarms(
  alarms: readonly AlarmRecord[],
  subWindows: readonly TimeSpan[],
  range: TimeSpan,
  gaps: readonly TimeSpan[],
): { index: number; piece: AlarmPiece }[] {
  const out: { index: number; piece: AlarmPiece }[] = [];
  for (const alarm of uniqueAlarms(alarms)) {
    const end = alarmEnd(alarm, range, gaps);
    const start = Math.min(alarm.startMs, end);
    // Inside the range: it starts there, or it started before and was still active at the range start.
    if (start >= range.endMs || (start < range.startMs && end <= range.startMs)) continue;
    const clippedStart = Math.max(start, range.startMs);
    const clippedEnd = Math.min(end, range.endMs);
    const { code, message, level } = alarm;
    let k = spanIndex(subWindows, clippedStart);
    const first = k;
    do {
      const span = subWindows[k]!;
      const durationMs = Math.max(0, Math.min(clippedEnd, span.endMs) - Math.max(clippedStart, span.startMs));
      out.push({ index: k, piece: { code, message, level, durationMs, startMs: start, counted: k === first } });
      k++;
    } while (k < subWindows.length && subWindows[k]!.startMs < clippedEnd);
  }
  return out;
}

export interface AlarmSummary {
  code: string;
  message: string;
  level: string;
  count: number;
  durationSec: number;
}

/** Occurrences and duration per alarm (code and message). */
export function summariseAlarms(pieces: readonly AlarmPiece[]): AlarmSummary[] {
  const byKey = new Map<string, { code: string; message: string; level: string; count: number; durationMs: number }>();
  for (const p of pieces) {
    const key = alarmKey(p);
    const entry = byKey.get(key) ?? { code: p.code, message: p.message, level: p.level, count: 0, durationMs: 0 };
    if (p.counted) entry.count++;
    entry.durationMs += p.durationMs;
    byKey.set(key, entry);
  }
  return [...byKey.values()].map(({ durationMs, ...rest }) => ({ ...rest, durationSec: durationMs / 1000 }));
}

/**
 * Time in the gateway's time zone. Every wall-clock computation goes through
 * here so that DST days (23 or 25 hours) come out right.
 */

/** One day of 24 hours, milliseconds (a calendar day in a time zone may be 23 or 25 hours: see below). */
export const DAY_MS = 86_400_000;

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(timeZone: string): Intl.DateTimeFormat {
  let f = formatters.get(timeZone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
    });
    formatters.set(timeZone, f);
  }
  return f;
}

/** The system time zone, used when the config leaves it empty. */
export function systemTimeZone(): string {
  return Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';
}

interface WallTime {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
}

/** The wall-clock fields of instant `ms` in `timeZone`. */
export function wallTime(ms: number, timeZone: string): WallTime {
  const parts: Record<string, number> = {};
  for (const p of formatter(timeZone).formatToParts(new Date(ms))) {
    if (p.type !== 'literal') parts[p.type] = Number(p.value);
  }
  return {
    year: parts.year ?? 1970,
    month: parts.month ?? 1,
    day: parts.day ?? 1,
    hour: parts.hour ?? 0,
    minute: parts.minute ?? 0,
    second: parts.second ?? 0,
  };
}

/** Offset of `timeZone` from UTC at instant `ms`, in milliseconds (east positive). */
export function offsetMs(ms: number, timeZone: string): number {
  const w = wallTime(ms, timeZone);
  const asUtc = Date.UTC(w.year, w.month - 1, w.day, w.hour, w.minute, w.second);
  return asUtc - Math.floor(ms / 1000) * 1000;
}

/**
 * The instant at which the wall clock in `timeZone` shows the given local time.
 * A time that occurs twice (DST fall-back) resolves to the earlier occurrence.
 * A time skipped by a DST gap is read with the offset in force before the gap,
 * so it lands as far after the gap's end as it was after its start (02:30 in a
 * 02:00→03:00 gap gives 03:30).
 */
export function zonedToInstant(w: WallTime, timeZone: string): number {
  const naive = Date.UTC(w.year, w.month - 1, w.day, w.hour, w.minute, w.second);
  // The offsets a day either side cover any one transition near this wall time;
  // guessing from the offset at `naive` itself fails when `naive` lies across the transition.
  const before = offsetMs(naive - DAY_MS, timeZone);
  const after = offsetMs(naive + DAY_MS, timeZone);
  const valid = [naive - before, naive - after].filter((t) => offsetMs(t, timeZone) === naive - t);
  return valid.length ? Math.min(...valid) : naive - before;
}

/** Local midnight (start of the day) containing instant `ms`. */
export function startOfLocalDay(ms: number, timeZone: string): number {
  const w = wallTime(ms, timeZone);
  return zonedToInstant({ year: w.year, month: w.month, day: w.day, hour: 0, minute: 0, second: 0 }, timeZone);
}

/** ISO-8601 text of `ms` in `timeZone`, with its offset, e.g. 2026-03-29T02:30:00+02:00. */
export function formatInZone(ms: number, timeZone: string): string {
  const offset = cachedOffsetMs(ms, timeZone);
  // The wall clock is UTC shifted by the offset; reading it with getUTC* avoids a second Intl call.
  const wall = new Date(Math.floor(ms / 1000) * 1000 + offset);
  const off = offset / 60_000;
  const sign = off >= 0 ? '+' : '-';
  const abs = Math.abs(off);
  const pad = (n: number, l = 2) => String(n).padStart(l, '0');
  return `${pad(wall.getUTCFullYear(), 4)}-${pad(wall.getUTCMonth() + 1)}-${pad(wall.getUTCDate())}T${pad(wall.getUTCHours())}:${pad(wall.getUTCMinutes())}:${pad(wall.getUTCSeconds())}${sign}${pad(Math.floor(abs / 60))}:${pad(abs % 60)}`;
}

/** Offsets by 15-minute slice: a history page formats thousands of times, and Intl is slow. */
const OFFSET_SLICE_MS = 15 * 60_000;
const offsetCache = new Map<string, number>();

/**
 * offsetMs, remembered per zone and 15-minute slice. A slice whose start and
 * end offsets differ holds a transition; it is never cached.
 */
function cachedOffsetMs(ms: number, timeZone: string): number {
  const slice = Math.floor(ms / OFFSET_SLICE_MS);
  const key = `${timeZone}|${slice}`;
  const hit = offsetCache.get(key);
  if (hit !== undefined) return hit;
  const atStart = offsetMs(slice * OFFSET_SLICE_MS, timeZone);
  const atEnd = offsetMs((slice + 1) * OFFSET_SLICE_MS - 1000, timeZone);
  if (atStart !== atEnd) return offsetMs(ms, timeZone);
  if (offsetCache.size >= 50_000) offsetCache.clear();
  offsetCache.set(key, atStart);
  return atStart;
}

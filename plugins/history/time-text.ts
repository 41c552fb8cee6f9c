/** ISO-8601 text of row times in the gateway zone, with milliseconds, e.g. `2026-03-29T14:30:00.250+02:00`. */
import { formatInZone } from '../../core/values/time.js';

const SLICE_MS = 15 * 60_000;
const pad2 = (n: number): string => (n < 10 ? `0${n}` : String(n));
const pad3 = (n: number): string => (n < 10 ? `00${n}` : n < 100 ? `0${n}` : String(n));

/** The full formatter, for times in a slice that holds an offset change or an hour boundary. */
function formatOne(ms: number, timeZone: string): string {
  const text = formatInZone(ms, timeZone);
  const millis = pad3(((ms % 1000) + 1000) % 1000);
  return `${text.slice(0, 19)}.${millis}${text.slice(19)}`;
}

/**
 * A formatter for one zone. Rows come in time order, so the date, hour and
 * offset are worked out once per 15-minute slice and each row only adds its
 * minutes, seconds and milliseconds.
 */
export function timeTextFormatter(timeZone: string): (ms: number) => string {
  let sliceStart = Number.NaN;
  let head = '';
  let tail = '';
  /** Wall-clock ms past the hour at the slice start. */
  let intoHourMs = 0;
  return (ms: number): string => {
    if (!(ms >= sliceStart && ms < sliceStart + SLICE_MS)) {
      const start = Math.floor(ms / SLICE_MS) * SLICE_MS;
      const first = formatInZone(start, timeZone);
      const last = formatInZone(start + SLICE_MS - 1000, timeZone);
      // Same hour and offset throughout the slice: the common case. Otherwise format this row in full.
      if (first.slice(0, 14) !== last.slice(0, 14) || first.slice(19) !== last.slice(19)) {
        sliceStart = Number.NaN;
        return formatOne(ms, timeZone);
      }
      sliceStart = start;
      head = first.slice(0, 14);
      tail = first.slice(19);
      intoHourMs = (Number(first.slice(14, 16)) * 60 + Number(first.slice(17, 19))) * 1000;
    }
    const t = intoHourMs + (ms - sliceStart);
    const minutes = Math.floor(t / 60_000);
    const seconds = Math.floor((t % 60_000) / 1000);
    return `${head}${pad2(minutes)}:${pad2(seconds)}.${pad3(t % 1000)}${tail}`;
  };
}

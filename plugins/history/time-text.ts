/**
 * ISO-8601 text of row times in the gateway zone, with milliseconds. A large
 * answer has hundreds of thousands of rows, and formatInZone asks Intl twice
 * per call; zone offsets change only on quarter hours, so the offset is looked
 * up once per UTC quarter hour and checked at both its ends.
 */
import { formatInZone, offsetMs } from '../../core/time.js';

const QUARTER_HOUR_MS = 900_000;

const pad = (n: number, width = 2): string => String(n).padStart(width, '0');

function offsetText(offset: number): string {
  const minutes = Math.abs(offset) / 60_000;
  return `${offset >= 0 ? '+' : '-'}${pad(Math.floor(minutes / 60))}:${pad(minutes % 60)}`;
}

/** Formats unix ms as e.g. `2026-03-29T14:30:00.250+02:00` in `timeZone`. */
export function timeTextFormatter(timeZone: string): (ms: number) => string {
  const offsets = new Map<number, number | null>();
  const quarterOffset = (quarter: number): number | null => {
    let offset = offsets.get(quarter);
    if (offset === undefined) {
      const start = quarter * QUARTER_HOUR_MS;
      const first = offsetMs(start, timeZone);
      // A change inside the quarter (only historical zones have such) falls back to the exact path.
      offset = first === offsetMs(start + QUARTER_HOUR_MS - 1000, timeZone) ? first : null;
      if (offsets.size > 10_000) offsets.clear();
      offsets.set(quarter, offset);
    }
    return offset;
  };
  return (ms: number): string => {
    const offset = quarterOffset(Math.floor(ms / QUARTER_HOUR_MS));
    const millis = pad(((ms % 1000) + 1000) % 1000, 3);
    if (offset === null) {
      const text = formatInZone(ms, timeZone);
      return `${text.slice(0, 19)}.${millis}${text.slice(19)}`;
    }
    const d = new Date(ms + offset);
    const date = `${pad(d.getUTCFullYear(), 4)}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}`;
    return `${date}T${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}.${millis}${offsetText(offset)}`;
  };
}

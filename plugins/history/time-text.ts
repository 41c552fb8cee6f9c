/** ISO-8601 text of row times in the gateway zone, with milliseconds, e.g. `2026-03-29T14:30:00.250+02:00`. */
import { formatInZone } from '../../core/time.js';

/** A formatter for one zone; formatInZone caches offsets, so this is cheap per row. */
export function timeTextFormatter(timeZone: string): (ms: number) => string {
  return (ms: number): string => {
    const text = formatInZone(ms, timeZone);
    const millis = String(((ms % 1000) + 1000) % 1000).padStart(3, '0');
    return `${text.slice(0, 19)}.${millis}${text.slice(19)}`;
  };
}

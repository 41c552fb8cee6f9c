/**
 * Splitting a window into sub-windows of `interval` seconds, counted from the
 * window start; the last one ends at the window end and may be shorter.
 */
import { GatewayError } from '../../../core/interfaces/errors.js';
import { formatInZone } from '../../../core/values/time.js';
import type { TimeWindow } from '../../../core/interfaces/time-params.js';
import { MAX_SUB_WINDOWS, type TimeSpan } from './model.js';

/** The sub-windows of `window` (unix ms spans); without an interval, the window itself. */
export function splitWindow(window: TimeWindow, intervalSec?: number): TimeSpan[] {
  const startMs = window.startUnix * 1000;
  const endMs = window.endUnix * 1000;
  if (intervalSec === undefined) return [{ startMs, endMs }];
  const windowSec = window.endUnix - window.startUnix;
  const count = Math.ceil(windowSec / intervalSec);
  if (count > MAX_SUB_WINDOWS) {
    const smallest = Math.ceil(windowSec / MAX_SUB_WINDOWS);
    throw new GatewayError(
      'INVALID_PARAMETER',
      `interval: found ${intervalSec} (seconds), which splits the ${windowSec}-second window into ${count} sub-windows; at most ${MAX_SUB_WINDOWS} are allowed, so use an interval of at least ${smallest} seconds or a shorter window`,
    );
  }
  const spans: TimeSpan[] = [];
  for (let s = startMs; s < endMs; s += intervalSec * 1000) spans.push({ startMs: s, endMs: Math.min(endMs, s + intervalSec * 1000) });
  return spans;
}

/** The window object of one sub-window, in the zone of its parent window. */
export function subWindowObject(span: TimeSpan, timeZone: string): TimeWindow {
  const startUnix = span.startMs / 1000;
  const endUnix = span.endMs / 1000;
  return { startUnix, endUnix, start: formatInZone(span.startMs, timeZone), end: formatInZone(span.endMs, timeZone), timeZone };
}

/** Index of the span containing `t`, or -1; `spans` are ascending and contiguous. */
export function spanIndex(spans: readonly TimeSpan[], t: number): number {
  let lo = 0;
  let hi = spans.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const span = spans[mid]!;
    if (t < span.startMs) hi = mid - 1;
    else if (t >= span.endMs) lo = mid + 1;
    else return mid;
  }
  return -1;
}

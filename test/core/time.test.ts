import { describe, expect, it } from 'vitest';
import { formatInZone } from '../../core/values/time.js';

/** One Intl formatter per zone for the reference (making one costs far more than using it). */
const referenceFormatters = new Map<string, Intl.DateTimeFormat>();
const referenceFormatter = (timeZone: string) => {
  let f = referenceFormatters.get(timeZone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', { timeZone, hourCycle: 'h23', year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit', timeZoneName: 'longOffset' });
    referenceFormatters.set(timeZone, f);
  }
  return f;
};

/** The same text from Intl alone, computed independently of core/values/time.ts. */
function expected(ms: number, timeZone: string): string {
  const parts = Object.fromEntries(
    referenceFormatter(timeZone)
      .formatToParts(new Date(ms))
      .map((p) => [p.type, p.value]),
  );
  const offset = parts.timeZoneName === 'GMT' ? '+00:00' : (parts.timeZoneName as string).slice(3);
  return `${parts.year}-${parts.month}-${parts.day}T${parts.hour}:${parts.minute}:${parts.second}${offset}`;
}

describe('formatInZone', () => {
  it('GW-16 matches Intl at every instant, across DST changes and odd offsets, including repeated calls from the cache', () => {
    const zones = ['UTC', 'Europe/Berlin', 'America/New_York', 'Asia/Kolkata', 'Australia/Lord_Howe', 'Pacific/Chatham', 'America/St_Johns'];
    // Around the 2026 changes in Berlin (Mar 29, Oct 25), New York (Mar 8, Nov 1) and Lord Howe (Apr 5, Oct 4), second by second near them.
    const anchors = [Date.UTC(2026, 2, 29, 1), Date.UTC(2026, 9, 25, 1), Date.UTC(2026, 2, 8, 7), Date.UTC(2026, 10, 1, 6), Date.UTC(2026, 3, 4, 15), Date.UTC(2026, 9, 3, 15, 30)];
    let checked = 0;
    for (const zone of zones) {
      for (const anchor of anchors) {
        for (let d = -7200_000; d <= 7200_000; d += 37_000) {
          const ms = anchor + d;
          const want = expected(ms, zone);
          expect([zone, formatInZone(ms, zone)]).toEqual([zone, want]);
          // The second call is answered from the offset cache.
          expect(formatInZone(ms, zone)).toBe(want);
          checked++;
        }
      }
    }
    expect(checked).toBeGreaterThan(10_000);
  });
});

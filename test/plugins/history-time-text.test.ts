import { describe, expect, it } from 'vitest';
import { formatInZone } from '../../core/values/time.js';
import { timeTextFormatter } from '../../plugins/history/time-text.js';

/** The plain way: format the whole time, then splice in the milliseconds. */
function reference(ms: number, timeZone: string): string {
  const text = formatInZone(ms, timeZone);
  const millis = String(((ms % 1000) + 1000) % 1000).padStart(3, '0');
  return `${text.slice(0, 19)}.${millis}${text.slice(19)}`;
}

describe('history time text', () => {
  const zones = ['UTC', 'Europe/Berlin', 'America/New_York', 'Asia/Kathmandu', 'Australia/Lord_Howe', 'America/St_Johns'];
  const spans: [string, number, number, number][] = [
    ['spring DST week', Date.UTC(2026, 2, 27), Date.UTC(2026, 2, 31), 23_333],
    ['autumn DST fortnight', Date.UTC(2026, 9, 23), Date.UTC(2026, 10, 3), 39_991],
    ['local mean time in 1900', Date.UTC(1900, 0, 1), Date.UTC(1900, 0, 2), 29_999],
    ['around the epoch', -5_000, 5_000, 333],
  ];
  for (const zone of zones) {
    it(`matches the full formatter in ${zone} across DST changes, in both time orders`, () => {
      const format = timeTextFormatter(zone);
      const mismatches: string[] = [];
      for (const [, from, to, step] of spans) {
        for (let ms = from; ms < to; ms += step) if (format(ms) !== reference(ms, zone)) mismatches.push(`${ms}: ${format(ms)}`);
        for (let ms = to; ms > from; ms -= step) if (format(ms) !== reference(ms, zone)) mismatches.push(`${ms}: ${format(ms)}`);
      }
      expect(mismatches.slice(0, 5)).toEqual([]);
    });
  }

  it('writes milliseconds and the offset of the zone', () => {
    expect(timeTextFormatter('Europe/Berlin')(Date.UTC(2026, 2, 29, 12, 30, 0, 250))).toBe('2026-03-29T14:30:00.250+02:00');
    expect(timeTextFormatter('Asia/Kathmandu')(Date.UTC(2026, 0, 1, 0, 0, 5, 7))).toBe('2026-01-01T05:45:05.007+05:45');
  });
});

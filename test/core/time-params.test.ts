import { afterEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { GatewayError } from '../../core/interfaces/errors.js';
import { parseOrThrow } from '../../core/interfaces/schema-errors.js';
import {
  TIME_PARAM_FORMS,
  TIME_PARAM_SUMMARY,
  parseTimeParam,
  resolveWindow,
  timeParamSchema,
  windowMs,
} from '../../core/interfaces/time-params.js';

// Expectations come from Date.UTC and each zone's known offset, never from the code under test.
const MIN = 60_000;
const HOUR = 3_600_000;
const DAY = 86_400_000;
const utc = (y: number, mo: number, d: number, h = 0, mi = 0, s = 0) => Date.UTC(y, mo - 1, d, h, mi, s);

/** Every example the accepted-forms text must show. */
const EXAMPLES = [
  '1774740600', '1774740600000', '2026-03-29T14:30:00Z', '2026-03-29T14:30:00+02:00', '2026-03-29T14:30+0200',
  '2026-03-29T14:30', '2026-03-29T14:30:00', '2026-03-29 14:30', '2026-03-29', '-30m', '-24h', '-7d', '-2w',
  'now', 'today', 'yesterday',
];

function caught(run: () => unknown): GatewayError {
  try {
    run();
  } catch (err) {
    expect(err).toBeInstanceOf(GatewayError);
    return err as GatewayError;
  }
  throw new Error('expected a GatewayError');
}

/** Asserts INVALID_PARAMETER naming the field and the value found, listing every form, plus `more`. */
function expectInvalid(run: () => unknown, field: string, found: string, ...more: string[]): void {
  const err = caught(run);
  expect(err.errorName).toBe('INVALID_PARAMETER');
  expect(err.errorCode).toBe(2);
  expect(err.httpStatus).toBe(400);
  expect(err.message).toContain(`${field}: found ${found}`);
  for (const text of [...EXAMPLES, ...more]) expect(err.message).toContain(text);
}

const at = (timeZone: string, now: number) => (value: string | number) => parseTimeParam(value, { timeZone, now, field: 'start' });

// Mid-July: no zone below is near a DST change; Chatham is already on 16 July.
const NOW = utc(2026, 7, 15, 11, 30) + 250;
const ZONES: Array<[zone: string, offsetMin: number]> = [
  ['UTC', 0],
  ['Europe/Berlin', 120],
  ['America/New_York', -240],
  ['Asia/Kolkata', 330],
  ['Australia/Lord_Howe', 630],
  ['Pacific/Chatham', 765],
];

describe.each(ZONES)('time parameters in %s (UTC%+d min)', (zone, offsetMin) => {
  const off = offsetMin * MIN;
  const local = new Date(NOW + off);
  const today = Date.UTC(local.getUTCFullYear(), local.getUTCMonth(), local.getUTCDate()) - off;
  const parse = at(zone, NOW);

  it.each<[string | number, number]>([
    ['1774740600', 1774740600_000],
    [1774740600, 1774740600_000],
    ['1774740600.5', 1774740600_500],
    ['1774740600123', 1774740600123],
    [1774740600123, 1774740600123],
  ])('GW-41 unix %j is seconds, 13 digits milliseconds', (value, expected) => {
    expect(parse(value)).toBe(expected);
  });

  it.each<[string, number]>([
    ['2026-03-29T14:30:00Z', utc(2026, 3, 29, 14, 30)],
    ['2026-03-29t14:30z', utc(2026, 3, 29, 14, 30)],
    ['2026-03-29T14:30:00+02:00', utc(2026, 3, 29, 12, 30)],
    ['2026-03-29T14:30+0200', utc(2026, 3, 29, 12, 30)],
    ['2026-03-29T14:30:00.25-05:30', utc(2026, 3, 29, 20, 0) + 250],
    ['2026-03-29T14:30+13:45', utc(2026, 3, 29, 0, 45)],
  ])('GW-42 %s honours its offset', (value, expected) => {
    expect(parse(value)).toBe(expected);
  });

  it.each<[string, number]>([
    ['2026-07-10T08:15', utc(2026, 7, 10, 8, 15)],
    ['2026-07-10T08:15:45', utc(2026, 7, 10, 8, 15, 45)],
    ['2026-07-10 08:15', utc(2026, 7, 10, 8, 15)],
    ['2026-07-10T08:15:45.123', utc(2026, 7, 10, 8, 15, 45) + 123],
    ['2026-07-10', utc(2026, 7, 10)],
  ])('GW-40 GW-43 %s without an offset is gateway local time', (value, wallAsUtc) => {
    expect(parse(value)).toBe(wallAsUtc - off);
  });

  it('GW-45 now, today and yesterday: now and the local midnights', () => {
    expect(parse('now')).toBe(NOW);
    expect(parse(' Today ')).toBe(today);
    expect(parse('yesterday')).toBe(today - DAY);
  });

  it.each<[string, number]>([
    ['-30m', 30 * MIN],
    ['-24h', 24 * HOUR],
    ['-7d', 7 * DAY],
    ['-2w', 14 * DAY],
    ['-0d', 0],
  ])('GW-44 %s counts back from now', (value, back) => {
    expect(parse(value)).toBe(NOW - back);
  });

  it('GW-16 the window is whole unix seconds, ISO-8601 with the zone offset, and the zone', () => {
    const w = resolveWindow({ start: 'yesterday', end: 'today' }, { timeZone: zone, now: NOW });
    expect(w).toEqual({ startUnix: (today - DAY) / 1000, endUnix: today / 1000, start: expect.any(String), end: expect.any(String), timeZone: zone });
    const sign = offsetMin < 0 ? '-' : '+';
    const hhmm = `${String(Math.floor(Math.abs(offsetMin) / 60)).padStart(2, '0')}:${String(Math.abs(offsetMin) % 60).padStart(2, '0')}`;
    expect(w.end).toBe(`${new Date(today + off).toISOString().slice(0, 10)}T00:00:00${sign}${hhmm}`);
    expect(Date.parse(w.start)).toBe(today - DAY);
  });
});

describe('DST in Europe/Berlin: spring forward 2026-03-29 01:00Z, fall back 2026-10-25 01:00Z', () => {
  const B = 'Europe/Berlin';

  it('GW-45 the 23-hour day: today and yesterday give the right midnights', () => {
    expect(at(B, utc(2026, 3, 29, 10))('today')).toBe(utc(2026, 3, 28, 23));
    expect(at(B, utc(2026, 3, 29, 21, 59, 59))('today')).toBe(utc(2026, 3, 28, 23));
    expect(at(B, utc(2026, 3, 29, 22))('today')).toBe(utc(2026, 3, 29, 22));
    const next = at(B, utc(2026, 3, 30, 10));
    expect(next('yesterday')).toBe(utc(2026, 3, 28, 23));
    expect(next('today') - next('yesterday')).toBe(23 * HOUR);
  });

  it('GW-45 the 25-hour day: today and yesterday give the right midnights', () => {
    expect(at(B, utc(2026, 10, 25, 12))('today')).toBe(utc(2026, 10, 24, 22));
    expect(at(B, utc(2026, 10, 25, 22, 59, 59))('today')).toBe(utc(2026, 10, 24, 22));
    const next = at(B, utc(2026, 10, 26, 12));
    expect(next('yesterday')).toBe(utc(2026, 10, 24, 22));
    expect(next('today') - next('yesterday')).toBe(25 * HOUR);
  });

  it('GW-43 bare dates are local midnight on either side of a change', () => {
    const parse = at(B, NOW);
    expect(parse('2026-03-29')).toBe(utc(2026, 3, 28, 23));
    expect(parse('2026-03-30')).toBe(utc(2026, 3, 29, 22));
    expect(parse('2026-10-25')).toBe(utc(2026, 10, 24, 22));
    expect(parse('2026-10-26')).toBe(utc(2026, 10, 25, 23));
  });

  it('GW-43 a local time in the spring gap is read with the offset before the gap (02:30 → 03:30+02:00)', () => {
    const parse = at(B, NOW);
    expect(parse('2026-03-29T01:59:59')).toBe(utc(2026, 3, 29, 0, 59, 59));
    expect(parse('2026-03-29T02:00')).toBe(utc(2026, 3, 29, 1));
    expect(parse('2026-03-29T02:30')).toBe(utc(2026, 3, 29, 1, 30));
    expect(parse('2026-03-29T03:30')).toBe(utc(2026, 3, 29, 1, 30));
    const w = resolveWindow({ start: '2026-03-29T02:30', end: '2026-03-29T04:00' }, { timeZone: B, now: NOW });
    expect(w.start).toBe('2026-03-29T03:30:00+02:00');
  });

  it('GW-43 an ambiguous fall-back local time is the earlier occurrence; an explicit offset picks the later', () => {
    const parse = at(B, NOW);
    expect(parse('2026-10-25T01:30')).toBe(utc(2026, 10, 24, 23, 30));
    expect(parse('2026-10-25T02:00')).toBe(utc(2026, 10, 25, 0));
    expect(parse('2026-10-25T02:30')).toBe(utc(2026, 10, 25, 0, 30));
    expect(parse('2026-10-25T02:30+01:00')).toBe(utc(2026, 10, 25, 1, 30));
    expect(parse('2026-10-25T03:00')).toBe(utc(2026, 10, 25, 2));
  });

  it('GW-44 -1d and -1w are calendar days: the same wall-clock time, 23 or 25 hours across a change', () => {
    expect(at(B, utc(2026, 3, 29, 10))('-1d')).toBe(utc(2026, 3, 28, 11));
    expect(at(B, utc(2026, 3, 29, 10))('-24h')).toBe(utc(2026, 3, 28, 10));
    expect(at(B, utc(2026, 10, 25, 12))('-1d')).toBe(utc(2026, 10, 24, 11));
    expect(at(B, utc(2026, 10, 25, 12))('-24h')).toBe(utc(2026, 10, 24, 12));
    expect(at(B, utc(2026, 4, 1, 10) + 999)('-1w')).toBe(utc(2026, 3, 25, 11) + 999);
  });

  it('GW-44 -1d landing in the gap or the overlap follows the same rules as a local time', () => {
    expect(at(B, utc(2026, 3, 30, 0, 30))('-1d')).toBe(utc(2026, 3, 29, 1, 30));
    expect(at(B, utc(2026, 10, 26, 1, 30))('-1d')).toBe(utc(2026, 10, 25, 0, 30));
  });
});

describe('DST elsewhere', () => {
  it('GW-43 GW-45 America/New_York: gap 2026-03-08, overlap 2026-11-01, 23-hour day', () => {
    const parse = at('America/New_York', NOW);
    expect(parse('2026-03-08T02:30')).toBe(utc(2026, 3, 8, 7, 30));
    expect(parse('2026-11-01T01:30')).toBe(utc(2026, 11, 1, 5, 30));
    expect(at('America/New_York', utc(2026, 3, 8, 12))('today')).toBe(utc(2026, 3, 8, 5));
    expect(at('America/New_York', utc(2026, 3, 9, 12))('today')).toBe(utc(2026, 3, 9, 4));
  });

  it('GW-43 GW-45 Australia/Lord_Howe: 30-minute changes give 24.5- and 23.5-hour days', () => {
    const LH = 'Australia/Lord_Howe';
    expect(at(LH, NOW)('2026-04-05T01:45')).toBe(utc(2026, 4, 4, 14, 45));
    expect(at(LH, NOW)('2026-10-04T02:15')).toBe(utc(2026, 10, 3, 15, 45));
    const april = at(LH, utc(2026, 4, 6, 2));
    expect(april('yesterday')).toBe(utc(2026, 4, 4, 13));
    expect(april('today') - april('yesterday')).toBe(24.5 * HOUR);
    const october = at(LH, utc(2026, 10, 5, 2));
    expect(october('yesterday')).toBe(utc(2026, 10, 3, 13, 30));
    expect(october('today') - october('yesterday')).toBe(23.5 * HOUR);
  });

  it('GW-43 Pacific/Chatham (+12:45/+13:45): gap 2026-09-27 and overlap 2026-04-05', () => {
    const parse = at('Pacific/Chatham', NOW);
    expect(parse('2026-09-27T03:00')).toBe(utc(2026, 9, 26, 14, 15));
    expect(parse('2026-04-05T03:00')).toBe(utc(2026, 4, 4, 13, 15));
  });
});

describe('process time zone', () => {
  const savedTz = process.env.TZ;
  afterEach(() => {
    vi.restoreAllMocks();
    if (savedTz === undefined) delete process.env.TZ;
    else process.env.TZ = savedTz;
  });
  const VALUES = ['2026-03-29T02:30', '2026-10-25', 'today', 'yesterday', '-1d', '-2w', '2026-03-29T14:30+0200'];
  const run = () => VALUES.map(at('Europe/Berlin', utc(2026, 3, 30, 0, 30)));

  it('GW-40 results are the same whatever the process time zone is', () => {
    process.env.TZ = 'Pacific/Chatham';
    const chathamOffset = new Date(NOW).getTimezoneOffset();
    const inChatham = run();
    process.env.TZ = 'America/New_York';
    expect(new Date(NOW).getTimezoneOffset()).not.toBe(chathamOffset);
    expect(run()).toEqual(inChatham);
  });

  it('GW-40 the parser never calls a Date method that reads the process zone', () => {
    const local = ['getTimezoneOffset', 'getFullYear', 'getMonth', 'getDate', 'getDay', 'getHours', 'getMinutes', 'setHours', 'setDate', 'toString'] as const;
    const spies = local.map((name) => vi.spyOn(Date.prototype, name));
    const parseSpy = vi.spyOn(Date, 'parse');
    run();
    resolveWindow({ start: 'yesterday' }, { timeZone: 'Asia/Kolkata', now: NOW });
    for (const spy of [...spies, parseSpy]) expect(spy).not.toHaveBeenCalled();
  });
});

describe('resolveWindow', () => {
  const opts = { timeZone: 'Europe/Berlin', now: utc(2026, 3, 30, 10) + 700 };

  it('GW-46 end defaults to now (whole seconds); start defaults to today or defaultStart', () => {
    const w = resolveWindow({ start: '-1h' }, opts);
    expect(w.endUnix).toBe(utc(2026, 3, 30, 10) / 1000);
    expect(w.startUnix).toBe(utc(2026, 3, 30, 9) / 1000);
    expect(resolveWindow({}, opts).startUnix).toBe(utc(2026, 3, 29, 22) / 1000);
    expect(resolveWindow({}, { ...opts, defaultStart: utc(2026, 3, 30, 8) }).startUnix).toBe(utc(2026, 3, 30, 8) / 1000);
  });

  it('GW-16 milliseconds are truncated to whole seconds and windowMs gives the query bounds', () => {
    // 1774740600 is 2026-03-28T23:30:00Z; 7200 s later the clocks have gone forward.
    const w = resolveWindow({ start: 1774740600999, end: '1774747800' }, opts);
    expect(w).toMatchObject({ startUnix: 1774740600, endUnix: 1774747800, start: '2026-03-29T00:30:00+01:00', end: '2026-03-29T03:30:00+02:00' });
    expect(Number.isInteger(w.startUnix) && Number.isInteger(w.endUnix)).toBe(true);
    expect(windowMs(w)).toEqual({ startMs: 1774740600_000, endMs: 1774747800_000 });
  });

  it('GW-95 a missing required start is refused naming start', () => {
    expectInvalid(() => resolveWindow({ end: 'now' }, { ...opts, requireStart: true }), 'start', 'nothing', 'required');
  });

  it('GW-95 an end before or equal to the start is refused, showing both values', () => {
    expectInvalid(() => resolveWindow({ start: 'today', end: 'yesterday' }, opts), 'end', '"yesterday" = 2026-03-29T00:00:00+01:00', 'later than start "today" = 2026-03-30T00:00:00+02:00');
    expectInvalid(() => resolveWindow({ start: '2026-03-30', end: '2026-03-30' }, opts), 'end', '"2026-03-30"', 'later than start');
    expectInvalid(() => resolveWindow({ start: '2026-04-01' }, opts), 'end', '(default now)', 'later than start "2026-04-01"');
  });

  it('GW-95 a window of maxDays days or more is refused; one second shorter is accepted', () => {
    const max = { ...opts, maxDays: 31 };
    expectInvalid(() => resolveWindow({ start: '-31d', end: 'now' }, { ...max, now: utc(2026, 7, 15) }), 'start/end', 'start "-31d"', 'a window of 31 days', 'shorter than 31 days');
    expectInvalid(() => resolveWindow({ start: '-40d' }, max), 'start/end', 'start "-40d"', 'end (default now)', 'shorter than 31 days');
    const w = resolveWindow({ start: '2026-06-14T00:00:01Z', end: '2026-07-15T00:00:00Z' }, max);
    expect(w.endUnix - w.startUnix).toBe(31 * 86_400 - 1);
  });

  it('GW-95 an invalid start or end names its field', () => {
    expectInvalid(() => resolveWindow({ start: 'soon' }, opts), 'start', '"soon"');
    expectInvalid(() => resolveWindow({ start: '-1h', end: 'later' }, opts), 'end', '"later"');
  });
});

describe('invalid forms', () => {
  const parse = (value: string | number) => parseTimeParam(value, { timeZone: 'UTC', now: NOW, field: 'end' });

  it.each<[string | number, string, string[]]>([
    ['abc', '"abc"', []],
    ['', '""', ['empty']],
    ['tomorrow', '"tomorrow"', []],
    ['30m', '"30m"', []],
    ['+30m', '"+30m"', []],
    ['-1y', '"-1y"', []],
    ['-3M', '"-3M"', []],
    ['29.03.2026', '"29.03.2026"', []],
    ['2026-03-29Z', '"2026-03-29Z"', []],
    ['2026-3-29', '"2026-3-29"', []],
    ['2026-13-01', '"2026-13-01"', ['no such date']],
    ['2026-02-29', '"2026-02-29"', ['no such date']],
    ['2026-03-29T24:00', '"2026-03-29T24:00"', ['no such time of day']],
    ['2026-03-29T12:60', '"2026-03-29T12:60"', ['no such time of day']],
    ['2026-03-29T12:00+24:00', '"2026-03-29T12:00+24:00"', ['no such offset']],
    ['1969-12-31', '"1969-12-31"', ['before 1970']],
    ['0080-01-01', '"0080-01-01"', ['before 1970']],
    ['12345678901234', '"12345678901234"', ['more than 13 digits']],
    [12345678901234, '12345678901234', ['more than 13 digits']],
    ['999999999999', '"999999999999"', ['outside the years 1970-9999']],
    ['-999999w', '"-999999w"', ['outside the years 1970-9999']],
    [-5, '-5', ['not a non-negative finite number']],
    [Number.NaN, 'NaN', ['not a non-negative finite number']],
  ])('GW-95 %j is refused naming the field, the value and every accepted form', (value, found, more) => {
    expectInvalid(() => parse(value), 'end', found, ...more);
  });

  it('GW-95 a long value is shortened in the message', () => {
    const err = caught(() => parse('x'.repeat(200)));
    expect(err.message).toContain(`end: found "${'x'.repeat(56)}...`);
    expect(err.message).not.toContain('x'.repeat(100));
  });
});

describe('timeParamSchema and the forms text', () => {
  const input = z.object({ start: timeParamSchema.optional() }).strict();

  it('GW-95 TIME_PARAM_FORMS lists every accepted form with an example', () => {
    for (const example of EXAMPLES) expect(TIME_PARAM_FORMS).toContain(example);
  });

  it('GW-95 the schema passes valid forms through and refuses others with the forms listed', () => {
    expect(parseOrThrow(input, { start: '-7d' })).toEqual({ start: '-7d' });
    expect(parseOrThrow(input, { start: 1774740600 })).toEqual({ start: 1774740600 });
    expectInvalid(() => parseOrThrow(input, { start: 'last week' }), 'start', '"last week"');
    expectInvalid(() => parseOrThrow(input, { start: '2026-02-30' }), 'start', '"2026-02-30"', 'no such date');
    expectInvalid(() => parseOrThrow(input, { start: true }), 'start', 'true', 'expected a string or a number');
  });

  it('GW-95 the schema describes the forms for an LLM', () => {
    expect(timeParamSchema.description).toContain(TIME_PARAM_SUMMARY);
    expect(TIME_PARAM_SUMMARY).toBe('unix seconds (13 digits = ms), ISO-8601 with/without offset, YYYY-MM-DD, -30m/-24h/-7d/-2w, now/today/yesterday');
    const start = z.toJSONSchema(input).properties?.start;
    expect(start).toMatchObject({ type: ['string', 'number'], description: expect.stringContaining('gateway time zone') });
  });
});

/**
 * The one parser for time parameters (`start`/`end` of a history window).
 * Every form is resolved in the gateway's time zone, never the process's:
 * wall-clock work goes through core/values/time.ts (Intl with an explicit zone) and
 * calendar arithmetic through Date.UTC. See docs/time-parameters.md.
 */
import { z } from 'zod';
import { GatewayError } from './errors.js';
import { formatInZone, wallTime, zonedToInstant } from '../values/time.js';

type WallTime = Parameters<typeof zonedToInstant>[0];

const MINUTE_MS = 60_000;
const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;
/** Instants are kept within four-digit years, so every one prints as ISO-8601. */
const LATEST_MS = Date.UTC(10000, 0, 1);

/** Every accepted time form with an example; error messages and the MCP server instructions quote it. */
export const TIME_PARAM_FORMS = [
  'unix seconds, e.g. 1774740600 (a 13-digit value is milliseconds, e.g. 1774740600000)',
  'ISO-8601 with an offset, e.g. 2026-03-29T14:30:00Z, 2026-03-29T14:30:00+02:00, 2026-03-29T14:30+0200',
  'ISO-8601 without an offset, read in the gateway time zone, e.g. 2026-03-29T14:30, 2026-03-29T14:30:00, 2026-03-29 14:30',
  'a date, meaning local midnight at its start, e.g. 2026-03-29',
  'relative to now: -30m (minutes), -24h (hours), -7d (calendar days), -2w (calendar weeks)',
  'now, today (local midnight today), yesterday (local midnight yesterday)',
].join('; ');

/** The short list of forms, for schema descriptions an LLM reads. */
export const TIME_PARAM_SUMMARY =
  'unix seconds (13 digits = ms), ISO-8601 with/without offset, YYYY-MM-DD, -30m/-24h/-7d/-2w, now/today/yesterday';

/** A resolved time window; `start` inclusive, `end` exclusive, both whole seconds. */
export interface TimeWindow {
  /** Unix seconds (integer). */
  startUnix: number;
  /** Unix seconds (integer). */
  endUnix: number;
  /** ISO-8601 with the gateway zone's offset, e.g. 2026-03-29T00:00:00+01:00. */
  start: string;
  end: string;
  /** The IANA zone every form was resolved in. */
  timeZone: string;
}

export interface TimeParamOptions {
  timeZone: string;
  /** Unix milliseconds that `now`, `today` and the relative forms count from. */
  now: number;
  /** Named in error messages: `start` or `end`. */
  field: string;
}

export interface WindowOptions {
  timeZone: string;
  now: number;
  requireStart?: boolean;
  /** A window must be shorter than this many 24-hour days. */
  maxDays?: number;
  /** Unix milliseconds used when `start` is absent; without it an absent start means `today`. */
  defaultStart?: number;
}

/** A time parameter read but not yet resolved against a zone and a clock. */
type TimeForm =
  | { kind: 'instant'; ms: number }
  | { kind: 'local'; wall: WallTime; fractionMs: number }
  | { kind: 'ago'; amount: number; unit: 'm' | 'h' | 'd' | 'w' }
  | { kind: 'now' | 'today' | 'yesterday' }
  | { kind: 'invalid'; reason?: string };

const UNIX_RE = /^(\d+)(?:\.\d+)?$/;
const AGO_RE = /^-(\d{1,6})([mhdw])$/;
const ISO_RE =
  /^(\d{4})-(\d{2})-(\d{2})(?:[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d+))?)?([Zz]|[+-]\d{2}(?::?\d{2})?)?)?$/;

function unixForm(n: number, integerDigits: number): TimeForm {
  if (integerDigits > 13) return { kind: 'invalid', reason: 'more than 13 digits' };
  // 13 digits as seconds would lie past the year 9999, so they can only be milliseconds (2001 onward).
  return { kind: 'instant', ms: Math.round(integerDigits === 13 ? n : n * 1000) };
}

function readNumber(n: number): TimeForm {
  if (!Number.isFinite(n) || n < 0) return { kind: 'invalid', reason: 'not a non-negative finite number' };
  return unixForm(n, Math.trunc(n).toString().length);
}

function readIso(m: RegExpExecArray): TimeForm {
  const [, y, mo, d, h, mi, s, frac, offset] = m;
  const wall: WallTime = {
    year: Number(y),
    month: Number(mo),
    day: Number(d),
    hour: Number(h ?? 0),
    minute: Number(mi ?? 0),
    second: Number(s ?? 0),
  };
  // Date.UTC maps years 0-99 to 1900-1999, so early years must never reach it.
  if (wall.year < 1970) return { kind: 'invalid', reason: 'before 1970' };
  const daysInMonth = new Date(Date.UTC(wall.year, wall.month, 0)).getUTCDate();
  if (wall.month < 1 || wall.month > 12 || wall.day < 1 || wall.day > daysInMonth) {
    return { kind: 'invalid', reason: 'no such date' };
  }
  if (wall.hour > 23 || wall.minute > 59 || wall.second > 59) return { kind: 'invalid', reason: 'no such time of day' };
  const fractionMs = frac ? Number(frac.padEnd(3, '0').slice(0, 3)) : 0;
  if (!offset) return { kind: 'local', wall, fractionMs };
  let offsetMin = 0;
  if (offset.toUpperCase() !== 'Z') {
    const digits = offset.slice(1).replace(':', '');
    const oh = Number(digits.slice(0, 2));
    const om = Number(digits.slice(2) || 0);
    if (oh > 23 || om > 59) return { kind: 'invalid', reason: 'no such offset' };
    offsetMin = (offset.startsWith('-') ? -1 : 1) * (oh * 60 + om);
  }
  const utc = Date.UTC(wall.year, wall.month - 1, wall.day, wall.hour, wall.minute, wall.second);
  return { kind: 'instant', ms: utc - offsetMin * MINUTE_MS + fractionMs };
}

/** Recognises the form of a time parameter without resolving it. */
function readTimeForm(value: string | number): TimeForm {
  if (typeof value === 'number') return readNumber(value);
  const text = value.trim();
  if (!text) return { kind: 'invalid', reason: 'empty' };
  const unix = UNIX_RE.exec(text);
  if (unix) return unixForm(Number(text), unix[1]!.replace(/^0+(?=\d)/, '').length);
  const keyword = text.toLowerCase();
  if (keyword === 'now' || keyword === 'today' || keyword === 'yesterday') return { kind: keyword };
  const ago = AGO_RE.exec(text);
  if (ago) return { kind: 'ago', amount: Number(ago[1]), unit: ago[2] as 'm' | 'h' | 'd' | 'w' };
  const iso = ISO_RE.exec(text);
  if (iso) return readIso(iso);
  return { kind: 'invalid' };
}

/** The calendar date `days` after the date of `w` (negative goes back). */
function shiftDate(w: WallTime, days: number): Pick<WallTime, 'year' | 'month' | 'day'> {
  const d = new Date(Date.UTC(w.year, w.month - 1, w.day + days));
  return { year: d.getUTCFullYear(), month: d.getUTCMonth() + 1, day: d.getUTCDate() };
}

/** Local midnight of the day `days` after the day containing `now`. */
function localMidnight(now: number, days: number, timeZone: string): number {
  const date = shiftDate(wallTime(now, timeZone), days);
  return zonedToInstant({ ...date, hour: 0, minute: 0, second: 0 }, timeZone);
}

/** The same wall-clock time `days` calendar days earlier; a day across a DST change is 23 or 25 hours. */
function calendarDaysBefore(now: number, days: number, timeZone: string): number {
  const w = wallTime(now, timeZone);
  const subSecond = now - Math.floor(now / 1000) * 1000;
  return zonedToInstant({ ...w, ...shiftDate(w, -days) }, timeZone) + subSecond;
}

function resolveForm(form: Exclude<TimeForm, { kind: 'invalid' }>, timeZone: string, now: number): number {
  switch (form.kind) {
    case 'instant':
      return form.ms;
    case 'local':
      return zonedToInstant(form.wall, timeZone) + form.fractionMs;
    case 'now':
      return now;
    case 'today':
      return localMidnight(now, 0, timeZone);
    case 'yesterday':
      return localMidnight(now, -1, timeZone);
    case 'ago': {
      if (form.unit === 'm') return now - form.amount * MINUTE_MS;
      if (form.unit === 'h') return now - form.amount * HOUR_MS;
      const days = form.unit === 'd' ? form.amount : form.amount * 7;
      // Far before 1970 the range check refuses it anyway; calendar arithmetic there would be meaningless.
      if (now - days * DAY_MS < -DAY_MS) return now - days * DAY_MS;
      return calendarDaysBefore(now, days, timeZone);
    }
  }
}

/** The value as an error message shows it. */
function shown(value: string | number): string {
  const text = typeof value === 'number' ? String(value) : JSON.stringify(value);
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

function acceptedText(reason?: string): string {
  return `${reason ? `${reason}; ` : ''}accepted: ${TIME_PARAM_FORMS}`;
}

function invalidParameter(field: string, found: string, reason?: string): GatewayError {
  return new GatewayError('INVALID_PARAMETER', `${field}: found ${found}; ${acceptedText(reason)}`);
}

/** Resolves one time parameter to unix milliseconds in the gateway zone, or throws INVALID_PARAMETER. */
export function parseTimeParam(value: string | number, opts: TimeParamOptions): number {
  const form = readTimeForm(value);
  if (form.kind === 'invalid') throw invalidParameter(opts.field, shown(value), form.reason);
  const ms = resolveForm(form, opts.timeZone, opts.now);
  if (!(ms >= 0 && ms < LATEST_MS)) throw invalidParameter(opts.field, shown(value), 'outside the years 1970-9999');
  return ms;
}

/**
 * Resolves `start`/`end` into a window. `end` defaults to now; an absent
 * `start` is an error with `requireStart`, else `defaultStart`, else today.
 */
export function resolveWindow(
  input: { start?: string | number; end?: string | number },
  opts: WindowOptions,
): TimeWindow {
  const { timeZone, now } = opts;
  const endMs = input.end === undefined ? now : parseTimeParam(input.end, { timeZone, now, field: 'end' });
  let startMs: number;
  if (input.start !== undefined) startMs = parseTimeParam(input.start, { timeZone, now, field: 'start' });
  else if (opts.requireStart) throw invalidParameter('start', 'nothing', 'start is required');
  else startMs = opts.defaultStart ?? localMidnight(now, 0, timeZone);

  const startUnix = Math.floor(startMs / 1000);
  const endUnix = Math.floor(endMs / 1000);
  const start = formatInZone(startUnix * 1000, timeZone);
  const end = formatInZone(endUnix * 1000, timeZone);
  const startText = `${input.start === undefined ? '(default)' : shown(input.start)} = ${start}`;
  const endText = `${input.end === undefined ? '(default now)' : shown(input.end)} = ${end}`;
  if (endUnix <= startUnix) {
    throw invalidParameter('end', endText, `end must be later than start ${startText}`);
  }
  if (opts.maxDays !== undefined && endUnix - startUnix >= opts.maxDays * (DAY_MS / 1000)) {
    const days = Number(((endUnix - startUnix) / (DAY_MS / 1000)).toFixed(2));
    throw invalidParameter(
      'start/end',
      `start ${startText} and end ${endText}, a window of ${days} days`,
      `the window must be shorter than ${opts.maxDays} days`,
    );
  }
  return { startUnix, endUnix, start, end, timeZone };
}

/** The window as unix milliseconds, for queries over [startMs, endMs). */
export function windowMs(w: TimeWindow): { startMs: number; endMs: number } {
  return { startMs: w.startUnix * 1000, endMs: w.endUnix * 1000 };
}

/**
 * Schema for a `start`/`end` input: a string or number whose form is checked
 * here; resolveWindow resolves it against the gateway zone and clock.
 */
export const timeParamSchema = z
  .union([z.string(), z.number()], { error: acceptedText('expected a string or a number') })
  .superRefine((value, ctx) => {
    const form = readTimeForm(value);
    if (form.kind === 'invalid') ctx.addIssue({ code: 'custom', message: acceptedText(form.reason) });
  })
  .describe(`Time in the gateway time zone: ${TIME_PARAM_SUMMARY}`);

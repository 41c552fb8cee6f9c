/**
 * The timestamp field of an SHDR line, as the reference agent reads it
 * (cppagent's ExtractTimestamp): an ISO 8601 time (UTC when it names no
 * zone), optionally followed by `@duration`; an empty field means the time
 * the line arrived; a plain number is a relative time in milliseconds, the
 * first one anchored at its arrival.
 */

/** Unix ms of an ISO 8601 MTConnect time, UTC unless it names a zone; undefined when it is not one. */
export function parseIsoTime(text: string): number | undefined {
  const zoned = /(Z|[+-]\d\d:?\d\d)$/i.test(text) ? text : `${text}Z`;
  const ms = Date.parse(zoned);
  return Number.isFinite(ms) ? ms : undefined;
}

export type ShdrTime =
  | { kind: 'time'; ms: number; duration?: number }
  | { kind: 'none' }
  | { kind: 'invalid' };

/** Reads timestamp fields of one adapter connection; relative times are anchored at the first one. */
export class ShdrClock {
  private anchor: { received: number; relative: number } | undefined;

  /** The time of `field`; `none` when empty (the arrival time is meant), `invalid` when it is no time at all. */
  read(field: string, receivedAt: number): ShdrTime {
    let text = field;
    let duration: number | undefined;
    const at = text.indexOf('@');
    if (at >= 0) {
      const d = Number(text.slice(at + 1));
      if (Number.isFinite(d)) duration = d;
      text = text.slice(0, at);
    }
    const extra = duration === undefined ? {} : { duration };
    if (text === '') return { kind: 'none' };
    if (text.includes('T')) {
      const ms = parseIsoTime(text);
      return ms === undefined ? { kind: 'invalid' } : { kind: 'time', ms, ...extra };
    }
    if (!/^-?\d+(\.\d+)?$/.test(text)) return { kind: 'invalid' };
    const relative = Number(text);
    this.anchor ??= { received: receivedAt, relative };
    return { kind: 'time', ms: Math.round(this.anchor.received + (relative - this.anchor.relative)), ...extra };
  }
}

/** /api/system/time-zone: the gateway's clock and zone, its UTC offset now and whether DST is in effect. */
import { SYSTEM } from '../../core/roles/gateway/contract/system.js';
import type { GatewayContext } from '../../core/roles/gateway/context.js';
import { formatInZone, offsetMs, wallTime } from '../../core/values/time.js';

/** `+01:00` / `-03:30` for an offset in minutes east of UTC. */
function formatOffset(minutes: number): string {
  const abs = Math.abs(minutes);
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${minutes >= 0 ? '+' : '-'}${pad(Math.floor(abs / 60))}:${pad(abs % 60)}`;
}

/**
 * The zone's standard offset in the year of `ms`: the smaller of its offsets
 * in January and July, so that it holds on both hemispheres.
 */
function standardOffsetMinutes(ms: number, timeZone: string): number {
  const { year } = wallTime(ms, timeZone);
  const january = offsetMs(Date.UTC(year, 0, 1), timeZone);
  const july = offsetMs(Date.UTC(year, 6, 1), timeZone);
  return Math.min(january, july) / 60_000;
}

/** The zone facts at instant `ms`. */
export function zoneAt(ms: number, timeZone: string) {
  const utcOffsetMinutes = offsetMs(ms, timeZone) / 60_000;
  const standard = standardOffsetMinutes(ms, timeZone);
  return {
    nowMs: ms,
    now: formatInZone(ms, timeZone),
    timeZone,
    utcOffsetMinutes,
    utcOffset: formatOffset(utcOffsetMinutes),
    standardUtcOffsetMinutes: standard,
    dstInEffect: utcOffsetMinutes > standard,
  };
}

export function defineTimeZoneInterface(ctx: GatewayContext): void {
  ctx.interfaces.implement(SYSTEM.timeZone, {
    handler: () => zoneAt(ctx.now(), ctx.timeZone),
  });
}

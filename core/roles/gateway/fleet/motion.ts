/**
 * What the status sample reads besides the status, when the machine's
 * driver declares the family: the axes' machine positions, the spindle's
 * speed and load, and the tool number. Each is recorded as the driver gives
 * it (no value is made up): a family the driver does not declare is absent,
 * and one whose read failed is null, so the MTConnect agent shows it
 * UNAVAILABLE rather than an old value (docs/mtconnect.md, "The model").
 */
import type { AxisLoad, AxisPosition, DriverClient } from '../../../driver-seam/driver.js';

/** One axis: its name, its machine position and the unit the driver gives it in. */
export interface AxisReading {
  axis: string;
  machine: number;
  unit: AxisPosition['unit'];
}

/** The motion part of a status sample; a key is present when the driver declares its family, null when its read failed. */
export interface MotionSample {
  axes?: AxisReading[] | null;
  /** Actual spindle speed, rpm (family feedAndSpindle). */
  spindleSpeed?: number | null;
  /** Spindle load, percent (family load: the spindle's entry, see `spindleLoadOf`; absent when the read has none). */
  spindleLoad?: number | null;
  toolNumber?: number | null;
}

/**
 * The spindle's entry of a load read: the first whose name is not an axis's
 * and starts with `S` (FANUC's `S1`, `S`, `SPINDLE`); undefined when none.
 */
export function spindleLoadOf(loads: readonly AxisLoad[], axisNames: ReadonlySet<string>): number | undefined {
  const spindle = loads.find((l) => !axisNames.has(l.name) && /^s/i.test(l.name));
  return spindle?.loadPercent;
}

const settled = <T>(result: PromiseSettledResult<T> | undefined): T | null | undefined =>
  result === undefined ? undefined : result.status === 'fulfilled' ? result.value : null;

/** Reads the motion families `client` declares, all at once; undefined when it declares none of them. */
export async function readMotion(client: Pick<DriverClient, 'families' | 'read'>): Promise<MotionSample | undefined> {
  const has = (f: 'position' | 'feedAndSpindle' | 'load' | 'toolNumber') => client.families.has(f);
  if (!has('position') && !has('feedAndSpindle') && !has('load') && !has('toolNumber')) return undefined;
  // Each read settles on its own (a driver that throws at once counts as a failed read): one failure costs only its family.
  const attempt = <F extends 'position' | 'feedAndSpindle' | 'load' | 'toolNumber'>(f: F) => (has(f) ? Promise.allSettled([(async () => client.read(f))()]) : undefined);
  const [position, feed, load, tool] = await Promise.all([attempt('position'), attempt('feedAndSpindle'), attempt('load'), attempt('toolNumber')]);
  const motion: MotionSample = {};
  const axes = settled(position?.[0]);
  if (axes !== undefined) motion.axes = axes === null ? null : axes.map((a) => ({ axis: a.axis, machine: a.machine, unit: a.unit }));
  const fs = settled(feed?.[0]);
  if (fs !== undefined) motion.spindleSpeed = fs === null ? null : fs.spindleSpeed;
  const loads = settled(load?.[0]);
  // A load read without a spindle entry gives no spindle load at all (the machine's loads are its axes' only).
  const spindleLoad = loads ? spindleLoadOf(loads, new Set(axes?.map((a) => a.axis) ?? [])) : loads;
  if (spindleLoad !== undefined) motion.spindleLoad = spindleLoad;
  const toolNumber = settled(tool?.[0]);
  if (toolNumber !== undefined) motion.toolNumber = toolNumber === null ? null : toolNumber.toolNumber;
  return motion;
}

/** Whether two motion samples differ in anything the history records. */
export function motionChanged(a: MotionSample | undefined, b: MotionSample): boolean {
  if (!a) return true;
  if (a.spindleSpeed !== b.spindleSpeed || a.spindleLoad !== b.spindleLoad || a.toolNumber !== b.toolNumber) return true;
  if (a.axes === b.axes) return false;
  if (!a.axes || !b.axes || a.axes.length !== b.axes.length) return true;
  return a.axes.some((x, i) => {
    const y = b.axes![i]!;
    return x.axis !== y.axis || x.machine !== y.machine || x.unit !== y.unit;
  });
}

/**
 * The motion data items of a machine: each axis's position (POSITION in
 * millimetres for a linear axis, ANGLE in degrees for a rotary one), the
 * spindle's ROTARY_VELOCITY and LOAD, and TOOL_NUMBER, from the Motion rows
 * the status sample writes (core/roles/gateway/fleet/motion.ts). A row
 * carries a key only for a family the machine's driver declares, so the
 * items a machine has (its layout) are those of its last Motion row, and the
 * device model shows exactly those. Like the status items they are
 * UNAVAILABLE while the status is not current, and so is an item whose read
 * failed (null in the row).
 *
 * Slots: a Motion row gives no other observation, and a State row (where the
 * items turn UNAVAILABLE or back) shows alarms only below FIRST_MOTION_SLOT,
 * so the motion items take the slots from FIRST_MOTION_SLOT on, in a fixed
 * order: the tool, the spindle's speed and load, then the axes in the order
 * the driver gives them (at most MAX_AXES).
 */
import { observationSeq } from './sequence-numbers.js';
import { UNAVAILABLE } from './value-map.js';

/** A motion data item: the tool, the spindle's speed or load, or one axis's position by its name. */
export type MotionItem = 'tool' | 'spindleSpeed' | 'spindleLoad' | `axis:${string}`;

/** The first slot of the motion items in a row. */
export const FIRST_MOTION_SLOT = 50;
/** Axes a machine can show (the slots left after the tool and the spindle). */
export const MAX_AXES = 47;

/** An axis as the model shows it: its name and the driver's unit (`mm` or `inch`: linear, `deg`: rotary). */
export interface AxisLayout {
  axis: string;
  unit: string;
}

/** The motion items a machine has. */
export interface MotionLayout {
  tool: boolean;
  spindleSpeed: boolean;
  spindleLoad: boolean;
  axes: AxisLayout[];
}

/** A motion row as the replay reads it. */
interface MotionRow {
  seq: number;
  machineID: string;
  ts: number;
  data: Record<string, unknown>;
}

interface MotionObservation {
  machineID: string;
  item: MotionItem;
  seq: number;
  ts: number;
  value: string;
}

/** Emits an observation; answers whether it was made (within a replay's limit), so it is the item's last. */
type Emit = (o: MotionObservation) => boolean;

const MM_PER_INCH = 25.4;

/** A number as an observation's value; UNAVAILABLE for anything else (a failed read). */
function numberValue(value: unknown): string {
  return typeof value === 'number' && Number.isFinite(value) ? String(value) : UNAVAILABLE;
}

/** An axis position in the unit MTConnect serves: millimetres (an inch position converted) or degrees. */
function positionValue(entry: unknown): string {
  if (entry === null || typeof entry !== 'object') return UNAVAILABLE;
  const { machine, unit } = entry as { machine?: unknown; unit?: unknown };
  if (typeof machine !== 'number' || !Number.isFinite(machine)) return UNAVAILABLE;
  return String(unit === 'inch' ? Math.round(machine * MM_PER_INCH * 1e6) / 1e6 : machine);
}

interface MotionValue {
  item: MotionItem;
  slot: number;
  value: string;
}

/** One machine's motion state; see the module comment. */
export class MotionState {
  private data: Record<string, unknown> | undefined;
  private axes: AxisLayout[] = [];
  /** Each axis's item, in the order of `axes`. */
  private axisItems: MotionItem[] = [];
  private key = '';
  /** The values last shown and whether the status was current then: the next row's values before it. */
  private shown: { current: boolean; values: MotionValue[] } | undefined;
  /** The last observation of each motion item. */
  readonly last = new Map<MotionItem, MotionObservation>();

  /** The items the machine has; undefined before its first Motion row. */
  layout(): MotionLayout | undefined {
    if (!this.data) return undefined;
    const d = this.data;
    return { tool: 'toolNumber' in d, spindleSpeed: 'spindleSpeed' in d, spindleLoad: 'spindleLoad' in d, axes: this.axes };
  }

  /** The layout as a string: equal strings, equal layouts. Made once per row. */
  layoutKey(): string {
    return this.key;
  }

  /** A Motion row: its values become the items', and those that changed are observed. */
  apply(row: MotionRow, current: boolean, emit: Emit): void {
    const before = this.shown?.current === current ? this.shown.values : this.values(current);
    this.data = row.data;
    const axes = row.data.axes;
    if (Array.isArray(axes)) {
      const read = axes.slice(0, MAX_AXES).flatMap((a: unknown) => {
        const { axis, unit } = (a ?? {}) as { axis?: unknown; unit?: unknown };
        return typeof axis === 'string' ? [{ axis, unit: typeof unit === 'string' ? unit : 'mm' }] : [];
      });
      if (read.length !== this.axes.length || read.some((a, i) => a.axis !== this.axes[i]!.axis || a.unit !== this.axes[i]!.unit)) {
        this.axes = read;
        this.axisItems = read.map(({ axis }) => `axis:${axis}` as const);
      }
    }
    const l = this.layout()!;
    this.key = `${Number(l.tool)}${Number(l.spindleSpeed)}${Number(l.spindleLoad)}${l.axes.map((a) => `\u0000${a.axis}\u0001${a.unit}`).join('')}`;
    this.show(row, before, current, emit);
  }

  /** The status turned current or not current: every item shows its value, or UNAVAILABLE. */
  turned(row: MotionRow, current: boolean, emit: Emit): void {
    this.show(row, this.values(!current), current, emit);
  }

  /** Observes the items whose values now differ from `before`. */
  private show(row: MotionRow, before: MotionValue[], current: boolean, emit: Emit): void {
    const after = this.values(current);
    for (let i = 0; i < after.length; i++) {
      const { item, slot, value } = after[i]!;
      // The same layout lists the items in the same order; a new one is looked up.
      const was = before[i]?.item === item ? before[i]!.value : before.find((v) => v.item === item)?.value;
      if (was === value) continue;
      const o: MotionObservation = { machineID: row.machineID, item, seq: observationSeq(row.seq, slot), ts: row.ts, value };
      if (emit(o)) this.last.set(item, o);
    }
    this.shown = { current, values: after };
  }

  /** Each item's value and slot now. */
  private values(current: boolean): MotionValue[] {
    const d = this.data;
    if (!d) return [];
    const out: MotionValue[] = [];
    const shown = (v: unknown, value: (x: unknown) => string) => (current ? value(v) : UNAVAILABLE);
    if ('toolNumber' in d) out.push({ item: 'tool', slot: FIRST_MOTION_SLOT, value: shown(d.toolNumber, numberValue) });
    if ('spindleSpeed' in d) out.push({ item: 'spindleSpeed', slot: FIRST_MOTION_SLOT + 1, value: shown(d.spindleSpeed, numberValue) });
    if ('spindleLoad' in d) out.push({ item: 'spindleLoad', slot: FIRST_MOTION_SLOT + 2, value: shown(d.spindleLoad, numberValue) });
    const read = Array.isArray(d.axes) ? (d.axes as unknown[]) : undefined;
    const axisOf = (a: unknown) => (a as { axis?: unknown } | null)?.axis;
    for (let i = 0; i < this.axes.length; i++) {
      const axis = this.axes[i]!.axis;
      // The driver gives its axes in the same order each time; another order is looked up.
      const entry = read && axisOf(read[i]) === axis ? read[i] : read?.find((a) => axisOf(a) === axis);
      out.push({ item: this.axisItems[i]!, slot: FIRST_MOTION_SLOT + 3 + i, value: shown(entry, positionValue) });
    }
    return out;
  }
}

/**
 * The register map: which device value feeds which family field. A family is
 * served only when its section is present, and a section requires every field
 * its family shape requires, so nothing is ever made up. The map is checked as
 * a whole too: no two items may share a register (or a bit) of the same
 * function.
 */
import { z } from 'zod';
import { ACTIVE_ALARM_LEVELS, ALARM_LEVELS, type ExecutionState, type ItemFamily, type OperatingMode } from '../../core/driver-seam/driver.js';
import { itemSchema, type FieldKind, type MapItem, type RegisterItem } from './register-items.js';

export const EXECUTION_STATES = ['RESET', 'STOPPED', 'HOLD', 'RUNNING', 'EMERGENCY'] as const satisfies readonly ExecutionState[];
export const OPERATING_MODES = ['AUTO', 'MDI', 'MANUAL', 'JOG', 'HANDLE', 'EDIT', 'REF', 'REMOTE', 'UNKNOWN'] as const satisfies readonly OperatingMode[];
export const PROGRAM_STATUSES = ['running', 'stopped', 'hold', 'none'] as const;
export const AXIS_UNITS = ['mm', 'inch', 'deg'] as const;

const NUMBER: FieldKind = { kind: 'number' };
const BOOLEAN: FieldKind = { kind: 'boolean' };
const TEXT: FieldKind = { kind: 'text' };
const choice = (values: readonly string[]): FieldKind => ({ kind: 'choice', values });

const required = (kind: FieldKind, field: string) =>
  z.unknown().superRefine((value, ctx) => {
    if (value === undefined) ctx.addIssue({ code: 'custom', message: `${field} is required: a register item or a constant { value }` });
  }).pipe(itemSchema(kind));
const optional = (kind: FieldKind) => itemSchema(kind).optional();

const statusSection = z.strictObject({
  adjustedStatus: required(choice(EXECUTION_STATES), 'adjustedStatus'),
  cncStatus: optional(TEXT),
  mode: optional(choice(OPERATING_MODES)),
  programStatus: optional(choice(PROGRAM_STATUSES)),
  alarmLevel: optional(choice(ALARM_LEVELS)),
  alarmStatus: optional(BOOLEAN),
  emergency: optional(BOOLEAN),
  program: optional(TEXT),
}, { error: 'status must be an object of status fields' });

const alarmSlot = z.strictObject({
  code: required(TEXT, 'code'),
  message: required(TEXT, 'message'),
  level: required(choice(ACTIVE_ALARM_LEVELS), 'level'),
  /** Unix milliseconds once scaled; without it, the time the gateway first saw the code. */
  since: optional(NUMBER),
});

const feedAndSpindleSection = z.strictObject({
  feedRate: required(NUMBER, 'feedRate'),
  feedOverride: required(NUMBER, 'feedOverride'),
  spindleSpeed: required(NUMBER, 'spindleSpeed'),
  spindleOverride: required(NUMBER, 'spindleOverride'),
  rapidOverride: required(NUMBER, 'rapidOverride'),
});

const toolNumberSection = z.strictObject({ toolNumber: required(NUMBER, 'toolNumber'), offsetNumber: optional(NUMBER) });

const timeDataSection = z.strictObject({
  powerOnTime: required(NUMBER, 'powerOnTime'),
  operatingTime: required(NUMBER, 'operatingTime'),
  cuttingTime: required(NUMBER, 'cuttingTime'),
  cycleTime: required(NUMBER, 'cycleTime'),
});

const countSection = z.strictObject({
  partCount: required(NUMBER, 'partCount'),
  partsTotal: required(NUMBER, 'partsTotal'),
  partsRequired: optional(NUMBER),
  lastCycleTime: optional(NUMBER),
  program: optional(TEXT),
});

const axisSlot = z.strictObject({
  name: required(TEXT, 'name'),
  unit: required(choice(AXIS_UNITS), 'unit'),
  absolute: required(NUMBER, 'absolute'),
  machine: required(NUMBER, 'machine'),
  relative: required(NUMBER, 'relative'),
  distanceToGo: required(NUMBER, 'distanceToGo'),
});

const loadSlot = z.strictObject({ name: required(TEXT, 'name'), loadPercent: required(NUMBER, 'loadPercent') });

const slots = <T extends z.ZodType>(slot: T, what: string) =>
  z.array(slot, { error: `${what} must be a list of slots` }).min(1, { error: `${what} must list at least one slot, or be left out` }).max(64, { error: `${what} may list at most 64 slots` }).optional();

const sectionsSchema = z.strictObject({
  status: statusSection.optional(),
  alarms: slots(alarmSlot, 'alarms'),
  feedAndSpindle: feedAndSpindleSection.optional(),
  toolNumber: toolNumberSection.optional(),
  timeData: timeDataSection.optional(),
  count: countSection.optional(),
  axes: slots(axisSlot, 'axes'),
  loads: slots(loadSlot, 'loads'),
}, { error: 'map must be an object of family sections (status, alarms, feedAndSpindle, toolNumber, timeData, count, axes, loads)' });

export type RegisterMap = z.output<typeof sectionsSchema>;

/** The section of the map that serves each family. */
export const FAMILY_SECTIONS = {
  status: 'status',
  alarm: 'alarms',
  feedAndSpindle: 'feedAndSpindle',
  toolNumber: 'toolNumber',
  timeData: 'timeData',
  count: 'count',
  position: 'axes',
  load: 'loads',
} as const satisfies Partial<Record<ItemFamily, keyof RegisterMap>>;
export type MappedFamily = keyof typeof FAMILY_SECTIONS;

/** One register item with where it sits in the map. */
export interface LocatedItem {
  path: (string | number)[];
  item: RegisterItem;
}

/** Every register item of one section, with its path. */
export function sectionItems(map: RegisterMap, section: keyof RegisterMap): LocatedItem[] {
  const out: LocatedItem[] = [];
  const visit = (value: unknown, path: (string | number)[]) => {
    if (Array.isArray(value)) value.forEach((slot, i) => visit(slot, [...path, i]));
    else if (value && typeof value === 'object') {
      for (const [key, field] of Object.entries(value as Record<string, MapItem | undefined>)) {
        if (field?.source === 'register') out.push({ path: [...path, key], item: field });
      }
    }
  };
  visit(map[section], [section]);
  return out;
}


function checkOverlaps(map: RegisterMap, ctx: z.RefinementCtx): void {
  const sections = Object.keys(map) as (keyof RegisterMap)[];
  const items = sections.flatMap((section) => sectionItems(map, section));
  const byFunction = new Map<string, LocatedItem[]>();
  for (const located of items) {
    const { item } = located;
    if (item.address + item.width > 65_536) {
      ctx.addIssue({ code: 'custom', path: [...located.path, 'address'], input: item.address, message: `the item spans ${item.width} from ${item.address}, past the last address 65535` });
    }
    byFunction.set(item.function, [...(byFunction.get(item.function) ?? []), located]);
  }
  for (const [fn, list] of byFunction) {
    list.sort((x, y) => x.item.address - y.item.address);
    for (let i = 1; i < list.length; i++) {
      const previous = list[i - 1] as LocatedItem;
      const current = list[i] as LocatedItem;
      const previousEnd = previous.item.address + previous.item.width - 1;
      if (current.item.address <= previousEnd) {
        ctx.addIssue({
          code: 'custom',
          path: [...current.path, 'address'],
          input: current.item.address,
          message: `${fn} ${current.item.address} overlaps ${dotted(previous.path)} (${fn} ${previous.item.address}..${previousEnd}); each ${fn === 'coils' || fn === 'discreteInputs' ? 'bit' : 'register'} may feed one item`,
        });
      }
    }
  }
}

export const registerMapSchema = sectionsSchema.superRefine((map, ctx) => {
  checkOverlaps(map, ctx);
  const status = map.status;
  if (status && !status.alarmLevel && !status.alarmStatus && !map.alarms) {
    ctx.addIssue({ code: 'custom', path: ['status'], input: status, message: 'status needs alarmLevel, alarmStatus or an alarms section to tell whether an alarm is active' });
  }
});

/** `axes[0].absolute` from ['axes', 0, 'absolute']. */
export function dotted(path: readonly (string | number)[]): string {
  return path.map((key, i) => (typeof key === 'number' ? `[${key}]` : i ? `.${key}` : key)).join('');
}

/**
 * The items an MQTT mapping can fill: one scalar field of a family shape
 * (`status.adjustedStatus`, `count.partCount`) or one list family (`alarm`,
 * `position`, `load`). Each has a value kind, and `coerce` turns what a
 * payload carries (JSON value or plain text) into that kind, or says why not.
 */
import { ACTIVE_ALARM_LEVELS, ALARM_LEVELS, type ExecutionState, type OperatingMode } from '../../core/driver-seam/driver.js';

export const EXECUTION_STATES = ['RUNNING', 'HOLD', 'STOPPED', 'RESET', 'EMERGENCY'] as const satisfies readonly ExecutionState[];
export const OPERATING_MODES = [
  'AUTO', 'MDI', 'MANUAL', 'JOG', 'HANDLE', 'EDIT', 'REF', 'REMOTE', 'UNKNOWN',
] as const satisfies readonly OperatingMode[];
export const PROGRAM_STATUSES = ['running', 'stopped', 'hold', 'none'] as const;

/** What kind of value an item holds. `time` is unix ms, from a number of ms or an ISO 8601 text. */
export type ItemKind =
  | { type: 'text' }
  | { type: 'number' }
  | { type: 'boolean' }
  | { type: 'time' }
  | { type: 'enum'; values: readonly string[] };

export type ItemValue = string | number | boolean;

const text: ItemKind = { type: 'text' };
const num: ItemKind = { type: 'number' };
const bool: ItemKind = { type: 'boolean' };
const time: ItemKind = { type: 'time' };
const oneOf = (values: readonly string[]): ItemKind => ({ type: 'enum', values });

/** Every scalar item a topic can map, with its kind. */
export const SCALAR_ITEMS = {
  'status.cncStatus': text,
  'status.adjustedStatus': oneOf(EXECUTION_STATES),
  'status.alarmStatus': bool,
  'status.alarmLevel': oneOf(ALARM_LEVELS),
  'status.mode': oneOf(OPERATING_MODES),
  'status.programStatus': oneOf(PROGRAM_STATUSES),
  'status.emergency': bool,
  'status.program': text,
  'status.time': time,
  'feedAndSpindle.feedRate': num,
  'feedAndSpindle.feedOverride': num,
  'feedAndSpindle.spindleSpeed': num,
  'feedAndSpindle.spindleOverride': num,
  'feedAndSpindle.rapidOverride': num,
  'toolNumber.toolNumber': num,
  'toolNumber.offsetNumber': num,
  'timeData.powerOnTime': num,
  'timeData.operatingTime': num,
  'timeData.cuttingTime': num,
  'timeData.cycleTime': num,
  'count.partCount': num,
  'count.partsRequired': num,
  'count.partsTotal': num,
  'count.lastCycleTime': num,
  'count.program': text,
} as const satisfies Record<string, ItemKind>;

export type ScalarItem = keyof typeof SCALAR_ITEMS;
export const SCALAR_ITEM_NAMES = Object.keys(SCALAR_ITEMS) as ScalarItem[];

/** Every list family a topic can map, with the fields of one element. Optional fields may be absent. */
export const LIST_ITEMS = {
  alarm: {
    code: { kind: text, optional: false },
    message: { kind: text, optional: false },
    level: { kind: oneOf(ACTIVE_ALARM_LEVELS), optional: false },
    since: { kind: time, optional: true },
  },
  position: {
    axis: { kind: text, optional: false },
    absolute: { kind: num, optional: false },
    machine: { kind: num, optional: false },
    relative: { kind: num, optional: false },
    distanceToGo: { kind: num, optional: false },
    unit: { kind: oneOf(['mm', 'inch', 'deg']), optional: false },
  },
  load: {
    name: { kind: text, optional: false },
    loadPercent: { kind: num, optional: false },
  },
} as const satisfies Record<string, Record<string, { kind: ItemKind; optional: boolean }>>;

export type ListItem = keyof typeof LIST_ITEMS;
export const LIST_ITEM_NAMES = Object.keys(LIST_ITEMS) as ListItem[];

export type Coerced = { ok: true; value: ItemValue } | { ok: false; problem: string };

const show = (raw: unknown): string => {
  const shown = typeof raw === 'string' ? `'${raw}'` : JSON.stringify(raw) ?? String(raw);
  return shown.length > 60 ? `${shown.slice(0, 57)}...` : shown;
};

/** Turns a payload value into an item value of `kind`. */
export function coerce(kind: ItemKind, raw: unknown): Coerced {
  switch (kind.type) {
    case 'text':
      if (typeof raw === 'string') return { ok: true, value: raw };
      if (typeof raw === 'number' || typeof raw === 'boolean') return { ok: true, value: String(raw) };
      return { ok: false, problem: `${show(raw)} is not a text` };
    case 'number': {
      const value = typeof raw === 'number' ? raw : typeof raw === 'string' && raw.trim() !== '' ? Number(raw) : NaN;
      return Number.isFinite(value) ? { ok: true, value } : { ok: false, problem: `${show(raw)} is not a number` };
    }
    case 'boolean': {
      if (typeof raw === 'boolean') return { ok: true, value: raw };
      const word = String(raw).trim().toLowerCase();
      if (word === 'true' || word === '1') return { ok: true, value: true };
      if (word === 'false' || word === '0') return { ok: true, value: false };
      return { ok: false, problem: `${show(raw)} is not true/false/1/0` };
    }
    case 'time': {
      if (typeof raw === 'number' && Number.isFinite(raw)) return { ok: true, value: raw };
      if (typeof raw === 'string') {
        const trimmed = raw.trim();
        const value = /^\d+(\.\d+)?$/.test(trimmed) ? Number(trimmed) : Date.parse(trimmed);
        if (Number.isFinite(value)) return { ok: true, value };
      }
      return { ok: false, problem: `${show(raw)} is not unix milliseconds or an ISO 8601 time` };
    }
    case 'enum': {
      if (typeof raw === 'string') {
        const exact = kind.values.find((v) => v === raw.trim()) ?? kind.values.find((v) => v.toLowerCase() === raw.trim().toLowerCase());
        if (exact !== undefined) return { ok: true, value: exact };
      }
      return { ok: false, problem: `${show(raw)} is not one of ${kind.values.join(', ')}` };
    }
  }
}

/** Applies an item's `map` (vendor word → value) and then coerces; an unmapped word is coerced as it is. */
export function mapAndCoerce(kind: ItemKind, raw: unknown, map: Readonly<Record<string, ItemValue>> | undefined): Coerced {
  if (map !== undefined && raw !== null && typeof raw !== 'object') {
    const key = String(raw).trim();
    const mapped = map[key];
    if (mapped !== undefined) return coerce(kind, mapped);
    const direct = coerce(kind, raw);
    if (direct.ok) return direct;
    return { ok: false, problem: `${show(raw)} is neither in map (${Object.keys(map).join(', ')}) nor itself valid: ${direct.problem}` };
  }
  return coerce(kind, raw);
}

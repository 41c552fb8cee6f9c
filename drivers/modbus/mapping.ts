/**
 * Decoded register values → family values. Fields a section leaves out are
 * either derived from what was read (documented in docs/drivers/modbus.md) or
 * omitted when the family shape allows it; nothing is made up.
 */
import {
  worstAlarmLevel,
  type ActiveAlarm, type AlarmLevel, type AxisLoad, type AxisPosition, type CncStatus, type ExecutionState, type FeedAndSpindle, type OperatingMode,
  type PartCount, type TimeData, type ToolNumber,
} from '../../core/driver-seam/driver.js';
import { GatewayError } from '../../core/interfaces/errors.js';
import type { DecodedValue } from './codec.js';
import type { MapItem } from './register-items.js';
import type { RegisterMap } from './register-map.js';

/** Decoded values of one read, by item path (`status.mode`, `axes[0].absolute`). */
export type ReadValues = ReadonlyMap<string, DecodedValue>;

/** Reads fields of one section from decoded values. */
class Fields {
  constructor(
    private readonly values: ReadValues,
    private readonly prefix: string,
  ) {}

  private raw(key: string, item: MapItem): DecodedValue {
    if (item.source === 'constant') return item.value;
    const value = this.values.get(`${this.prefix}.${key}`);
    if (value === undefined) throw new GatewayError('DRIVER_REQUEST_FAILED', `modbus: ${this.prefix}.${key} was not read`);
    return value;
  }

  number(key: string, item: MapItem): number {
    return Number(this.raw(key, item));
  }

  optionalNumber(key: string, item: MapItem | undefined): number | undefined {
    return item ? this.number(key, item) : undefined;
  }

  bool(key: string, item: MapItem): boolean {
    const value = this.raw(key, item);
    return typeof value === 'boolean' ? value : Number(value) !== 0;
  }

  text(key: string, item: MapItem): string {
    const value = this.raw(key, item);
    if (item.source === 'register' && item.enumeration && typeof value === 'number') return item.enumeration.get(value) ?? String(value);
    return String(value);
  }

  /** An enumerated value; a code the enumeration does not list fails the read unless `fallback` is given. */
  choice<T extends string>(key: string, item: MapItem, fallback?: T): T {
    const value = this.raw(key, item);
    if (item.source === 'constant') return value as T;
    const label = typeof value === 'number' ? item.enumeration?.get(value) : undefined;
    if (label !== undefined) return label as T;
    if (fallback !== undefined) return fallback;
    const listed = [...(item.enumeration?.keys() ?? [])].join(', ');
    throw new GatewayError('DRIVER_REQUEST_FAILED', `modbus: ${this.prefix}.${key} read code ${String(value)}, which its enum does not list (${listed})`);
  }
}

/** The active alarms of the alarm slots; `firstSeen` remembers when each slot's code appeared, for slots without `since`. */
export function alarmsFrom(map: RegisterMap, values: ReadValues, firstSeen: Map<number, { code: string; since: number }>, now: number): ActiveAlarm[] {
  const active: ActiveAlarm[] = [];
  (map.alarms ?? []).forEach((slot, i) => {
    const f = new Fields(values, `alarms[${i}]`);
    const code = f.text('code', slot.code);
    if (code === '' || code === '0') {
      firstSeen.delete(i);
      return;
    }
    let since = f.optionalNumber('since', slot.since);
    if (since === undefined || since <= 0) {
      const seen = firstSeen.get(i);
      since = seen && seen.code === code ? seen.since : now;
      firstSeen.set(i, { code, since });
    }
    active.push({ code, message: f.text('message', slot.message), level: f.choice('level', slot.level), since: Math.round(since) });
  });
  return active;
}

/** The status; `alarms` is given when the map has no alarmLevel nor alarmStatus and the level comes from the alarm slots. */
export function statusFrom(map: RegisterMap, values: ReadValues, now: number, alarms?: readonly ActiveAlarm[]): CncStatus {
  const section = map.status;
  if (!section) throw new GatewayError('DRIVER_FAMILY_UNSUPPORTED', "driver 'modbus' does not support item family 'status'");
  const f = new Fields(values, 'status');
  const reported = f.choice<ExecutionState>('adjustedStatus', section.adjustedStatus);
  const emergency = section.emergency ? f.bool('emergency', section.emergency) : reported === 'EMERGENCY';
  // An engaged emergency stop is the most severe state, whatever the other registers say
  // (docs/derived-states.md, "Emergency stop"): every driver reports it the same way.
  const adjustedStatus: ExecutionState = emergency ? 'EMERGENCY' : reported;
  let alarmLevel: AlarmLevel;
  if (section.alarmLevel) alarmLevel = f.choice<AlarmLevel>('alarmLevel', section.alarmLevel);
  else if (section.alarmStatus) alarmLevel = f.bool('alarmStatus', section.alarmStatus) ? 'alarm' : 'none';
  else alarmLevel = worstAlarmLevel(alarms ?? []);
  if (emergency) alarmLevel = 'emergency';
  const alarmStatus = emergency || (section.alarmStatus ? f.bool('alarmStatus', section.alarmStatus) : alarmLevel === 'alarm');
  const raw = values.get('status.adjustedStatus');
  const status: CncStatus = {
    cncStatus: section.cncStatus ? f.text('cncStatus', section.cncStatus) : String(raw ?? reported),
    adjustedStatus,
    alarmStatus,
    alarmLevel,
    mode: section.mode ? f.choice<OperatingMode>('mode', section.mode, 'UNKNOWN') : 'UNKNOWN',
    programStatus: section.programStatus
      ? f.choice('programStatus', section.programStatus)
      : adjustedStatus === 'RUNNING' ? 'running' : adjustedStatus === 'HOLD' ? 'hold' : 'stopped',
    emergency,
    time: now,
  };
  if (section.program) {
    const program = f.text('program', section.program);
    if (program !== '') status.program = program;
  }
  return status;
}

export function feedAndSpindleFrom(section: NonNullable<RegisterMap['feedAndSpindle']>, values: ReadValues): FeedAndSpindle {
  const f = new Fields(values, 'feedAndSpindle');
  return {
    feedRate: f.number('feedRate', section.feedRate),
    feedOverride: f.number('feedOverride', section.feedOverride),
    spindleSpeed: f.number('spindleSpeed', section.spindleSpeed),
    spindleOverride: f.number('spindleOverride', section.spindleOverride),
    rapidOverride: f.number('rapidOverride', section.rapidOverride),
  };
}

export function toolNumberFrom(section: NonNullable<RegisterMap['toolNumber']>, values: ReadValues): ToolNumber {
  const f = new Fields(values, 'toolNumber');
  const offsetNumber = f.optionalNumber('offsetNumber', section.offsetNumber);
  return { toolNumber: f.number('toolNumber', section.toolNumber), ...(offsetNumber !== undefined ? { offsetNumber } : {}) };
}

export function timeDataFrom(section: NonNullable<RegisterMap['timeData']>, values: ReadValues): TimeData {
  const f = new Fields(values, 'timeData');
  return {
    powerOnTime: f.number('powerOnTime', section.powerOnTime),
    operatingTime: f.number('operatingTime', section.operatingTime),
    cuttingTime: f.number('cuttingTime', section.cuttingTime),
    cycleTime: f.number('cycleTime', section.cycleTime),
  };
}

export function countFrom(section: NonNullable<RegisterMap['count']>, values: ReadValues): PartCount {
  const f = new Fields(values, 'count');
  const count: PartCount = { partCount: f.number('partCount', section.partCount), partsTotal: f.number('partsTotal', section.partsTotal) };
  const partsRequired = f.optionalNumber('partsRequired', section.partsRequired);
  const lastCycleTime = f.optionalNumber('lastCycleTime', section.lastCycleTime);
  if (partsRequired !== undefined) count.partsRequired = partsRequired;
  if (lastCycleTime !== undefined) count.lastCycleTime = lastCycleTime;
  if (section.program) {
    const program = f.text('program', section.program);
    if (program !== '') count.program = program;
  }
  return count;
}

/** Axis positions of the slots whose name is not empty. */
export function positionsFrom(slots: NonNullable<RegisterMap['axes']>, values: ReadValues): AxisPosition[] {
  const out: AxisPosition[] = [];
  slots.forEach((slot, i) => {
    const f = new Fields(values, `axes[${i}]`);
    const axis = f.text('name', slot.name);
    if (axis === '') return;
    out.push({
      axis,
      absolute: f.number('absolute', slot.absolute),
      machine: f.number('machine', slot.machine),
      relative: f.number('relative', slot.relative),
      distanceToGo: f.number('distanceToGo', slot.distanceToGo),
      unit: f.choice('unit', slot.unit),
    });
  });
  return out;
}

/** Loads of the slots whose name is not empty. */
export function loadsFrom(slots: NonNullable<RegisterMap['loads']>, values: ReadValues): AxisLoad[] {
  const out: AxisLoad[] = [];
  slots.forEach((slot, i) => {
    const f = new Fields(values, `loads[${i}]`);
    const name = f.text('name', slot.name);
    if (name !== '') out.push({ name, loadPercent: f.number('loadPercent', slot.loadPercent) });
  });
  return out;
}

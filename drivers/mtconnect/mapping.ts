/**
 * MTConnect observations → the shapes of FamilyValues. The table is in
 * docs/drivers/mtconnect.md: EXECUTION gives the execution state (its word
 * kept as cncStatus), CONTROLLER_MODE the mode, EMERGENCY_STOP the stop,
 * the active WARNING and FAULT entries of every condition the alarms, and so
 * on. A value that is missing or UNAVAILABLE is said so, never made up.
 */
import {
  worstAlarmLevel,
  type ActiveAlarm, type AlarmLevel, type CncStatus, type ExecutionState, type FamilyValues, type OperatingMode, type ReadOptions, type ReadableFamily,
} from '../../core/driver-seam/driver.js';
import type { DataItem } from './device-model.js';
import { UNAVAILABLE, type ObservationStore, type Observed } from './observations.js';
import type { Roles } from './roles.js';

/** EXECUTION (2.x, and 1.x's IDLE, EXECUTING, PAUSED) → the gateway's execution state. */
export const EXECUTION_STATES: Readonly<Record<string, ExecutionState>> = {
  ACTIVE: 'RUNNING',
  READY: 'RESET',
  PROGRAM_COMPLETED: 'RESET',
  STOPPED: 'STOPPED',
  OPTIONAL_STOP: 'STOPPED',
  PROGRAM_STOPPED: 'STOPPED',
  FEED_HOLD: 'HOLD',
  INTERRUPTED: 'HOLD',
  WAIT: 'HOLD',
  IDLE: 'RESET',
  EXECUTING: 'RUNNING',
  PAUSED: 'HOLD',
};

/** CONTROLLER_MODE → the gateway's operating mode; any other word is UNKNOWN. */
export const CONTROLLER_MODES: Readonly<Record<string, OperatingMode>> = {
  AUTOMATIC: 'AUTO',
  SEMI_AUTOMATIC: 'AUTO',
  MANUAL: 'MANUAL',
  MANUAL_DATA_INPUT: 'MDI',
  EDIT: 'EDIT',
};

/** A condition entry's level → the alarm level. */
const CONDITION_ALARM_LEVELS: Readonly<Record<'WARNING' | 'FAULT', Exclude<AlarmLevel, 'none'>>> = { WARNING: 'warning', FAULT: 'alarm' };

/** The longest alarm message kept. */
const MAX_MESSAGE = 256;

export type FamilyRead<T> = { kind: 'value'; value: T } | { kind: 'missing'; detail: string } | { kind: 'invalid'; detail: string };

const label = (item: DataItem): string => `${item.type}${item.subType ? `:${item.subType}` : ''} '${item.name ?? item.id}'`;

/** Collects the observations a family needs and the first reason one is missing or wrong. */
class Gather {
  private problem: { kind: 'missing' | 'invalid'; detail: string } | undefined;
  /** The newest observation time used. */
  newest = 0;

  constructor(
    readonly store: ObservationStore,
    readonly roles: Roles,
  ) {}

  /** A value the family needs: missing while there is no data item, no value yet, or UNAVAILABLE. */
  need(item: DataItem | undefined, field: string): Observed | undefined {
    if (!item) return this.note('missing', `the device has no data item for ${field}`);
    const observed = this.want(item);
    if (!observed) {
      const seen = this.store.value(item.id);
      return this.note('missing', seen ? `${label(item)} is UNAVAILABLE` : `no value received for ${label(item)}`);
    }
    return observed;
  }

  /** An optional value: undefined when absent or UNAVAILABLE. */
  want(item: DataItem | undefined): Observed | undefined {
    const observed = item ? this.store.value(item.id) : undefined;
    if (!observed || observed.value === UNAVAILABLE) return undefined;
    this.newest = Math.max(this.newest, observed.timestamp);
    return observed;
  }

  number(item: DataItem | undefined, field: string, scale = 1): number {
    const observed = this.need(item, field);
    if (!observed || !item) return NaN;
    const n = Number(observed.value);
    if (observed.value.trim() === '' || !Number.isFinite(n)) this.note('invalid', `${label(item)} is '${observed.value.slice(0, 40)}', not a number`);
    return n * scale;
  }

  note(kind: 'missing' | 'invalid', detail: string): undefined {
    if (!this.problem || (kind === 'invalid' && this.problem.kind === 'missing')) this.problem = { kind, detail };
    return undefined;
  }

  result<T>(build: () => T): FamilyRead<T> {
    return this.problem ? { ...this.problem } : { kind: 'value', value: build() };
  }
}

/** The active WARNING and FAULT entries of every condition, as alarms. */
export function alarmsOf(store: ObservationStore, conditions: readonly DataItem[]): ActiveAlarm[] {
  const alarms: ActiveAlarm[] = [];
  for (const item of conditions) {
    const state = store.condition(item.id);
    if (!state) continue;
    for (const entry of state.active.values()) {
      const message = entry.message || `${item.type} ${entry.level}${entry.qualifier ? ` ${entry.qualifier}` : ''}`;
      alarms.push({
        code: entry.nativeCode || item.type,
        message: message.length > MAX_MESSAGE ? `${message.slice(0, MAX_MESSAGE - 1)}…` : message,
        level: CONDITION_ALARM_LEVELS[entry.level],
        since: entry.since,
      });
    }
  }
  return alarms;
}

function readStatus(g: Gather): FamilyRead<CncStatus> {
  const { roles } = g;
  const execution = g.need(roles.execution, 'EXECUTION');
  const reported = execution ? EXECUTION_STATES[execution.value.toUpperCase()] : undefined;
  if (execution && !reported) {
    g.note('invalid', `${label(roles.execution!)} is '${execution.value.slice(0, 40)}'; accepted: ${Object.keys(EXECUTION_STATES).join(', ')}`);
  }
  const mode = g.want(roles.controllerMode);
  const stop = g.want(roles.emergencyStop);
  const program = g.want(roles.program);
  const alarms = alarmsOf(g.store, roles.conditions);
  return g.result(() => {
    // An engaged emergency stop is the most severe state whatever else is reported (docs/derived-states.md).
    const engaged = stop ? stop.value.toUpperCase() === 'TRIGGERED' : false;
    const state: ExecutionState = engaged ? 'EMERGENCY' : (reported as ExecutionState);
    const level: AlarmLevel = engaged ? 'emergency' : worstAlarmLevel(alarms);
    const programName = program?.value ?? '';
    return {
      cncStatus: execution!.value,
      adjustedStatus: state,
      alarmStatus: engaged || level === 'alarm',
      alarmLevel: level,
      mode: (mode && CONTROLLER_MODES[mode.value.toUpperCase()]) ?? 'UNKNOWN',
      programStatus: roles.program && programName === '' ? 'none' : state === 'RUNNING' ? 'running' : state === 'HOLD' ? 'hold' : 'stopped',
      emergency: engaged,
      ...(programName !== '' ? { program: programName } : {}),
      time: g.newest,
    };
  });
}

/** PATH_FEEDRATE is in MILLIMETER/SECOND unless its units say otherwise; the family wants mm/min. */
const feedScale = (item: DataItem | undefined): number => (item?.units === undefined || item.units === 'MILLIMETER/SECOND' ? 60 : 1);

type Readers = { [F in ReadableFamily]?: (g: Gather, options: ReadOptions) => FamilyRead<FamilyValues[F]> };

const READERS: Readers = {
  status: readStatus,
  alarm: (g) => g.result(() => alarmsOf(g.store, g.roles.conditions)),
  count: (g) => {
    const partCount = g.number(g.roles.partCount, 'PART_COUNT');
    const target = g.want(g.roles.partsRequired);
    const program = g.want(g.roles.program);
    const required = target ? Number(target.value) : NaN;
    return g.result(() => ({
      partCount,
      ...(Number.isFinite(required) ? { partsRequired: required } : {}),
      // MTConnect has no counter that operators never reset: the total is the part count (docs/drivers/mtconnect.md).
      partsTotal: partCount,
      ...(program && program.value !== '' ? { program: program.value } : {}),
    }));
  },
  toolNumber: (g) => {
    const toolNumber = g.number(g.roles.toolNumber, 'TOOL_NUMBER');
    return g.result(() => ({ toolNumber }));
  },
  feedAndSpindle: (g) => {
    const r = g.roles;
    const values = {
      feedRate: g.number(r.feedRate, 'PATH_FEEDRATE', feedScale(r.feedRate)),
      feedOverride: g.number(r.feedOverride, 'PATH_FEEDRATE_OVERRIDE'),
      spindleSpeed: g.number(r.spindleSpeed, 'ROTARY_VELOCITY'),
      spindleOverride: g.number(r.spindleOverride, 'ROTARY_VELOCITY_OVERRIDE'),
      rapidOverride: g.number(r.rapidOverride, 'PATH_FEEDRATE_OVERRIDE:RAPID'),
    };
    return g.result(() => values);
  },
  timeData: (g) => {
    const r = g.roles;
    const values = {
      powerOnTime: g.number(r.powerOnTime, 'EQUIPMENT_TIMER:POWERED'),
      operatingTime: g.number(r.operatingTime, 'EQUIPMENT_TIMER:OPERATING'),
      cuttingTime: g.number(r.cuttingTime, 'EQUIPMENT_TIMER:WORKING'),
      cycleTime: g.number(r.cycleTime, 'PROCESS_TIMER:PROCESS'),
    };
    return g.result(() => values);
  },
  load: (g) => {
    const loads = g.roles.loads.flatMap((item) => {
      const observed = g.want(item);
      if (!observed) return [];
      const loadPercent = Number(observed.value);
      if (!Number.isFinite(loadPercent)) return g.note('invalid', `${label(item)} is '${observed.value.slice(0, 40)}', not a number`) ?? [];
      return [{ name: item.component.name ?? item.name ?? item.id, loadPercent }];
    });
    if (loads.length === 0) g.note('missing', 'no axis LOAD has a value');
    return g.result(() => loads);
  },
  toolLife: (g, options) =>
    g.result(() =>
      g.store.toolLife().filter((t) => (options.toolNum === undefined || t.toolNum === options.toolNum) && (options.groupNum === undefined || t.groupNum === options.groupNum)),
    ),
};

/** Reads `family` from the store; the family must be one the client serves. */
export function readFamily<F extends ReadableFamily>(store: ObservationStore, roles: Roles, family: F, options: ReadOptions = {}): FamilyRead<FamilyValues[F]> {
  const reader = READERS[family] as ((g: Gather, options: ReadOptions) => FamilyRead<FamilyValues[F]>) | undefined;
  if (!reader) return { kind: 'invalid', detail: `family ${family} has no MTConnect mapping` };
  return reader(new Gather(store, roles), options);
}

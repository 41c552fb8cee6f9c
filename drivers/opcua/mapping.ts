/**
 * From OPC 40501 (OPC UA for Machine Tools) values to the gateway's item
 * families. Pure functions: the table in docs/drivers/opcua.md is this file.
 */
import {
  worstAlarmLevel,
  type ActiveAlarm, type AlarmLevel, type CncStatus, type ExecutionState, type OperatingMode, type ToolLifeRecord,
} from '../../core/driver-seam/driver.js';

export const MACHINE_TOOL_NS = 'http://opcfoundation.org/UA/MachineTool/';
export const MACHINERY_NS = 'http://opcfoundation.org/UA/Machinery/';
export const DI_NS = 'http://opcfoundation.org/UA/DI/';

/** MachineTool `ChannelState` enumeration, by value. */
export const CHANNEL_STATES = ['Active', 'Interrupted', 'Reset'] as const;
/** MachineTool `ChannelMode` enumeration, by value. */
export const CHANNEL_MODES = ['Automatic', 'MdaMdi', 'JogManual', 'JogIncrement', 'TeachingHandle', 'Remote', 'Reference', 'Other'] as const;
/** MachineTool `ToolLifeIndication` enumeration, by value. */
export const TOOL_LIFE_INDICATIONS = ['Time', 'NumberOfParts', 'NumberOfUsages', 'Feed_Distance', 'Cutting_Distance', 'Length', 'Diameter', 'Other'] as const;
/** MachineTool `ToolManagement` enumeration, by value. */
export const TOOL_MANAGEMENT = ['NumberBased', 'GroupBased', 'Other'] as const;

const MODES: Record<(typeof CHANNEL_MODES)[number], OperatingMode> = {
  Automatic: 'AUTO',
  MdaMdi: 'MDI',
  JogManual: 'JOG',
  JogIncrement: 'JOG',
  TeachingHandle: 'HANDLE',
  Remote: 'REMOTE',
  Reference: 'REF',
  Other: 'UNKNOWN',
};

/** One condition instance under Notification/Messages, as read. */
export interface ConditionReading {
  /** ConditionName, or the condition's BrowseName when it has none. */
  code: string;
  active: boolean;
  message: string;
  severity: number;
  /** Unix ms of the condition's last change; undefined when the server gives none. */
  time: number | undefined;
}

export interface SeverityBounds {
  alarmSeverity: number;
  emergencySeverity: number;
}

export function levelOfSeverity(severity: number, bounds: SeverityBounds): Exclude<AlarmLevel, 'none'> {
  if (severity >= bounds.emergencySeverity) return 'emergency';
  return severity >= bounds.alarmSeverity ? 'alarm' : 'warning';
}

/** The active conditions as alarms, most severe first. */
export function toAlarms(conditions: readonly ConditionReading[], bounds: SeverityBounds, now: number): ActiveAlarm[] {
  return conditions
    .filter((c) => c.active)
    .sort((a, b) => b.severity - a.severity)
    .map((c) => ({ code: c.code, message: c.message, level: levelOfSeverity(c.severity, bounds), since: c.time ?? now }));
}

/** The status values read from the machine; everything but the channel state is optional in the model. */
export interface StatusReading {
  channelState: number;
  channelMode: number | undefined;
  programName: string | undefined;
  /** CurrentState text of ActiveProgram/State (Initializing, Running, Ended, Interrupted, Aborted). */
  programState: string | undefined;
  alarms: readonly ActiveAlarm[];
  time: number;
}

/** The raw text of a ChannelState value: its enumeration name, or the number when out of range. */
export function channelStateText(value: number): string {
  return CHANNEL_STATES[value] ?? String(value);
}

export function toCncStatus(r: StatusReading): CncStatus {
  const alarmLevel = worstAlarmLevel(r.alarms);
  const emergency = alarmLevel === 'emergency';
  const state = CHANNEL_STATES[r.channelState];
  let adjustedStatus: ExecutionState;
  if (emergency) adjustedStatus = 'EMERGENCY';
  else if (state === 'Active') adjustedStatus = 'RUNNING';
  else if (state === 'Interrupted') adjustedStatus = alarmLevel === 'alarm' || r.programState === 'Aborted' ? 'STOPPED' : 'HOLD';
  else if (state === 'Reset') adjustedStatus = 'RESET';
  else adjustedStatus = 'STOPPED';
  const modeName = r.channelMode === undefined ? undefined : CHANNEL_MODES[r.channelMode];
  const program = r.programName?.trim() ? r.programName.trim() : undefined;
  return {
    cncStatus: channelStateText(r.channelState),
    adjustedStatus,
    alarmStatus: alarmLevel === 'alarm' || alarmLevel === 'emergency',
    alarmLevel,
    mode: modeName ? MODES[modeName] : 'UNKNOWN',
    programStatus: programStatusOf(program, r.programState, adjustedStatus),
    emergency,
    ...(program ? { program } : {}),
    time: r.time,
  };
}

function programStatusOf(program: string | undefined, programState: string | undefined, adjusted: ExecutionState): CncStatus['programStatus'] {
  if (program === undefined) return 'none';
  switch (programState) {
    case 'Running': return 'running';
    case 'Interrupted': return 'hold';
    case 'Initializing': case 'Ended': case 'Aborted': return 'stopped';
    default:
      // No program state machine on this server: the channel says what the program does.
      return adjusted === 'RUNNING' ? 'running' : adjusted === 'HOLD' ? 'hold' : 'stopped';
  }
}

/** One tool's identifiers and life values, as read from Equipment/Tools/<Tool>. */
export interface ToolReading {
  controlIdentifier1: number;
  controlIdentifier2: number | undefined;
  /** ToolManagement value: 0 NumberBased, 1 GroupBased. */
  interpretation: number | undefined;
  life: ToolLifeReading[];
}

/** One ToolLifeType variable of a tool. */
export interface ToolLifeReading {
  value: number;
  indication: number;
  isCountingUp: boolean;
  limitValue: number | undefined;
  startValue: number | undefined;
  /** UNECE unit id of EngineeringUnits, when given (time indications). */
  unitId: number | undefined;
}

/** UNECE common codes as OPC UA unit ids (EUInformation.unitId). */
const SECONDS_UNIT = 5457219; // SEC
const HOURS_UNIT = 4740434; // HUR

function toMinutes(value: number, unitId: number | undefined): number {
  if (unitId === SECONDS_UNIT) return value / 60;
  if (unitId === HOURS_UNIT) return value * 60;
  return value;
}

/**
 * A tool's life record from its first count or time indication. GroupBased
 * tools give the group in ControlIdentifier1 and the tool in ControlIdentifier2;
 * the model has no offset number, so offsetNum is 0, as is groupNum for
 * NumberBased tools.
 */
export function toToolLifeRecord(tool: ToolReading): ToolLifeRecord | undefined {
  const grouped = TOOL_MANAGEMENT[tool.interpretation ?? 0] === 'GroupBased' && tool.controlIdentifier2 !== undefined;
  for (const life of tool.life) {
    const indication = TOOL_LIFE_INDICATIONS[life.indication];
    const unit = indication === 'Time' ? 'minutes' : indication === 'NumberOfParts' || indication === 'NumberOfUsages' ? 'count' : undefined;
    if (unit === undefined) continue;
    const scale = (v: number) => (unit === 'minutes' ? toMinutes(v, life.unitId) : v);
    let used: number;
    let limit: number;
    if (life.isCountingUp) {
      if (life.limitValue === undefined) continue;
      const start = life.startValue ?? 0;
      used = life.value - start;
      limit = life.limitValue - start;
    } else {
      if (life.startValue === undefined) continue;
      used = life.startValue - life.value;
      limit = life.startValue - (life.limitValue ?? 0);
    }
    if (limit <= 0) continue;
    return {
      toolNum: grouped ? (tool.controlIdentifier2 ?? 0) : tool.controlIdentifier1,
      groupNum: grouped ? tool.controlIdentifier1 : 0,
      offsetNum: 0,
      used: scale(used),
      limit: scale(limit),
      unit,
      remainingPercent: Math.max(0, Math.round((1 - used / limit) * 1000) / 10),
    };
  }
  return undefined;
}

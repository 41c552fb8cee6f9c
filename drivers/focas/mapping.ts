/**
 * FOCAS structures → the gateway's item families. Pure functions, so the
 * tables below are the whole story (and are what docs/drivers/focas.md shows).
 */
import type {
  ActiveAlarm, AlarmLevel, AxisLoad, AxisPosition, CncStatus, ExecutionState, FeedAndSpindle, OperatingMode, PartCount, ProgramFileEntry,
  TimeData, ToolLifeRecord,
} from '../../core/driver-seam/driver.js';
import { GatewayError } from '../../core/interfaces/errors.js';
import { blockText } from '../../core/values/program-bytes.js';
import { OVERRIDE_SIGNALS, PARAM, POSITION_UNIT, SPEED_UNIT, type BridgeResponse, type FocasDate, type Odbst, type ScaledValue } from './protocol.js';

/** ODBST.run texts as the FANUC status line shows them. */
export const RUN_TEXT = ['****', 'STOP', 'HOLD', 'STRT', 'MSTR'] as const;
const RUN_STATE: readonly ExecutionState[] = ['RESET', 'STOPPED', 'HOLD', 'RUNNING', 'STOPPED'];

/** ODBST.aut → mode. 1 MEM (memory operation) and 10 RMT (DNC) are automatic operation. */
export const AUT_MODE: Readonly<Record<number, OperatingMode>> = {
  0: 'MDI', 1: 'AUTO', 2: 'UNKNOWN', 3: 'EDIT', 4: 'HANDLE', 5: 'JOG', 6: 'JOG', 7: 'HANDLE', 8: 'MANUAL', 9: 'REF', 10: 'REMOTE',
};
/** ODBST.emergency values. */
export const EMERGENCY = { NONE: 0, EMG: 1, RESET: 2, WAIT: 3 } as const;
/** ODBST.alarm: 0 none, 1 ALM; 2–8 are battery, fan and other warnings that do not stop the CNC. */
export const ODBST_ALARM = { NONE: 0, ALM: 1 } as const;

/** What the status read returned. */
export interface StatusReading {
  statinfo: Odbst;
  exeprg: BridgeResponse<'cnc_exeprgname'>['exeprg'];
  /** Operator messages (warnings) active. */
  operatorMessages: number;
}

export function toCncStatus({ statinfo: st, exeprg, operatorMessages }: StatusReading, now: number): CncStatus {
  const emergency = st.emergency === EMERGENCY.EMG;
  const runText = RUN_TEXT[st.run] ?? `run ${st.run}`;
  let adjustedStatus: ExecutionState = RUN_STATE[st.run] ?? 'STOPPED';
  if (st.emergency === EMERGENCY.RESET && adjustedStatus !== 'RUNNING') adjustedStatus = 'RESET';
  if (emergency) adjustedStatus = 'EMERGENCY';
  let alarmLevel: AlarmLevel = 'none';
  if (emergency) alarmLevel = 'emergency';
  else if (st.alarm === ODBST_ALARM.ALM) alarmLevel = 'alarm';
  else if (st.alarm !== ODBST_ALARM.NONE || operatorMessages > 0) alarmLevel = 'warning';
  const program = exeprg.name.trim();
  const programStatus = st.run === 3 ? 'running' : st.run === 2 ? 'hold' : program === '' && exeprg.o_num === 0 ? 'none' : 'stopped';
  return {
    cncStatus: emergency ? '-EMG-' : runText,
    adjustedStatus,
    alarmStatus: alarmLevel === 'alarm' || alarmLevel === 'emergency',
    alarmLevel,
    mode: AUT_MODE[st.aut] ?? 'UNKNOWN',
    programStatus,
    emergency,
    ...(program !== '' ? { program } : exeprg.o_num > 0 ? { program: `O${exeprg.o_num}` } : {}),
    time: now,
  };
}

/** ODBALMMSG.type → the prefix FANUC shows before the alarm number (SV0401). */
export const ALARM_TYPE_PREFIX: Readonly<Record<number, string>> = {
  0: 'SW', 1: 'PW', 2: 'IO', 3: 'PS', 4: 'OT', 5: 'OH', 6: 'SV', 7: 'SR', 8: 'MC', 9: 'SP', 10: 'DS', 11: 'IE', 12: 'BG', 13: 'SN', 15: 'EX', 19: 'PC',
};

export type AlarmEntry = Omit<ActiveAlarm, 'since'>;

/** Alarms (cnc_rdalmmsg) and operator messages (cnc_rdopmsg) as alarm entries, without their start time. */
export function toAlarmEntries(
  almmsg: BridgeResponse<'cnc_rdalmmsg'>['almmsg'],
  opmsg: BridgeResponse<'cnc_rdopmsg'>['opmsg'],
  emergency: boolean,
): AlarmEntry[] {
  const alarms: AlarmEntry[] = almmsg.map((a) => ({
    code: `${ALARM_TYPE_PREFIX[a.type] ?? `T${a.type}-`}${String(a.alm_no).padStart(4, '0')}`,
    message: a.alm_msg.slice(0, a.msg_len > 0 ? a.msg_len : undefined).trim(),
    level: emergency ? 'emergency' : 'alarm',
  }));
  // datano -1 is an empty message slot.
  const warnings: AlarmEntry[] = opmsg
    .filter((m) => m.datano >= 0)
    .map((m) => ({ code: String(m.datano), message: m.data.slice(0, m.char_num > 0 ? m.char_num : undefined).trim(), level: 'warning' }));
  return [...alarms, ...warnings];
}

/**
 * FOCAS alarm reads carry no time, so `since` is when this driver first saw
 * the alarm; an alarm that clears and comes back starts anew.
 */
export class AlarmFirstSeen {
  private readonly seen = new Map<string, number>();

  stamp(entries: readonly AlarmEntry[], now: number): ActiveAlarm[] {
    const active = new Map<string, number>();
    const stamped = entries.map((entry) => {
      const key = `${entry.level}|${entry.code}|${entry.message}`;
      const since = this.seen.get(key) ?? now;
      active.set(key, since);
      return { ...entry, since };
    });
    this.seen.clear();
    for (const [key, since] of active) this.seen.set(key, since);
    return stamped;
  }
}

/** value = data / 10^dec. */
export const scaled = (v: Pick<ScaledValue, 'data' | 'dec'>): number => v.data / 10 ** v.dec;
const round3 = (value: number): number => Math.round(value * 1000) / 1000;
const axisName = (v: ScaledValue): string => `${v.name}${v.suff}`.trim();

/** The feed in mm/min, converted from whatever unit SPEEDELM reports. */
function feedMmPerMin(actf: ScaledValue): number {
  const value = scaled(actf);
  return actf.unit === SPEED_UNIT.INCH_PER_MIN ? value * 25.4 : value;
}

/** ROV1/ROV2 of G0014 → rapid override percent; F0 (both bits) is reported as 0. */
const RAPID_OVERRIDE = [100, 50, 25, 0] as const;

/** cnc_rdspeed (or cnc_actf/cnc_acts) plus the override signals read from the PMC G area. */
export function toFeedAndSpindle(feed: ScaledValue, spindleRpm: number, pmc: BridgeResponse<'pmc_rdpmcrng'>['pmc']): FeedAndSpindle {
  const byte = (address: number): number => {
    const value = pmc.cdata[address - pmc.datano_s];
    if (value === undefined) throw new GatewayError('DRIVER_REQUEST_FAILED', `focas: pmc_rdpmcrng returned no byte for G${address}`);
    return value;
  };
  return {
    feedRate: round3(feedMmPerMin(feed)),
    feedOverride: ~byte(OVERRIDE_SIGNALS.FEED) & 0xff,
    spindleSpeed: spindleRpm,
    spindleOverride: byte(OVERRIDE_SIGNALS.SPINDLE),
    rapidOverride: RAPID_OVERRIDE[byte(OVERRIDE_SIGNALS.RAPID) & 0b11] ?? 100,
  };
}

const POSITION_UNITS: Readonly<Record<number, AxisPosition['unit']>> = { [POSITION_UNIT.MM]: 'mm', [POSITION_UNIT.INCH]: 'inch', [POSITION_UNIT.DEGREE]: 'deg' };

export function toPositions(pos: BridgeResponse<'cnc_rdposition'>['pos']): AxisPosition[] {
  return pos.map((p) => ({
    axis: axisName(p.abs),
    absolute: round3(scaled(p.abs)),
    machine: round3(scaled(p.mach)),
    relative: round3(scaled(p.rel)),
    distanceToGo: round3(scaled(p.dist)),
    unit: POSITION_UNITS[p.abs.unit] ?? 'mm',
  }));
}

/** Servo loads (cnc_rdsvmeter) then spindle loads (cnc_rdspmeter), percent of rated load. */
export function toLoads(svload: readonly ScaledValue[], spload: readonly ScaledValue[]): AxisLoad[] {
  return [...svload, ...spload].map((l) => ({ name: axisName(l), loadPercent: round3(scaled(l)) }));
}

/** Parameter values by number (cnc_rdparam ldata). */
export type ParamValues = ReadonlyMap<number, number>;

function param(values: ParamValues, datano: number): number {
  const value = values.get(datano);
  if (value === undefined) throw new GatewayError('DRIVER_REQUEST_FAILED', `focas: parameter ${datano} was not read`);
  return value;
}

/** minutes + milliseconds-of-the-minute → seconds. */
const minutesAndMs = (values: ParamValues, min: number, ms: number): number => round3(param(values, min) * 60 + param(values, ms) / 1000);

export const TIME_PARAMS = [PARAM.POWER_ON_MIN, PARAM.OPERATING_MS, PARAM.OPERATING_MIN, PARAM.CUTTING_MS, PARAM.CUTTING_MIN, PARAM.CYCLE_MS, PARAM.CYCLE_MIN] as const;
export const COUNT_PARAMS = [PARAM.PARTS_COUNT, PARAM.PARTS_TOTAL, PARAM.PARTS_REQUIRED] as const;

export function toTimeData(values: ParamValues): TimeData {
  return {
    powerOnTime: param(values, PARAM.POWER_ON_MIN) * 60,
    operatingTime: minutesAndMs(values, PARAM.OPERATING_MIN, PARAM.OPERATING_MS),
    cuttingTime: minutesAndMs(values, PARAM.CUTTING_MIN, PARAM.CUTTING_MS),
    cycleTime: minutesAndMs(values, PARAM.CYCLE_MIN, PARAM.CYCLE_MS),
  };
}

/** 6713 = 0 means the CNC checks no required count, so `partsRequired` is left out. */
export function toPartCount(values: ParamValues): PartCount {
  const required = param(values, PARAM.PARTS_REQUIRED);
  return {
    partCount: param(values, PARAM.PARTS_COUNT),
    partsTotal: param(values, PARAM.PARTS_TOTAL),
    ...(required > 0 ? { partsRequired: required } : {}),
  };
}

/** One tool life group as read: the group (cnc_rdtlgrp) and the tool in use (cnc_rdtltool). */
export interface ToolLifeGroup {
  grpNum: number;
  tlgrp: BridgeResponse<'cnc_rdtlgrp'>['tlgrp'];
  toolInUse: BridgeResponse<'cnc_rdtltool'>['tltool'] | undefined;
}

/** FANUC counts life per group, against the tool in use; count_type 0 counts uses, 1 minutes. */
export function toToolLife(groups: readonly ToolLifeGroup[]): ToolLifeRecord[] {
  return groups
    .filter((g) => g.toolInUse !== undefined && g.tlgrp.life > 0)
    .map(({ grpNum, tlgrp, toolInUse }) => ({
      toolNum: toolInUse?.tool_num ?? tlgrp.use_tool,
      groupNum: grpNum,
      offsetNum: toolInUse?.h_code ?? 0,
      used: tlgrp.count,
      limit: tlgrp.life,
      unit: tlgrp.count_type === 1 ? 'minutes' : 'count',
      remainingPercent: Math.max(0, Math.round((1 - tlgrp.count / tlgrp.life) * 1000) / 10),
    }));
}

/** CNC clock fields → unix ms, read as UTC (FOCAS dates carry no zone). */
export const focasDateToMs = (d: FocasDate): number => Date.UTC(d.year, d.month - 1, d.day, d.hour, d.minute);

/** `O1001` for program number 1001: FANUC pads O-numbers to four digits. */
export const programName = (number: number): string => `O${String(number).padStart(4, '0')}`;

/** `text` reads a comment's data as text (see program-data.ts); as it is by default. */
export function toProgramList(prgdir: BridgeResponse<'cnc_rdprogdir3'>['prgdir'], dir: string, text: (comment: string) => string = (c) => c): ProgramFileEntry[] {
  return prgdir.map((p) => {
    const comment = text(p.comment).trim().replace(/^\((.*)\)$/, '$1').trim();
    return { dir, name: programName(p.number), size: p.length, modified: focasDateToMs(p.mdate), ...(comment ? { comment } : {}) };
  });
}

/**
 * The program name FOCAS takes from the first block of the data (`O1234` or
 * `<NAME>`), or undefined. `content` is the data one character per byte; tape
 * characters (NUL, DC1–DC4, DEL) and a `%` line before it are skipped, as a
 * tape reader skips them.
 */
export function programNameInContent(content: string): string | undefined {
  for (const line of content.split(/\r\n|\r|\n/)) {
    const block = blockText(line);
    if (block === '' || block === '%') continue;
    return /^(O\d{1,8})\b/i.exec(block)?.[1]?.toUpperCase() ?? /^<([^>]+)>/.exec(block)?.[1];
  }
  return undefined;
}

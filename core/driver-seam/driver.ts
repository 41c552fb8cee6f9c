/**
 * The driver seam: every protocol driver implements `DriverClient`, and every
 * driver folder exports a `DriverFactory`. The core never talks to a controller
 * any other way, so tests and new protocols swap in here.
 */
import type { z } from 'zod';
import type { Logger } from 'pino';
import { GatewayError } from '../interfaces/errors.js';
import type { KeptFiles } from '../backup/kept-files.js';

/** Every item family a driver may read. A client declares the subset it supports. */
export const ITEM_FAMILIES = [
  'status',
  'alarm',
  'position',
  'load',
  'feedAndSpindle',
  'toolNumber',
  'timeData',
  'count',
  'toolLife',
  'programList',
  'currentProgram',
  'programFiles',
] as const;
export type ItemFamily = (typeof ITEM_FAMILIES)[number];

/** Controller execution state normalised across vendors. */
export type ExecutionState = 'RUNNING' | 'HOLD' | 'STOPPED' | 'RESET' | 'EMERGENCY';
/** Controller operating mode normalised across vendors. */
export type OperatingMode = 'AUTO' | 'MDI' | 'MANUAL' | 'JOG' | 'HANDLE' | 'EDIT' | 'REF' | 'REMOTE' | 'UNKNOWN';
/** Severity of the most severe active alarm. */
export type AlarmLevel = 'none' | 'warning' | 'alarm' | 'emergency';
/** Every execution state. */
export const EXECUTION_STATES = ['RUNNING', 'HOLD', 'STOPPED', 'RESET', 'EMERGENCY'] as const satisfies readonly ExecutionState[];
/** Every operating mode. */
export const OPERATING_MODES = ['AUTO', 'MDI', 'MANUAL', 'JOG', 'HANDLE', 'EDIT', 'REF', 'REMOTE', 'UNKNOWN'] as const satisfies readonly OperatingMode[];
// Every word of the types is listed: these fail to compile when a type gains one.
const everyState: [ExecutionState] extends [(typeof EXECUTION_STATES)[number]] ? true : false = true;
const everyMode: [OperatingMode] extends [(typeof OPERATING_MODES)[number]] ? true : false = true;
void everyState;
void everyMode;
/** Every alarm level, least severe first. */
export const ALARM_LEVELS = ['none', 'warning', 'alarm', 'emergency'] as const satisfies readonly AlarmLevel[];
/** The levels an active alarm can have. */
export const ACTIVE_ALARM_LEVELS = ['warning', 'alarm', 'emergency'] as const satisfies readonly Exclude<AlarmLevel, 'none'>[];
/** Severity rank of each level: higher is more severe. */
export const ALARM_LEVEL_RANK: Readonly<Record<AlarmLevel, number>> = { none: 0, warning: 1, alarm: 2, emergency: 3 };

/** The level of the most severe alarm of the list; `none` for no alarm. */
export function worstAlarmLevel(alarms: readonly { level: AlarmLevel }[]): AlarmLevel {
  let worst: AlarmLevel = 'none';
  for (const { level } of alarms) if (ALARM_LEVEL_RANK[level] > ALARM_LEVEL_RANK[worst]) worst = level;
  return worst;
}

/** The status sample (data class CNCStatus). */
export interface CncStatus {
  /** Raw vendor execution text, e.g. FANUC `STRT`, Siemens `ACTIVE`. */
  cncStatus: string;
  /** Execution state normalised across vendors. */
  adjustedStatus: ExecutionState;
  /** True while at least one alarm of level `alarm` or `emergency` is active. */
  alarmStatus: boolean;
  alarmLevel: AlarmLevel;
  mode: OperatingMode;
  /** Program execution: running, stopped, hold, or none when no program is selected. */
  programStatus: 'running' | 'stopped' | 'hold' | 'none';
  /** True while the emergency stop is engaged. */
  emergency: boolean;
  /** Name of the selected main program, when known. */
  program?: string;
  /** Controller time of the sample, unix milliseconds. */
  time: number;
}

export interface ActiveAlarm {
  code: string;
  message: string;
  level: Exclude<AlarmLevel, 'none'>;
  /** Unix milliseconds when the alarm became active. */
  since: number;
}

export interface AxisPosition {
  axis: string;
  absolute: number;
  machine: number;
  relative: number;
  distanceToGo: number;
  unit: 'mm' | 'inch' | 'deg';
}

export interface AxisLoad {
  name: string;
  /** Percent of rated load. */
  loadPercent: number;
}

export interface FeedAndSpindle {
  /** Actual feed rate, mm/min. */
  feedRate: number;
  feedOverride: number;
  /** Actual spindle speed, rpm. */
  spindleSpeed: number;
  spindleOverride: number;
  rapidOverride: number;
}

export interface ToolNumber {
  toolNumber: number;
  offsetNumber?: number;
}

/** Cumulative controller timers, all in seconds. */
export interface TimeData {
  powerOnTime: number;
  operatingTime: number;
  cuttingTime: number;
  /** Time of the current (or last) cycle. */
  cycleTime: number;
}

export interface PartCount {
  /** Parts counter as shown on the controller. */
  partCount: number;
  /** Parts required, when the controller has a target. */
  partsRequired?: number;
  /** Total parts counter, never reset by operators. */
  partsTotal: number;
  /** Duration of the last completed cycle, seconds. */
  lastCycleTime?: number;
  /** Program that produced the last part. */
  program?: string;
}

export interface ToolLifeRecord {
  toolNum: number;
  groupNum: number;
  offsetNum: number;
  /** Life consumed, in `unit`. */
  used: number;
  /** Life limit, in `unit`. */
  limit: number;
  unit: 'count' | 'minutes';
  /** Remaining life as a percentage of the limit. */
  remainingPercent: number;
}

export interface ProgramFileEntry {
  /** Directory on the controller, e.g. `//CNC_MEM/USER/PATH1/`. */
  dir: string;
  name: string;
  size: number;
  /** Last modification, unix milliseconds, when the controller reports it. */
  modified?: number;
  comment?: string;
}

export interface CurrentProgram {
  dir: string;
  name: string;
  /** The program's bytes exactly as the controller holds them. */
  content: Buffer;
  /** Block (line) being executed, when known. */
  block?: number;
}

/** Byte values a driver cannot carry in a program file (family `programFiles`), and why. */
export interface ProgramByteLimits {
  /** Inclusive ranges of byte values, e.g. `{from: 0x80, to: 0xff}` for a protocol that carries ASCII only. */
  refused: ReadonlyArray<{ from: number; to: number }>;
  /** Why, for a person: the protocol's limit and what lifts it. */
  reason: string;
}

/** Options common to reads; drivers ignore what their protocol has no use for. */
export interface ReadOptions {
  /** Controller path/channel, 1-based. */
  channel?: number;
  toolNum?: number;
  groupNum?: number;
  offsetNum?: number;
  dir?: string;
  subDir?: string;
  startPrgNo?: number;
}

/** The value each readable family produces. */
export interface FamilyValues {
  status: CncStatus;
  alarm: ActiveAlarm[];
  position: AxisPosition[];
  load: AxisLoad[];
  feedAndSpindle: FeedAndSpindle;
  toolNumber: ToolNumber;
  timeData: TimeData;
  count: PartCount;
  toolLife: ToolLifeRecord[];
  programList: ProgramFileEntry[];
  currentProgram: CurrentProgram;
}
export type ReadableFamily = keyof FamilyValues;

/** Why a driver reports that its connection went away. */
export interface ConnectionLost {
  reason: string;
}

/** One live connection to one controller. */
export interface DriverClient {
  /** The driver's scheme, e.g. `simulator`, `opcua`. */
  readonly scheme: string;
  /** The families this client can serve; anything else is DRIVER_FAMILY_UNSUPPORTED. */
  readonly families: ReadonlySet<ItemFamily>;
  /** Opens the connection. Rejects on failure; never resolves without a usable connection. */
  connect(): Promise<void>;
  /** Closes the connection and releases every timer and socket. Safe to call twice. */
  close(): Promise<void>;
  /** Reads one family. Rejects with a GatewayError on failure. */
  read<F extends ReadableFamily>(family: F, options?: ReadOptions): Promise<FamilyValues[F]>;
  /** Downloads a program file from the controller (family `programFiles`): its bytes exactly as the controller holds them. */
  downloadProgram(dir: string, name: string): Promise<Buffer>;
  /** Uploads a program file to the controller (family `programFiles`), every byte as given. */
  uploadProgram(dir: string, name: string, content: Buffer): Promise<void>;
  /**
   * The bytes this client cannot carry in a program file unchanged, and why;
   * null, or no method at all, when it carries every byte. Asked before a
   * transfer starts (the gateway's upload, the program service's preview and
   * deployments), so a program is refused with the byte named instead of
   * arriving changed. A client whose limits depend on what it is connected to
   * answers for its current connection.
   */
  programByteLimits?(): ProgramByteLimits | null;
  /** Registers a listener for connection loss detected outside a request (socket close, keep-alive). */
  onConnectionLost(listener: (event: ConnectionLost) => void): void;
}

/** What the core hands a driver when it creates a client. */
export interface DriverDeps {
  logger: Logger;
  /** Directory for the driver's own files (certificates, caches). */
  dataDir: string;
  /** Current time in unix milliseconds; tests substitute a simulated clock. */
  now: () => number;
}

/** The machine fields a driver needs to create a client. */
export interface DriverMachine {
  machineID: string;
  ip: string;
  port: number;
  password?: string;
  /** The driver's own options, already parsed by its `configSchema`. */
  driverOptions: unknown;
}

/** Exported by `drivers/<scheme>/index.ts`. */
export interface DriverFactory<Options = unknown> {
  scheme: string;
  /** One-line description for docs and error messages. */
  description: string;
  /** Parses `driverOptions` of a machine config using this scheme. */
  configSchema: z.ZodType<Options>;
  create(machine: DriverMachine & { driverOptions: Options }, deps: DriverDeps): DriverClient;
  /** Files the driver keeps in the data directory (`deps.dataDir`), which backup copies (core/backup/kept-files.ts). */
  keeps?: KeptFiles;
}

/** The error a client throws for a family it does not support. */
export function unsupportedFamily(scheme: string, family: ItemFamily): GatewayError {
  return new GatewayError(
    'DRIVER_FAMILY_UNSUPPORTED',
    `driver '${scheme}' does not support item family '${family}'`,
  );
}

/** Throws unless `client` declares `family`. */
export function assertFamily(client: Pick<DriverClient, 'scheme' | 'families'>, family: ItemFamily): void {
  if (!client.families.has(family)) throw unsupportedFamily(client.scheme, family);
}

/** A factory as the registry holds it: options are parsed by its own schema, so their type is erased here. */
export type RegisteredDriver = DriverFactory<never>;

/** Erases a factory's options type for the registry; `create` was already type-checked against it. */
export function registerDriver<Options>(factory: DriverFactory<Options>): RegisteredDriver {
  return factory as unknown as RegisteredDriver;
}

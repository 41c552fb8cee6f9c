/**
 * The default topic mapping, matching what the MQTT simulator publishes. Its
 * words follow the MTConnect vocabulary (Execution `ACTIVE`, ControllerMode
 * `AUTOMATIC`, EmergencyStop `ARMED`/`TRIGGERED`), which many shop-floor MQTT
 * adapters already speak; the maps below normalise them to the gateway's
 * values. The simulator publishes with the inverse of these maps.
 */
import type { AlarmLevel, ExecutionState, OperatingMode } from '../../core/driver-seam/driver.js';

/** The word published for each execution state. */
export const EXECUTION_WORDS: Record<ExecutionState, string> = {
  RUNNING: 'ACTIVE',
  HOLD: 'FEED_HOLD',
  STOPPED: 'STOPPED',
  RESET: 'READY',
  EMERGENCY: 'EMERGENCY_STOP',
};

/** The word published for each operating mode. */
export const MODE_WORDS: Record<OperatingMode, string> = {
  AUTO: 'AUTOMATIC',
  MDI: 'MANUAL_DATA_INPUT',
  MANUAL: 'MANUAL',
  JOG: 'JOG',
  HANDLE: 'HANDWHEEL',
  EDIT: 'EDIT',
  REF: 'REFERENCE_RETURN',
  REMOTE: 'REMOTE',
  UNKNOWN: 'UNAVAILABLE',
};

/** The word published for each alarm level (status severity and alarm entries). */
export const SEVERITY_WORDS: Record<AlarmLevel, string> = {
  none: 'NORMAL',
  warning: 'WARNING',
  alarm: 'FAULT',
  emergency: 'EMERGENCY',
};

export const EMERGENCY_STOP_WORDS = { engaged: 'TRIGGERED', released: 'ARMED' } as const;

const invert = <K extends string>(words: Record<K, string>): Record<string, K> =>
  Object.fromEntries(Object.entries(words).map(([value, word]) => [word, value])) as Record<string, K>;

const levelMap = { WARNING: 'warning', FAULT: 'alarm', EMERGENCY: 'emergency' };

/** The simulator's topics; the default mapping subscribes to them. */
export const SIMULATOR_TOPICS = {
  availability: 'cnc/{machineID}/availability',
  status: 'cnc/{machineID}/status',
  alarms: 'cnc/{machineID}/alarms',
  motion: 'cnc/{machineID}/motion',
  times: 'cnc/{machineID}/times',
  /** One plain-value topic per counter: `count/partCount`, `count/partsTotal`, … */
  count: 'cnc/{machineID}/count',
} as const;

/** Topic of the default availability (presence) messages. */
export const DEFAULT_AVAILABILITY_TOPIC = SIMULATOR_TOPICS.availability;

/** The default `topics` of a machine: the simulator's topics and payloads, as written in a config (options.ts parses them with its topic schema at their first use). */
export const DEFAULT_TOPICS: readonly object[] = [
  {
    topic: SIMULATOR_TOPICS.status,
    items: {
      'status.cncStatus': 'controller',
      'status.adjustedStatus': {
        path: 'execution',
        // Other MTConnect Execution words a real adapter may send.
        map: { ...invert(EXECUTION_WORDS), INTERRUPTED: 'HOLD', PROGRAM_STOPPED: 'STOPPED', OPTIONAL_STOP: 'STOPPED', PROGRAM_COMPLETED: 'RESET' },
      },
      'status.mode': { path: 'mode', map: { ...invert(MODE_WORDS), SEMI_AUTOMATIC: 'AUTO' } },
      'status.alarmLevel': { path: 'severity', map: invert(SEVERITY_WORDS) },
      'status.alarmStatus': 'alarmActive',
      'status.emergency': { path: 'emergencyStop', map: { [EMERGENCY_STOP_WORDS.engaged]: true, [EMERGENCY_STOP_WORDS.released]: false } },
      'status.programStatus': 'programStatus',
      'status.program': 'program',
      'status.time': 'timestamp',
    },
  },
  {
    topic: SIMULATOR_TOPICS.alarms,
    lists: { alarm: { path: '', fields: { level: 'severity' }, map: { level: levelMap } } },
  },
  {
    topic: SIMULATOR_TOPICS.motion,
    items: {
      'feedAndSpindle.feedRate': 'feed.actual',
      'feedAndSpindle.feedOverride': 'feed.override',
      'feedAndSpindle.spindleSpeed': 'spindle.speed',
      'feedAndSpindle.spindleOverride': 'spindle.override',
      'feedAndSpindle.rapidOverride': 'rapidOverride',
      'toolNumber.toolNumber': 'tool.number',
      'toolNumber.offsetNumber': 'tool.offset',
    },
    lists: { position: 'axes', load: 'loads' },
  },
  {
    topic: SIMULATOR_TOPICS.times,
    items: {
      'timeData.powerOnTime': 'powerOnSec',
      'timeData.operatingTime': 'operatingSec',
      'timeData.cuttingTime': 'cuttingSec',
      'timeData.cycleTime': 'cycleSec',
    },
  },
  // Counters as plain values, one topic each, as PLC-style publishers send them.
  ...(['partCount', 'partsRequired', 'partsTotal', 'lastCycleTime', 'program'] as const).map((field) => ({
    topic: `${SIMULATOR_TOPICS.count}/${field}`,
    items: { [`count.${field}`]: '' },
  })),
];

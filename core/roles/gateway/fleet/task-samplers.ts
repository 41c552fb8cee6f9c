/**
 * What each task class reads from the driver. A sampler is the only I/O a
 * task does; the actor caches whatever it returns.
 */
import type { ActiveAlarm, CncStatus, DriverClient, PartCount, TimeData, ToolLifeRecord } from '../../../driver-seam/driver.js';
import type { MachineTaskClass } from '../machine-config.js';
import { readMotion, type MotionSample } from './motion.js';
import type { OeeSample, StateTally } from './state-tally.js';

/** The CNCStatus sample: the status, plus the active alarms whenever an alarm may be involved. */
export interface StatusSample {
  status: CncStatus;
  /** Active alarms; read when the status shows an alarm or one was active before. */
  alarms: ActiveAlarm[];
  /** The motion families the driver declares, read beside the status (history only: the task's cache keeps status and alarms). */
  motion?: MotionSample;
}

export interface CycleSample {
  /** Seconds into the current cycle. */
  currentCycleTimeSec: number;
  /** Duration of the last completed cycle, seconds. */
  lastCycleTimeSec: number | null;
  program: string | null;
  partsTotal: number;
}

export interface TaskValues {
  CNCStatus: StatusSample;
  Count: PartCount;
  Cycle: CycleSample;
  TimeData: TimeData;
  ToolLife: ToolLifeRecord[];
  OEE: OeeSample;
}

/** What a sampler may look at besides the driver. */
export interface SamplerContext {
  client: DriverClient;
  /** Whether the previous status sample had active alarms (so their end is observed). */
  hadAlarms: boolean;
  /** Whether the status sample reads the motion families too (history.motion.enabled). */
  readMotion: boolean;
  tally: StateTally;
  idealCycleTimeSec: number | undefined;
  now: number;
}

type Samplers = { [K in MachineTaskClass]: (ctx: SamplerContext) => Promise<TaskValues[K]> };

export const TASK_SAMPLERS: Samplers = {
  async CNCStatus({ client, hadAlarms, readMotion: withMotion }) {
    const [status, motion] = await Promise.all([client.read('status'), withMotion ? readMotion(client) : undefined]);
    const alarmy = status.alarmLevel !== 'none' || status.alarmStatus || status.emergency;
    const alarms = (alarmy || hadAlarms) && client.families.has('alarm') ? await client.read('alarm') : [];
    return motion ? { status, alarms, motion } : { status, alarms };
  },
  Count: ({ client }) => client.read('count'),
  async Cycle({ client }) {
    const [time, count] = await Promise.all([client.read('timeData'), client.read('count')]);
    return {
      currentCycleTimeSec: time.cycleTime,
      lastCycleTimeSec: count.lastCycleTime ?? null,
      program: count.program ?? null,
      partsTotal: count.partsTotal,
    };
  },
  TimeData: ({ client }) => client.read('timeData'),
  ToolLife: ({ client }) => client.read('toolLife'),
  async OEE({ tally, idealCycleTimeSec, now }) {
    return tally.oee(now, idealCycleTimeSec);
  },
};

/**
 * Builds family values from the stored items. A family is supported only when
 * the mapping covers its required fields; a few status fields have a
 * documented derivation when unmapped (docs/drivers/mqtt.md). A read is a
 * value, or says which item is missing, stale or invalid.
 */
import {
  worstAlarmLevel,
  type ActiveAlarm, type AlarmLevel, type AxisLoad, type AxisPosition, type CncStatus, type ExecutionState, type FamilyValues, type ItemFamily,
  type OperatingMode, type ReadableFamily,
} from '../../core/driver-seam/driver.js';
import type { ItemValue, ListItem, ScalarItem } from './items.js';
import type { ListElement, Slot, ValueStore } from './value-store.js';

export type FamilyRead<T> =
  | { kind: 'value'; value: T }
  /** Some item has not arrived yet; waiting may help. */
  | { kind: 'missing'; detail: string }
  | { kind: 'stale'; detail: string }
  | { kind: 'invalid'; detail: string };

type Problem = Exclude<FamilyRead<never>, { kind: 'value' }>;

const REQUIRED: Partial<Record<ItemFamily, ReadonlyArray<ScalarItem | ListItem>>> = {
  status: ['status.adjustedStatus'],
  alarm: ['alarm'],
  position: ['position'],
  load: ['load'],
  feedAndSpindle: [
    'feedAndSpindle.feedRate', 'feedAndSpindle.feedOverride', 'feedAndSpindle.spindleSpeed', 'feedAndSpindle.spindleOverride', 'feedAndSpindle.rapidOverride',
  ],
  toolNumber: ['toolNumber.toolNumber'],
  timeData: ['timeData.powerOnTime', 'timeData.operatingTime', 'timeData.cuttingTime', 'timeData.cycleTime'],
  count: ['count.partCount', 'count.partsTotal'],
};

/** The families a mapping can serve. */
export function supportedFamilies(mapped: ReadonlySet<ScalarItem | ListItem>): Set<ItemFamily> {
  const families = new Set<ItemFamily>();
  for (const [family, required] of Object.entries(REQUIRED) as Array<[ItemFamily, ReadonlyArray<ScalarItem | ListItem>]>) {
    if (required.every((key) => mapped.has(key))) families.add(family);
  }
  // The status needs an alarm level, mapped or derived from the alarm list.
  if (!mapped.has('status.alarmLevel') && !mapped.has('alarm')) families.delete('status');
  return families;
}

const ageText = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

/** Collects the items of one family read, remembering the worst problem met. */
class Gather {
  newest = 0;
  private problem: Problem | undefined;
  private static readonly RANK = { invalid: 3, stale: 2, missing: 1 } as const;

  constructor(
    private readonly store: ValueStore,
    private readonly now: number,
  ) {}

  mapped(key: ScalarItem | ListItem): boolean {
    return this.store.mapped.has(key);
  }

  /** A required scalar; undefined (with a problem noted) when it cannot be served. */
  need(key: ScalarItem): ItemValue | undefined {
    return this.check(key, this.store.scalar(key), true);
  }

  /** An optional scalar: undefined when unmapped or not received yet. */
  want(key: ScalarItem): ItemValue | undefined {
    return this.mapped(key) ? this.check(key, this.store.scalar(key), false) : undefined;
  }

  needList(key: ListItem): ListElement[] | undefined {
    return this.check(key, this.store.list(key), true);
  }

  /** The raw payload value behind a scalar, e.g. the vendor text an execution state was mapped from. */
  raw(key: ScalarItem): unknown {
    const slot = this.store.scalar(key);
    return slot?.ok ? slot.raw : undefined;
  }

  result<T>(build: () => T): FamilyRead<T> {
    return this.problem ?? { kind: 'value', value: build() };
  }

  private check<T>(key: string, slot: Slot<T> | undefined, required: boolean): T | undefined {
    if (slot === undefined) {
      if (required) this.note({ kind: 'missing', detail: `no value for ${key} received yet (${this.where(key)})` });
      return undefined;
    }
    const source = `topic ${slot.topic}${slot.path ? `, path '${slot.path}'` : ''}`;
    if (!slot.ok) {
      this.note({ kind: 'invalid', detail: `${key} from ${source}: ${slot.problem}` });
      return undefined;
    }
    const age = this.now - slot.receivedAt;
    if (slot.staleAfterMs > 0 && age > slot.staleAfterMs) {
      this.note({
        kind: 'stale',
        detail: `${key} is stale: last received ${ageText(age)} ago on ${source}, older than the inactivity timeout of ${slot.staleAfterMs} ms`,
      });
      return undefined;
    }
    this.newest = Math.max(this.newest, slot.receivedAt);
    return slot.value;
  }

  private where(key: string): string {
    return this.mapped(key as ScalarItem) ? 'mapped but no message carried it' : 'not mapped';
  }

  private note(problem: Problem): void {
    if (!this.problem || Gather.RANK[problem.kind] > Gather.RANK[this.problem.kind]) this.problem = problem;
  }
}

const num = (value: ItemValue | undefined): number => Number(value);
const optionalNum = <K extends string>(name: K, value: ItemValue | undefined): Partial<Record<K, number>> =>
  (value === undefined ? {} : { [name]: Number(value) }) as Partial<Record<K, number>>;

function readStatus(g: Gather): FamilyRead<CncStatus> {
  const adjustedStatus = g.need('status.adjustedStatus') as ExecutionState | undefined;
  const cncStatus = g.mapped('status.cncStatus') ? g.need('status.cncStatus') : g.raw('status.adjustedStatus');
  let alarmLevel: AlarmLevel | undefined;
  if (g.mapped('status.alarmLevel')) alarmLevel = g.need('status.alarmLevel') as AlarmLevel | undefined;
  else {
    const alarms = g.needList('alarm');
    // Coerced against ACTIVE_ALARM_LEVELS when stored (items.ts), so every level is an alarm level.
    alarmLevel = worstAlarmLevel((alarms ?? []) as unknown as ActiveAlarm[]);
  }
  const alarmStatus = g.mapped('status.alarmStatus') ? g.need('status.alarmStatus') : undefined;
  const emergency = g.mapped('status.emergency') ? g.need('status.emergency') : undefined;
  const programStatus = g.mapped('status.programStatus') ? g.need('status.programStatus') : undefined;
  const mode = g.mapped('status.mode') ? g.need('status.mode') : 'UNKNOWN';
  const time = g.mapped('status.time') ? g.need('status.time') : undefined;
  const program = g.want('status.program');
  return g.result(() => {
    const reported = adjustedStatus as ExecutionState;
    // An engaged emergency stop is the most severe state, whatever severity the peer sends beside it
    // (docs/derived-states.md, "Emergency stop"): every driver reports it the same way.
    const engaged = emergency === undefined ? reported === 'EMERGENCY' : emergency === true;
    const state: ExecutionState = engaged ? 'EMERGENCY' : reported;
    const level: AlarmLevel = engaged ? 'emergency' : (alarmLevel as AlarmLevel);
    return {
      cncStatus: String(cncStatus ?? reported),
      adjustedStatus: state,
      alarmStatus: engaged || (alarmStatus === undefined ? level === 'alarm' || level === 'emergency' : alarmStatus === true),
      alarmLevel: level,
      mode: mode as OperatingMode,
      programStatus: (programStatus ?? (state === 'RUNNING' ? 'running' : state === 'HOLD' ? 'hold' : 'stopped')) as CncStatus['programStatus'],
      emergency: engaged,
      ...(program !== undefined ? { program: String(program) } : {}),
      time: time === undefined ? g.newest : num(time),
    };
  });
}

type Readers = { [F in ReadableFamily]?: (g: Gather) => FamilyRead<FamilyValues[F]> };

const READERS: Readers = {
  status: readStatus,
  alarm: (g) => {
    const alarms = g.needList('alarm');
    return g.result(() => (alarms ?? []) as unknown as ActiveAlarm[]);
  },
  position: (g) => {
    const axes = g.needList('position');
    return g.result(() => (axes ?? []) as unknown as AxisPosition[]);
  },
  load: (g) => {
    const loads = g.needList('load');
    return g.result(() => (loads ?? []) as unknown as AxisLoad[]);
  },
  feedAndSpindle: (g) => {
    const [feedRate, feedOverride, spindleSpeed, spindleOverride, rapidOverride] = [
      g.need('feedAndSpindle.feedRate'), g.need('feedAndSpindle.feedOverride'), g.need('feedAndSpindle.spindleSpeed'),
      g.need('feedAndSpindle.spindleOverride'), g.need('feedAndSpindle.rapidOverride'),
    ];
    return g.result(() => ({
      feedRate: num(feedRate), feedOverride: num(feedOverride), spindleSpeed: num(spindleSpeed), spindleOverride: num(spindleOverride), rapidOverride: num(rapidOverride),
    }));
  },
  toolNumber: (g) => {
    const toolNumber = g.need('toolNumber.toolNumber');
    const offsetNumber = g.want('toolNumber.offsetNumber');
    return g.result(() => ({ toolNumber: num(toolNumber), ...optionalNum('offsetNumber', offsetNumber) }));
  },
  timeData: (g) => {
    const [powerOnTime, operatingTime, cuttingTime, cycleTime] = [
      g.need('timeData.powerOnTime'), g.need('timeData.operatingTime'), g.need('timeData.cuttingTime'), g.need('timeData.cycleTime'),
    ];
    return g.result(() => ({ powerOnTime: num(powerOnTime), operatingTime: num(operatingTime), cuttingTime: num(cuttingTime), cycleTime: num(cycleTime) }));
  },
  count: (g) => {
    const partCount = g.need('count.partCount');
    const partsTotal = g.need('count.partsTotal');
    const partsRequired = g.want('count.partsRequired');
    const lastCycleTime = g.want('count.lastCycleTime');
    const program = g.want('count.program');
    return g.result(() => ({
      partCount: num(partCount),
      ...optionalNum('partsRequired', partsRequired),
      partsTotal: num(partsTotal),
      ...optionalNum('lastCycleTime', lastCycleTime),
      ...(program !== undefined ? { program: String(program) } : {}),
    }));
  },
};

/** Reads `family` from the store at `now`; the family must be one `supportedFamilies` returned. */
export function readFamily<F extends ReadableFamily>(store: ValueStore, family: F, now: number): FamilyRead<FamilyValues[F]> {
  const reader = READERS[family] as ((g: Gather) => FamilyRead<FamilyValues[F]>) | undefined;
  if (!reader) return { kind: 'invalid', detail: `family ${family} has no MQTT mapping` };
  return reader(new Gather(store, now));
}

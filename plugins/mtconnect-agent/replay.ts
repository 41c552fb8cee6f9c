/**
 * History rows → MTConnect observations, one machine at a time. A machine's
 * replay holds what its earlier rows said (the last status, derived state,
 * part count and open alarms) and, given the next row, emits the
 * observations whose value that row changed, each numbered by the row's seq
 * and the data item's slot (sequence-numbers.ts). Values that did not change
 * are not emitted again (as an agent filters duplicates), the status data
 * items are UNAVAILABLE while the derived state says the status is not
 * current (offline, noData, inactive), and so is the SYSTEM condition, which
 * shows the open alarms again when the status is current again.
 *
 * The same replay serves the live agent (fed each committed row) and every
 * read of the past (fed the rows of a window after a replay rebuilt from the
 * rows before it, machine-state.ts), so a client reads the same observations
 * under the same numbers whichever way it asks.
 */
import { PROGRAM_VERSION_CLASS } from '../../core/roles/gateway/history/program-version.js';
import { MotionState, type MotionItem } from './motion-items.js';
import { observationSeq } from './sequence-numbers.js';
import { VaultVersions } from './vault-versions.js';
import {
  availabilityValue,
  conditionLevel,
  connectionStatusValue,
  controllerModeValue,
  emergencyStopValue,
  executionValue,
  levelRank,
  statusIsCurrent,
  UNAVAILABLE,
} from './value-map.js';

/**
 * The data items of a machine with one value at a time, each at its fixed
 * slot. The running program's vault version (vault-versions.ts) takes slot 9
 * and the last alarm slot: a State row can change every item, the condition
 * and the motion items at once, and those were the slots it left.
 */
export const VALUE_SLOTS = { avail: 0, state: 1, estop: 2, mode: 3, exec: 4, program: 5, partCount: 6, connection: 7, vaultProgram: 9, vaultHash: 49 } as const;
export type ValueItem = keyof typeof VALUE_SLOTS;
export const VALUE_ITEMS = Object.keys(VALUE_SLOTS) as ValueItem[];
/** The SYSTEM condition's Normal or Unavailable. */
export const CONDITION_SLOT = 8;
/** Alarms shown by one row take the slots from here on. */
export const FIRST_ALARM_SLOT = 10;
/** Alarms one row can show (the slots up to the vault version's hash); more open alarms than this are not shown again after an outage. */
export const MAX_ALARMS_PER_ROW = 39;

export type ConditionLevel = 'Normal' | 'Warning' | 'Fault' | 'Unavailable';

/** What a machine's observation is of: a value item, a motion item (motion-items.ts) or the SYSTEM condition. */
export type ItemKey = ValueItem | MotionItem | 'system';

/** One observation of one machine's data item. */
export interface Observation {
  machineID: string;
  item: ItemKey;
  seq: number;
  /** Unix milliseconds. */
  ts: number;
  /** The value; for a condition its message (empty when none). */
  value: string;
  level?: ConditionLevel;
  nativeCode?: string;
  nativeSeverity?: string;
}

/** A history row as the replay reads it: `data` already parsed. */
export interface ReplayRow {
  seq: number;
  machineID: string;
  cls: string;
  ts: number;
  data: Record<string, unknown>;
}

/** An alarm the history logged as started and not yet as ended. */
export interface OpenAlarm {
  code: string;
  message: string;
  level: 'warning' | 'alarm' | 'emergency';
  /** The observation that last showed it, while shown. */
  shown?: Observation;
}

type Emit = (observation: Observation) => void;

const alarmKey = (code: unknown, message: unknown) => `${String(code)}\u0000${String(message)}`;

const asLevel = (level: unknown): OpenAlarm['level'] => (level === 'warning' || level === 'emergency' ? level : 'alarm');

/** One machine's replay; see the module comment. */
export class MachineReplay {
  /** The last CNCStatus row's data. */
  status: Record<string, unknown> | undefined;
  /** The last State row's state, reason and connection. */
  derived: string | undefined;
  reason = '';
  connection: unknown;
  partCount: number | undefined;
  readonly alarms = new Map<string, OpenAlarm>();
  /** The last observation of each value item. */
  readonly last: Partial<Record<ValueItem, Observation>> = {};
  /** The SYSTEM condition's last Normal or Unavailable. */
  conditionBase: Observation | undefined;
  /** The axis positions, spindle and tool of the last Motion row, and their last observations. */
  readonly motion = new MotionState();
  /** The vault version of each program file the gateway wrote to the machine, by file name. */
  readonly vault = new VaultVersions();
  /** While a row is applied only up to a sequence number (`apply`'s throughSeq), observations beyond it are not made. */
  private limit = Infinity;

  constructor(readonly machineID: string) {}

  /** Whether the status data items and the condition show values (the status is current). */
  get current(): boolean {
    return statusIsCurrent(this.derived);
  }

  /** The value of `item` now; undefined before the machine's first State row (never observed). */
  valueOf(item: ValueItem): { value: string; nativeCode?: string } | undefined {
    if (this.derived === undefined) return undefined;
    switch (item) {
      case 'avail':
        return { value: availabilityValue(this.derived) };
      case 'state':
        // The reason starts with the state's name (docs/derived-states.md).
        return { value: this.reason || this.derived };
      case 'connection':
        return { value: connectionStatusValue(this.connection) };
      case 'partCount':
        return { value: availabilityValue(this.derived) === UNAVAILABLE || this.partCount === undefined ? UNAVAILABLE : String(this.partCount) };
      case 'vaultProgram':
      case 'vaultHash': {
        const running = this.current && this.status ? this.vault.running(this.status.program) : undefined;
        return { value: running ? (item === 'vaultProgram' ? running.program : running.sha256) : UNAVAILABLE };
      }
      default:
        return { value: this.current && this.status ? statusItemValue(this.status, item) : UNAVAILABLE };
    }
  }

  /**
   * Applies one row of this machine, emitting what it changed; with
   * `throughSeq`, the row's observations beyond it are left out (and not
   * recorded as the items' last), for a state as of a sequence number inside the row.
   */
  apply(row: ReplayRow, emit: Emit, throughSeq = Infinity): void {
    this.limit = throughSeq;
    try {
      this.applyRow(row, (o) => {
        if (o.seq <= this.limit) emit(o);
      });
    } finally {
      this.limit = Infinity;
    }
  }

  private applyRow(row: ReplayRow, emit: Emit): void {
    const wasCurrent = this.current;
    if (row.cls === 'Motion') {
      this.motion.apply(row, wasCurrent, this.limitedEmit(emit));
      return;
    }
    const before = VALUE_ITEMS.map((item) => this.valueOf(item));
    const started = this.derived === undefined;
    switch (row.cls) {
      case 'CNCStatus':
        this.status = row.data;
        break;
      case 'State':
        this.derived = typeof row.data.state === 'string' ? row.data.state : 'noData';
        this.reason = typeof row.data.reason === 'string' ? row.data.reason : '';
        this.connection = row.data.connection;
        break;
      case 'Count':
        if (typeof row.data.partCount === 'number') this.partCount = row.data.partCount;
        break;
      case 'AlarmLog':
        this.alarmLogged(row, emit);
        break;
      case 'Heartbeat':
        if (this.current) this.heal(row, emit, FIRST_ALARM_SLOT);
        break;
      case PROGRAM_VERSION_CLASS:
        this.vault.recorded(row.data);
        break;
      default:
        return;
    }
    VALUE_ITEMS.forEach((item, i) => {
      const now = this.valueOf(item);
      const was = before[i];
      if (now && (!was || was.value !== now.value || was.nativeCode !== now.nativeCode)) this.emitValue(item, now, row, emit);
    });
    if (this.current !== wasCurrent || (started && this.derived !== undefined)) this.conditionTurned(row, emit);
    if (this.current !== wasCurrent) this.motion.turned(row, this.current, this.limitedEmit(emit));
  }

  /** `emit` for observations that are recorded as their item's last only when within the limit (as emitValue does). */
  private limitedEmit(emit: Emit): (o: Observation) => boolean {
    return (o) => {
      if (o.seq > this.limit) return false;
      emit(o);
      return true;
    };
  }

  private emitValue(item: ValueItem, v: { value: string; nativeCode?: string }, row: ReplayRow, emit: Emit): void {
    const observation: Observation = { machineID: this.machineID, item, seq: observationSeq(row.seq, VALUE_SLOTS[item]), ts: row.ts, value: v.value };
    if (v.nativeCode !== undefined) observation.nativeCode = v.nativeCode;
    if (observation.seq > this.limit) return;
    this.last[item] = observation;
    emit(observation);
  }

  /** An AlarmLog row: a start opens the alarm (shown while the status is current), an end closes it with a Normal of its code. */
  private alarmLogged(row: ReplayRow, emit: Emit): void {
    const { event, code, message, level } = row.data;
    const key = alarmKey(code, message);
    if (event === 'start') {
      // The same alarm logged again (after a restart of the machine's actor) is already open.
      if (this.alarms.has(key)) return;
      const alarm: OpenAlarm = { code: String(code), message: String(message), level: asLevel(level) };
      this.alarms.set(key, alarm);
      if (this.current) this.showAlarm(alarm, row, FIRST_ALARM_SLOT, emit);
      return;
    }
    if (event !== 'end') return;
    const alarm = this.alarms.get(key);
    this.alarms.delete(key);
    if (!this.current) return;
    const normal = this.conditionObservation(row, FIRST_ALARM_SLOT, 'Normal', '', String(code));
    if (alarm) normal.nativeSeverity = alarm.level;
    if (this.alarms.size === 0 && normal.seq <= this.limit) this.conditionBase = normal;
    emit(normal);
  }

  /** Closes the open alarms more severe than the status's alarm level says are active (one that ended while the gateway was stopped is never logged as ended). */
  private heal(row: ReplayRow, emit: Emit, firstSlot: number): number {
    const rank = levelRank(this.status?.alarmLevel ?? 'none');
    let slot = firstSlot;
    for (const [key, alarm] of this.alarms) {
      if (levelRank(alarm.level) <= rank) continue;
      this.alarms.delete(key);
      if (slot >= FIRST_ALARM_SLOT + MAX_ALARMS_PER_ROW) continue;
      const normal = this.conditionObservation(row, slot++, 'Normal', '', alarm.code);
      if (this.alarms.size === 0 && normal.seq <= this.limit) this.conditionBase = normal;
      emit(normal);
    }
    return slot;
  }

  /** The status turned current (show the open alarms, or Normal) or not current (Unavailable). */
  private conditionTurned(row: ReplayRow, emit: Emit): void {
    if (!this.current) {
      for (const alarm of this.alarms.values()) delete alarm.shown;
      const unavailable = this.conditionObservation(row, CONDITION_SLOT, 'Unavailable', '');
      if (unavailable.seq <= this.limit) this.conditionBase = unavailable;
      emit(unavailable);
      return;
    }
    this.heal(row, () => undefined, FIRST_ALARM_SLOT);
    if (this.alarms.size === 0) {
      const normal = this.conditionObservation(row, CONDITION_SLOT, 'Normal', '');
      if (normal.seq <= this.limit) this.conditionBase = normal;
      emit(normal);
      return;
    }
    let slot = FIRST_ALARM_SLOT;
    for (const alarm of this.alarms.values()) {
      if (slot >= FIRST_ALARM_SLOT + MAX_ALARMS_PER_ROW) break;
      this.showAlarm(alarm, row, slot++, emit);
    }
  }

  private showAlarm(alarm: OpenAlarm, row: ReplayRow, slot: number, emit: Emit): void {
    const observation = this.conditionObservation(row, slot, conditionLevel(alarm.level), alarm.message, alarm.code);
    observation.nativeSeverity = alarm.level;
    if (observation.seq > this.limit) return;
    alarm.shown = observation;
    emit(observation);
  }

  private conditionObservation(row: ReplayRow, slot: number, level: ConditionLevel, message: string, nativeCode?: string): Observation {
    const observation: Observation = { machineID: this.machineID, item: 'system', seq: observationSeq(row.seq, slot), ts: row.ts, value: message, level };
    if (nativeCode !== undefined) observation.nativeCode = nativeCode;
    return observation;
  }

  /** The SYSTEM condition's current observations: the shown alarms, else its last Normal or Unavailable. */
  conditionNow(): Observation[] {
    if (this.current) {
      const shown = [...this.alarms.values()].flatMap((a) => (a.shown ? [a.shown] : []));
      if (shown.length) return shown;
    }
    return this.conditionBase ? [this.conditionBase] : [];
  }
}

/** A status data item's value from a CNCStatus row's data. */
function statusItemValue(status: Record<string, unknown>, item: Exclude<ValueItem, 'avail' | 'state' | 'connection' | 'partCount' | 'vaultProgram' | 'vaultHash'>): string {
  switch (item) {
    case 'estop':
      return emergencyStopValue(status.emergency);
    case 'mode':
      return controllerModeValue(status.mode);
    case 'exec':
      return executionValue(status.adjustedStatus);
    case 'program':
      return typeof status.program === 'string' && status.program !== '' ? status.program : UNAVAILABLE;
  }
}

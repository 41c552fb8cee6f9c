/**
 * A pure, deterministic model of one CNC machine. Its behaviour at simulated
 * time t depends only on (spec, t): a schedule of segments is drawn in order
 * from a seeded PRNG and walked lazily as queries move forward, so a reading
 * does not depend on how often the machine was sampled before.
 */
import type {
  ActiveAlarm, AlarmLevel, AxisLoad, AxisPosition, CncStatus, CurrentProgram, FeedAndSpindle,
  PartCount, ProgramFileEntry, ReadOptions, TimeData, ToolLifeRecord, ToolNumber,
} from '../../core/driver-seam/driver.js';
import { programText } from '../../core/values/program-bytes.js';
import { Prng, makeAxes, makePrograms, makeTools, type AxisSpec, type ProgramSpec, type ToolSpec } from './catalog.js';
import { EXEC_STATE, vendorFor, type ExecKind, type VendorSpec } from './catalog-vendors.js';
import { Schedule, deriveSeed, toolIndexAt, type MachinePhase, type MachineSpec, type ScheduleState, type Segment } from './schedule.js';

export type { MachinePhase, MachineSpec } from './schedule.js';

interface StoredFile {
  dir: string;
  name: string;
  /** Kept byte for byte, as a controller's memory keeps a program. */
  content: Buffer;
  modified: number;
}

/** Where a simulated machine keeps its programs and what it runs, beyond its schedule. */
export interface ProgramStoreOptions {
  /** The program directory; the vendor's when not given. */
  programDir?: string;
  /** Whether the last program file written to the machine becomes the program it runs. */
  runsLastProgram?: boolean;
}

const round3 = (value: number): number => Math.round(value * 1000) / 1000;
const normaliseDir = (dir: string): string => (dir.endsWith('/') ? dir : `${dir}/`);

/** One simulated machine: its makeup, its schedule, and its in-memory program store. Readers use the injected clock. */
export class SimulatedMachine {
  readonly vendor: VendorSpec;
  /** Where its programs are: `driverOptions.programDir`, or the vendor's directory. */
  readonly programDir: string;
  readonly axes: readonly AxisSpec[];
  readonly tools: readonly ToolSpec[];
  readonly programs: readonly ProgramSpec[];
  /** Unix ms of simulated second 0. */
  readonly epochMs: number;
  private readonly startedAt: number;
  private readonly files = new Map<string, StoredFile>();
  /** Stand-ins for out-of-range indexes, which the schedule never produces. */
  private readonly firstTool: ToolSpec;
  private readonly firstProgram: ProgramSpec;
  private readonly schedule: Schedule;
  /** The simulated time of the last sync, so one read uses one clock reading throughout. */
  private t = 0;
  /** Key of the last file written, when the machine runs what it was last given. */
  private lastWritten: string | undefined;

  constructor(
    readonly spec: MachineSpec & ProgramStoreOptions,
    private readonly now: () => number,
  ) {
    const makeup = new Prng(deriveSeed(spec.seed, 0x51ed));
    this.vendor = vendorFor(spec.system);
    this.programDir = normaliseDir(spec.programDir ?? this.vendor.programDir);
    this.axes = makeAxes(spec.machineType, makeup);
    this.tools = makeTools(spec.machineType, makeup);
    this.programs = makePrograms(spec.machineType, this.tools, spec.cycleTimeSec, makeup);
    const [firstTool] = this.tools;
    const [firstProgram] = this.programs;
    if (firstTool === undefined || firstProgram === undefined) throw new Error(`no tools or programs for ${spec.machineType}`);
    this.firstTool = firstTool;
    this.firstProgram = firstProgram;
    this.startedAt = now();
    this.epochMs = this.startedAt;
    for (const program of this.programs) {
      const modified = this.epochMs - makeup.int(1, 90) * 86_400_000;
      this.files.set(this.programDir + program.name, { dir: this.programDir, name: program.name, content: Buffer.from(program.content, 'latin1'), modified });
    }
    this.schedule = new Schedule(spec, { tools: this.tools, programs: this.programs, vendor: this.vendor, firstProgram });
  }

  /** Simulated seconds since the epoch at the injected clock's current time. */
  simulatedSeconds(): number {
    return Math.max(0, ((this.now() - this.startedAt) * this.spec.timeScale) / 1000);
  }

  phase(): MachinePhase {
    const kind = this.sync().seg.kind;
    return kind === 'hold' || kind === 'paused' ? 'idle' : kind;
  }

  status(): CncStatus {
    const s = this.sync();
    const { seg } = s;
    const exec = execKindOf(seg);
    const alarmLevel = this.alarmLevel(s);
    return {
      cncStatus: this.vendor.texts[exec],
      adjustedStatus: EXEC_STATE[exec],
      alarmStatus: alarmLevel === 'alarm' || alarmLevel === 'emergency',
      alarmLevel,
      mode: seg.mode,
      programStatus: seg.kind === 'running' ? 'running' : seg.kind === 'hold' ? 'hold' : 'stopped',
      emergency: seg.kind === 'emergency',
      program: this.lastFile()?.name ?? this.programAt(seg).name,
      time: this.toMs(this.t),
    };
  }

  alarms(): ActiveAlarm[] {
    const s = this.sync();
    const active: ActiveAlarm[] = [];
    if (s.seg.alarm !== null) {
      const level = s.seg.kind === 'emergency' ? 'emergency' : 'alarm';
      active.push({ code: s.seg.alarm.code, message: s.seg.alarm.message, level, since: this.toMs(s.seg.start) });
    }
    if (this.t >= s.warnStart) active.push({ code: s.warning.code, message: s.warning.message, level: 'warning', since: this.toMs(s.warnStart) });
    return active;
  }

  positions(): AxisPosition[] {
    const { seg } = this.sync();
    const c = this.cycleClock(seg);
    const envelope = seg.cycleLength > 0 ? Math.sin(Math.PI * Math.min(1, c / seg.cycleLength)) : 0;
    const running = seg.kind === 'running';
    return this.axes.map((axis, i) => {
      const angle = axis.speed * c + seg.program * 1.7 + i;
      const absolute =
        axis.unit === 'deg'
          ? (envelope * axis.reach * (1 + Math.sin(angle))) % 360
          : axis.home - envelope * axis.reach * (0.5 + 0.5 * Math.sin(angle));
      return {
        axis: axis.name,
        absolute: round3(absolute),
        machine: round3(absolute + axis.workOffset),
        relative: round3(absolute),
        distanceToGo: running ? round3(Math.abs(0.05 * axis.reach * Math.cos(angle))) : 0,
        unit: axis.unit,
      };
    });
  }

  loads(): AxisLoad[] {
    const { seg } = this.sync();
    const c = this.cycleClock(seg);
    const running = seg.kind === 'running';
    const holding = seg.kind === 'hold' || seg.kind === 'paused';
    const loads = this.axes.map((axis, i) => ({
      name: axis.name,
      loadPercent: running ? Math.round(3 + 30 * Math.abs(Math.sin(axis.speed * c + i + 0.5))) : holding ? 2 : 0,
    }));
    const spindle = running ? Math.round(40 + 30 * Math.sin(0.3 * c)) : seg.kind === 'hold' ? 6 : 0;
    loads.push({ name: 'S1', loadPercent: spindle });
    return loads;
  }

  feedAndSpindle(): FeedAndSpindle {
    const s = this.sync();
    const { seg } = s;
    const c = this.cycleClock(seg);
    const tool = this.toolAt(s, c);
    const turning = seg.kind === 'running' || seg.kind === 'hold';
    const feed = seg.kind === 'running' ? tool.feed * (0.4 + 0.6 * Math.abs(Math.sin(0.7 * c))) * (s.feedOverride / 100) : 0;
    return {
      feedRate: Math.round(feed),
      feedOverride: s.feedOverride,
      spindleSpeed: turning ? Math.round((tool.spindleRpm * s.spindleOverride) / 100) : 0,
      spindleOverride: s.spindleOverride,
      rapidOverride: s.rapidOverride,
    };
  }

  toolNumber(): ToolNumber {
    const s = this.sync();
    const tool = this.toolAt(s, this.cycleClock(s.seg));
    return { toolNumber: tool.toolNum, offsetNumber: tool.offsetNum };
  }

  timeData(): TimeData {
    const s = this.sync();
    const { seg } = s;
    const runningFor = seg.kind === 'running' ? this.t - seg.start : 0;
    return {
      powerOnTime: Math.floor(s.powerOnBase + this.t),
      operatingTime: Math.floor(s.operatingSec + runningFor),
      cuttingTime: Math.floor(s.cuttingSec + runningFor * this.programAt(seg).cutFraction),
      cycleTime: Math.round(10 * (seg.cycleLength > 0 ? this.cycleClock(seg) : s.lastCycleSec)) / 10,
    };
  }

  count(): PartCount {
    const s = this.sync();
    const last = this.programs[s.lastPartProgram];
    return {
      partCount: s.partCount,
      partsRequired: s.partsRequired,
      partsTotal: s.partsTotal,
      lastCycleTime: Math.round(s.lastCycleSec * 10) / 10,
      ...(last ? { program: this.lastFile()?.name ?? last.name } : {}),
    };
  }

  toolLife(filter: ReadOptions = {}): ToolLifeRecord[] {
    const s = this.sync();
    const records: ToolLifeRecord[] = [];
    this.tools.forEach((tool, i) => {
      if (filter.toolNum !== undefined && filter.toolNum !== tool.toolNum) return;
      if (filter.groupNum !== undefined && filter.groupNum !== tool.groupNum) return;
      if (filter.offsetNum !== undefined && filter.offsetNum !== tool.offsetNum) return;
      const used = s.toolUsed[i] ?? 0;
      const remainingPercent = Math.max(0, Math.round((1 - used / tool.lifeLimit) * 1000) / 10);
      records.push({ toolNum: tool.toolNum, groupNum: tool.groupNum, offsetNum: tool.offsetNum, used, limit: tool.lifeLimit, unit: 'count', remainingPercent });
    });
    return records;
  }

  currentProgram(): CurrentProgram {
    const { seg } = this.sync();
    const given = this.lastFile();
    if (given) return { dir: given.dir, name: given.name, content: given.content, block: this.blockOf(given.content, seg) };
    const program = this.programAt(seg);
    const file = this.files.get(this.programDir + program.name);
    let block = 1;
    if (seg.cycleLength > 0) {
      const sections = program.tools.length;
      const position = (Math.min(this.cycleClock(seg), seg.cycleLength) / seg.cycleLength) * sections;
      const k = Math.min(sections - 1, Math.floor(position));
      block = (program.sectionStart[k] ?? 1) + Math.floor((position - k) * (program.sectionLines[k] ?? 1));
    }
    return { dir: this.programDir, name: program.name, content: file?.content ?? Buffer.from(program.content, 'latin1'), block };
  }

  /** Files in one directory (default: the vendor's program directory), optionally from an O-number on. */
  programList(options: ReadOptions = {}): ProgramFileEntry[] {
    let dir = normaliseDir(options.dir ?? this.programDir);
    if (options.subDir) dir = normaliseDir(dir + options.subDir.replace(/^\/+/, ''));
    const entries: ProgramFileEntry[] = [];
    for (const file of this.files.values()) {
      if (file.dir !== dir) continue;
      const number = /^O(\d+)/i.exec(file.name)?.[1];
      if (options.startPrgNo !== undefined && (number === undefined || Number(number) < options.startPrgNo)) continue;
      const comment = firstComment(file.content);
      entries.push({ dir, name: file.name, size: file.content.length, modified: file.modified, ...(comment ? { comment } : {}) });
    }
    return entries.sort((x, y) => x.name.localeCompare(y.name));
  }

  /** A stored file's bytes, or undefined when there is none. */
  download(dir: string, name: string): Buffer | undefined {
    return this.files.get(normaliseDir(dir) + name)?.content;
  }

  /** Stores a copy of `content`, so a caller that reuses its buffer cannot change the file. */
  upload(dir: string, name: string, content: Buffer): void {
    const key = normaliseDir(dir) + name;
    this.files.set(key, { dir: normaliseDir(dir), name, content: Buffer.from(content), modified: this.toMs(this.simulatedSeconds()) });
    if (this.spec.runsLastProgram === true) this.lastWritten = key;
  }

  /** The file last written, while the machine runs what it was last given. */
  private lastFile(): StoredFile | undefined {
    return this.lastWritten === undefined ? undefined : this.files.get(this.lastWritten);
  }

  /** The line a cycle has reached in a given program: its lines shared evenly over the cycle. */
  private blockOf(content: Buffer, seg: Segment): number {
    if (seg.cycleLength <= 0) return 1;
    let lines = 1;
    for (const byte of content) if (byte === 0x0a) lines++;
    const progress = Math.min(this.cycleClock(seg), seg.cycleLength) / seg.cycleLength;
    return Math.min(lines, 1 + Math.floor(progress * lines));
  }

  private sync(): ScheduleState {
    this.t = this.simulatedSeconds();
    return this.schedule.advance(this.t);
  }

  private alarmLevel(s: ScheduleState): AlarmLevel {
    if (s.seg.kind === 'emergency') return 'emergency';
    if (s.seg.kind === 'alarm') return 'alarm';
    return this.t >= s.warnStart ? 'warning' : 'none';
  }

  private cycleClock(seg: Segment): number {
    return seg.kind === 'running' ? seg.cycleAt + (this.t - seg.start) : seg.cycleAt;
  }

  private toolAt(s: ScheduleState, c: number): ToolSpec {
    const { seg } = s;
    const index = seg.cycleLength > 0 ? toolIndexAt(this.programAt(seg), seg, c) : s.spindleTool;
    return this.tools[index] ?? this.firstTool;
  }

  private programAt(seg: Segment): ProgramSpec {
    return this.programs[seg.program] ?? this.firstProgram;
  }

  private toMs(seconds: number): number {
    return Math.round(this.epochMs + seconds * 1000);
  }
}

/** The text of a program's first comment, `(…)`, as a directory listing shows it. */
function firstComment(content: Buffer): string | undefined {
  const open = content.indexOf(0x28);
  const close = open < 0 ? -1 : content.indexOf(0x29, open);
  return close < 0 ? undefined : programText(content.subarray(open + 1, close)).text;
}

function execKindOf(seg: Segment): ExecKind {
  switch (seg.kind) {
    case 'running': return 'running';
    case 'hold': return 'hold';
    case 'paused': case 'alarm': return 'stopped';
    case 'idle': return 'reset';
    case 'emergency': return 'emergency';
    case 'setup': return seg.mode === 'JOG' || seg.mode === 'HANDLE' ? 'manual' : 'reset';
  }
}

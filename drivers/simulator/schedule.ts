/**
 * The schedule of one simulated machine: segments of constant behaviour drawn
 * in order from a seeded PRNG, and the counters (parts, timers, tool wear) they
 * leave behind. Walking it forward is amortised O(1) per query; walking back
 * replays it from the seed, so the state at time t depends only on (spec, t).
 */
import type { OperatingMode } from '../../core/driver-seam/driver.js';
import { Prng, type MachineType, type ProgramSpec, type ToolSpec } from './catalog.js';
import type { AlarmSpec, VendorSpec } from './catalog-vendors.js';

/** The options that shape the machine itself (connection behaviour lives in the client). */
export interface MachineSpec {
  seed: number;
  timeScale: number;
  machineType: MachineType;
  system: string;
  cycleTimeSec: number;
  alarmRate: number;
  setupRate: number;
  estopRate: number;
}

/** What the machine is doing, as the five kinds of status the simulator cycles through. */
export type MachinePhase = 'running' | 'idle' | 'alarm' | 'setup' | 'emergency';

export type SegmentKind = 'running' | 'hold' | 'paused' | 'idle' | 'alarm' | 'setup' | 'emergency';
export type Interruption = 'hold' | 'paused' | 'alarm' | 'emergency';

/** One stretch of constant behaviour, in simulated seconds since the epoch. */
export interface Segment {
  kind: SegmentKind;
  start: number;
  end: number;
  program: number;
  mode: OperatingMode;
  /** Planned running seconds of the cycle in progress; 0 when no cycle is under way. */
  cycleLength: number;
  /** Cycle seconds already done at `start` (frozen while not running). */
  cycleAt: number;
  alarm: AlarmSpec | null;
  /** For a running segment, what cuts the cycle short; null when the part completes. */
  then: Interruption | null;
}

/** Everything that changes as the schedule is walked, valid at the start of `seg`. */
export interface ScheduleState {
  rng: Prng;
  seg: Segment;
  program: number;
  cyclesLeft: number;
  setupStepsLeft: number;
  needSetup: boolean;
  partsTotal: number;
  partCount: number;
  partsRequired: number;
  lastCycleSec: number;
  lastPartProgram: number;
  powerOnBase: number;
  operatingSec: number;
  cuttingSec: number;
  spindleTool: number;
  toolUsed: number[];
  feedOverride: number;
  spindleOverride: number;
  rapidOverride: number;
  warnRng: Prng;
  /** The warning state below is valid from this time on. */
  warnFrom: number;
  warnStart: number;
  warnEnd: number;
  warning: AlarmSpec;
}

const HOUR = 3600;
/** Interruptions per hour of running at rate 1. */
const ALARMS_PER_HOUR = 1;
const ESTOPS_PER_HOUR = 0.05;
const HOLDS_PER_HOUR = 0.8;
const PAUSES_PER_HOUR = 0.6;
const WARNING_GAP_SEC = 50 * 60;
const SETUP_MODES: readonly OperatingMode[] = ['EDIT', 'MDI', 'JOG', 'HANDLE', 'MANUAL'];

/** An independent PRNG seed per purpose, so adding draws to one stream leaves the others alone. */
export const deriveSeed = (seed: number, salt: number): number => Math.imul(seed ^ salt, 0x9e3779b1) ^ (seed >>> 7);

/** The index of the tool a program has in the spindle `c` seconds into a cycle. */
export function toolIndexAt(program: ProgramSpec, seg: Segment, c: number): number {
  const k = Math.min(program.tools.length - 1, Math.floor((c / seg.cycleLength) * program.tools.length));
  return program.tools[Math.max(0, k)] ?? 0;
}

/** What the schedule needs to know about the machine it plans for. */
export interface MachineMakeup {
  tools: readonly ToolSpec[];
  programs: readonly ProgramSpec[];
  vendor: VendorSpec;
  firstProgram: ProgramSpec;
}

export class Schedule {
  private s: ScheduleState;
  private readonly tools: readonly ToolSpec[];
  private readonly programs: readonly ProgramSpec[];
  private readonly vendor: VendorSpec;

  constructor(
    private readonly spec: MachineSpec,
    private readonly makeup: MachineMakeup,
  ) {
    this.tools = makeup.tools;
    this.programs = makeup.programs;
    this.vendor = makeup.vendor;
    this.s = this.initialState();
  }

  /** The state at simulated second `t`, walking the schedule as far as needed. */
  advance(t: number): ScheduleState {
    let s = this.s;
    // A clock that went backwards replays the schedule from the start: slower, but still deterministic.
    if (t < s.seg.start || t < s.warnFrom) s = this.s = this.initialState();
    while (t >= s.seg.end) {
      this.finish(s, s.seg);
      s.seg = this.plan(s, s.seg);
    }
    while (t >= s.warnEnd) this.nextWarning(s);
    return s;
  }

  private initialState(): ScheduleState {
    const rng = new Prng(deriveSeed(this.spec.seed, 0xc1c1e));
    const powerOnBase = rng.range(2e6, 4e7);
    const operatingSec = powerOnBase * rng.range(0.35, 0.7);
    const partsRequired = rng.pick([100, 200, 250, 500, 1000]);
    const program = rng.int(0, this.programs.length - 1);
    const blank: Segment = { kind: 'idle', start: 0, end: 0, program, mode: 'AUTO', cycleLength: 0, cycleAt: 0, alarm: null, then: null };
    const s: ScheduleState = {
      rng, seg: blank, program, cyclesLeft: 0, setupStepsLeft: 0, needSetup: false,
      partsTotal: rng.int(2000, 200_000), partCount: rng.int(0, partsRequired * 0.8), partsRequired,
      lastCycleSec: this.programAt(blank.program).cycleTimeSec, lastPartProgram: program,
      powerOnBase, operatingSec, cuttingSec: operatingSec * rng.range(0.5, 0.8),
      spindleTool: this.programAt(blank.program).tools[0] ?? 0,
      toolUsed: this.tools.map((tool) => Math.floor(tool.lifeLimit * rng.range(0, 0.85))),
      feedOverride: 100, spindleOverride: 100, rapidOverride: 100,
      warnRng: new Prng(deriveSeed(this.spec.seed, 0x3a7e)), warnFrom: 0, warnStart: 0, warnEnd: 0, warning: { code: '', message: '' },
    };
    this.nextWarning(s);
    s.warnFrom = 0;
    const opening = rng.next();
    if (opening < 0.7) {
      this.startRun(s);
      const length = this.programAt(blank.program).cycleTimeSec;
      const cycleAt = length * rng.range(0, 0.9);
      s.seg = { ...blank, kind: 'running', end: length - cycleAt, cycleLength: length, cycleAt };
    } else if (opening < 0.9 || this.spec.setupRate === 0) s.seg = this.idle(s, 0);
    else s.seg = this.setup(s, 0, 1);
    return s;
  }

  /** Applies what a segment did to the counters once time has passed its end. */
  private finish(s: ScheduleState, seg: Segment): void {
    const program = this.programAt(seg.program);
    const duration = seg.end - seg.start;
    if (seg.kind === 'running') {
      s.operatingSec += duration;
      s.cuttingSec += duration * program.cutFraction;
      if (seg.then === null) {
        s.partsTotal++;
        s.partCount++;
        s.lastCycleSec = seg.cycleLength;
        s.lastPartProgram = seg.program;
        for (const index of program.tools) s.toolUsed[index] = (s.toolUsed[index] ?? 0) + 1;
      }
    }
    if (seg.cycleLength > 0) s.spindleTool = toolIndexAt(this.programAt(seg.program), seg, seg.kind === 'running' ? seg.cycleAt + duration : seg.cycleAt);
    if (seg.kind === 'setup' && s.setupStepsLeft === 0) this.service(s);
  }

  private plan(s: ScheduleState, prev: Segment): Segment {
    const at = prev.end;
    const { rng } = s;
    switch (prev.kind) {
      case 'running': {
        if (prev.then === null) return this.nextCycleOrRest(s, at);
        const frozen = { ...prev, start: at, cycleAt: prev.cycleAt + (prev.end - prev.start), then: null };
        if (prev.then === 'hold') return { ...frozen, kind: 'hold', end: at + rng.logRange(10, 120) };
        if (prev.then === 'paused') return { ...frozen, kind: 'paused', end: at + rng.logRange(20, 240) };
        if (prev.then === 'alarm') return { ...frozen, kind: 'alarm', end: at + rng.logRange(20, 480), alarm: rng.pick(this.vendor.alarms) };
        return { ...frozen, kind: 'emergency', end: at + rng.logRange(60, 900), alarm: this.vendor.emergency };
      }
      case 'hold':
      case 'paused':
        return { ...prev, kind: 'running', start: at, end: at + prev.cycleLength - prev.cycleAt };
      case 'alarm':
      case 'emergency':
        s.cyclesLeft = 0;
        return this.spec.setupRate > 0 && (prev.kind === 'emergency' || rng.next() < 0.5) ? this.setup(s, at, 1) : this.idle(s, at);
      case 'setup':
        return s.setupStepsLeft > 0 ? this.setupStep(s, at) : this.idle(s, at);
      case 'idle': {
        if (s.needSetup) return this.setup(s, at, rng.int(1, 3));
        const pick = rng.next();
        const estopChance = Math.min(0.2, 0.01 * this.spec.estopRate);
        if (pick < estopChance) return { ...this.idle(s, at), kind: 'emergency', end: at + rng.logRange(60, 900), alarm: this.vendor.emergency };
        if (pick < estopChance + Math.min(0.8, 0.12 * this.spec.setupRate)) return this.setup(s, at, rng.int(1, 3));
        if (this.spec.setupRate === 0) this.service(s);
        this.startRun(s);
        return this.nextCycleOrRest(s, at);
      }
    }
  }

  private startRun(s: ScheduleState): void {
    s.cyclesLeft = s.rng.int(3, 25);
    s.feedOverride = s.rng.pick([100, 100, 100, 100, 90, 110, 120, 80]);
    s.spindleOverride = s.rng.pick([100, 100, 100, 90, 110]);
    s.rapidOverride = s.rng.pick([100, 100, 50, 25]);
  }

  private nextCycleOrRest(s: ScheduleState, at: number): Segment {
    const program = this.programs[s.program];
    const worn = program !== undefined && program.tools.some((i) => (s.toolUsed[i] ?? 0) >= (this.tools[i]?.lifeLimit ?? Infinity));
    const lotDone = s.partCount >= s.partsRequired;
    if (program === undefined || s.cyclesLeft <= 0 || worn || lotDone) {
      if (this.spec.setupRate > 0 && (worn || lotDone)) s.needSetup = true;
      return this.idle(s, at);
    }
    s.cyclesLeft--;
    const { rng } = s;
    const { spec } = this;
    const length = program.cycleTimeSec * rng.range(0.97, 1.03);
    const rates = [HOLDS_PER_HOUR, PAUSES_PER_HOUR, ALARMS_PER_HOUR * spec.alarmRate, ESTOPS_PER_HOUR * spec.estopRate];
    const total = rates.reduce((sum, rate) => sum + rate, 0);
    const running: Segment = { kind: 'running', start: at, end: at + length, program: s.program, mode: 'AUTO', cycleLength: length, cycleAt: 0, alarm: null, then: null };
    if (rng.next() >= 1 - Math.exp((-total * length) / HOUR)) return running;
    const kinds: Interruption[] = ['hold', 'paused', 'alarm', 'emergency'];
    let pick = rng.next() * total;
    let kind: Interruption = 'hold';
    for (let i = 0; i < kinds.length; i++) {
      pick -= rates[i] ?? 0;
      kind = kinds[i] ?? kind;
      if (pick < 0) break;
    }
    return { ...running, end: at + length * rng.range(0.1, 0.9), then: kind };
  }

  private idle(s: ScheduleState, at: number): Segment {
    return { kind: 'idle', start: at, end: at + s.rng.logRange(15, 240), program: s.program, mode: 'AUTO', cycleLength: 0, cycleAt: 0, alarm: null, then: null };
  }

  private setup(s: ScheduleState, at: number, steps: number): Segment {
    s.setupStepsLeft = steps;
    return this.setupStep(s, at);
  }

  private setupStep(s: ScheduleState, at: number): Segment {
    s.setupStepsLeft--;
    const mode = s.rng.pick(SETUP_MODES);
    return { kind: 'setup', start: at, end: at + s.rng.logRange(120, 900), program: s.program, mode, cycleLength: 0, cycleAt: 0, alarm: null, then: null };
  }

  /** What a setup does: worn tools replaced, a finished lot reset, often a new program. */
  private service(s: ScheduleState): void {
    this.tools.forEach((tool, i) => {
      if ((s.toolUsed[i] ?? 0) >= 0.8 * tool.lifeLimit) s.toolUsed[i] = 0;
    });
    const lotDone = s.partCount >= s.partsRequired;
    if (lotDone) s.partCount = 0;
    if (this.programs.length > 1 && (lotDone || s.rng.next() < 0.5)) s.program = (s.program + s.rng.int(1, this.programs.length - 1)) % this.programs.length;
    s.needSetup = false;
  }

  private nextWarning(s: ScheduleState): void {
    s.warnFrom = s.warnEnd;
    if (this.spec.alarmRate === 0) {
      s.warnStart = s.warnEnd = Infinity;
      return;
    }
    s.warnStart = s.warnEnd - Math.log(1 - s.warnRng.next()) * (WARNING_GAP_SEC / this.spec.alarmRate);
    s.warnEnd = s.warnStart + s.warnRng.logRange(30, 300);
    s.warning = s.warnRng.pick(this.vendor.warnings);
  }

  private programAt(index: number): ProgramSpec {
    return this.programs[index] ?? this.makeup.firstProgram;
  }
}

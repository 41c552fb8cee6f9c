/**
 * One simulated CNC as a FOCAS bridge sees it: each method answers one bridge
 * call the way the FOCAS function would, from the `SimulatedMachine`. A vendor
 * implementing a real bridge replaces the body of each method with the FOCAS
 * call of the same name and copies the structure fields across.
 */
import { SimulatedMachine } from '../simulator/model.js';
import { simulatorOptionsSchema } from '../simulator/options.js';
import type { SimulatedMachineSpec } from '../protocol-simulator.js';
import type { ExecutionState, OperatingMode } from '../../core/driver-seam/driver.js';
import { ALARM_TYPE_PREFIX, AUT_MODE, RUN_TEXT, programNameInContent } from './mapping.js';
import { OVERRIDE_SIGNALS, PARAM, PMC_ADDRESS, POSITION_UNIT, SPEED_UNIT, type BridgeResponse, type FocasDate } from './protocol.js';
import { EW } from './return-codes.js';
import { toBridgeText } from './program-data.js';

/** A call's answer: the FOCAS return code, plus the outputs when it is EW_OK. */
export type Answer<T> = ({ rc: typeof EW.EW_OK } & T) | { rc: number; detail?: string };

const fail = (rc: number, detail: string): { rc: number; detail: string } => ({ rc, detail });
const ok = <T extends object>(outputs: T): { rc: 0 } & T => ({ rc: EW.EW_OK, ...outputs });

const RUN_CODE: Record<ExecutionState, number> = { RESET: 0, STOPPED: 1, HOLD: 2, RUNNING: 3, EMERGENCY: 0 };
const AUT_CODE = Object.fromEntries(Object.entries(AUT_MODE).map(([code, mode]) => [mode, Number(code)])) as Record<OperatingMode, number>;
AUT_CODE.JOG = 5;
AUT_CODE.HANDLE = 4;
const TYPE_OF_PREFIX = new Map(Object.entries(ALARM_TYPE_PREFIX).map(([type, prefix]) => [prefix, Number(type)]));
/** FANUC protects O9000–O9999 (macro programs) against editing by default. */
const PROTECTED_PROGRAM = /^O9\d{3}$/;
/** Largest program the simulated memory accepts. */
const MAX_PROGRAM_CHARS = 512 * 1024;

/** A program transfer in progress on one handle; `data` is the program one character per byte (focas-bridge 1.1). */
export type Transfer = { kind: 'upload'; data: string; offset: number } | { kind: 'download'; dir: string; data: string };

const digits = (code: string): number => Number(/(\d+)/.exec(code)?.[1] ?? 0);
function focasDate(ms: number): FocasDate {
  const d = new Date(ms);
  return { year: d.getUTCFullYear(), month: d.getUTCMonth() + 1, day: d.getUTCDate(), hour: d.getUTCHours(), minute: d.getUTCMinutes() };
}
/** Seconds → [whole minutes, milliseconds of the current minute], as FANUC keeps its timers. */
function minutesAndMs(seconds: number): [number, number] {
  const ms = Math.round(seconds * 1000);
  return [Math.floor(ms / 60_000), ms % 60_000];
}

export class SimulatedCnc {
  readonly machine: SimulatedMachine;

  constructor(
    readonly spec: SimulatedMachineSpec,
    now: () => number,
    /** Bridge calls this CNC lacks the option for; they answer EW_NOOPT. */
    private readonly missing: ReadonlySet<string> = new Set(),
  ) {
    const options = simulatorOptionsSchema.parse({ seed: spec.seed, machineType: spec.machineType, system: spec.system, timeScale: spec.timeScale ?? 1 });
    this.machine = new SimulatedMachine({ ...options, seed: spec.seed }, now);
  }

  get name(): string {
    return this.spec.machineID;
  }

  /** EW_NOOPT when the CNC lacks the option behind `fn`. */
  lacks(fn: string): boolean {
    return this.missing.has(fn);
  }

  statinfo(): Answer<BridgeResponse<'cnc_statinfo'>> {
    const s = this.machine.status();
    const fanucRun = (RUN_TEXT as readonly string[]).indexOf(s.cncStatus);
    const alarmed = this.machine.alarms().some((a) => a.level !== 'warning');
    return ok({
      statinfo: {
        hdck: 0,
        tmmode: this.spec.machineType === 'lathe' || this.spec.machineType === 'turnMill' ? 0 : 1,
        aut: AUT_CODE[s.mode] ?? 2,
        run: fanucRun >= 0 ? fanucRun : RUN_CODE[s.adjustedStatus],
        motion: s.adjustedStatus === 'RUNNING' ? 1 : 0,
        mstb: 0,
        emergency: s.emergency ? 1 : 0,
        alarm: alarmed ? 1 : 0,
        edit: 0,
      },
    });
  }

  /** Active alarms; warnings are operator messages on FANUC, read by cnc_rdopmsg. */
  rdalmmsg(num: number): Answer<BridgeResponse<'cnc_rdalmmsg'>> {
    const almmsg = this.machine
      .alarms()
      .filter((a) => a.level !== 'warning')
      .slice(0, num)
      .map((a) => {
        const prefix = /^([A-Z]+)\d/.exec(a.code)?.[1] ?? 'EX';
        return { alm_no: digits(a.code), type: TYPE_OF_PREFIX.get(prefix) ?? 15, axis: 0, msg_len: a.message.length, alm_msg: a.message };
      });
    return ok({ num: almmsg.length, almmsg });
  }

  rdopmsg(): Answer<BridgeResponse<'cnc_rdopmsg'>> {
    const opmsg = this.machine
      .alarms()
      .filter((a) => a.level === 'warning')
      .map((a) => ({ datano: digits(a.code), type: 0, char_num: a.message.length, data: a.message }));
    return ok({ opmsg });
  }

  exeprgname(): Answer<BridgeResponse<'cnc_exeprgname'>> {
    const name = this.machine.status().program ?? '';
    return ok({ exeprg: { name, o_num: /^O\d+$/.test(name) ? digits(name) : 0 } });
  }

  rdspeed(): Answer<BridgeResponse<'cnc_rdspeed'>> {
    const fs = this.machine.feedAndSpindle();
    return ok({
      speed: {
        actf: { data: Math.round(fs.feedRate), dec: 0, unit: SPEED_UNIT.MM_PER_MIN, disp: 0, name: 'F', suff: '' },
        acts: { data: Math.round(fs.spindleSpeed), dec: 0, unit: SPEED_UNIT.RPM, disp: 0, name: 'S', suff: '' },
      },
    });
  }

  actf(): Answer<BridgeResponse<'cnc_actf'>> {
    return ok({ act: { data: Math.round(this.machine.feedAndSpindle().feedRate) } });
  }

  acts(): Answer<BridgeResponse<'cnc_acts'>> {
    return ok({ act: { data: Math.round(this.machine.feedAndSpindle().spindleSpeed) } });
  }

  /** Byte reads of the G area; the ladder would drive these signals from the operator panel switches. */
  pmcRange(adrType: number, dataType: number, start: number, end: number): Answer<BridgeResponse<'pmc_rdpmcrng'>> {
    if (adrType !== PMC_ADDRESS.G || dataType !== 0) return fail(EW.EW_ATTRIB, 'the simulator serves byte reads of the G area only');
    if (end < start || end - start >= 256) return fail(EW.EW_NUMBER, 'e_number must be ≥ s_number and the range at most 256 bytes');
    const fs = this.machine.feedAndSpindle();
    const signals = new Map<number, number>([
      [OVERRIDE_SIGNALS.FEED, ~Math.min(254, fs.feedOverride) & 0xff],
      [OVERRIDE_SIGNALS.RAPID, fs.rapidOverride >= 100 ? 0 : fs.rapidOverride >= 50 ? 1 : fs.rapidOverride >= 25 ? 2 : 3],
      [OVERRIDE_SIGNALS.SPINDLE, Math.min(254, fs.spindleOverride)],
    ]);
    const cdata: number[] = [];
    for (let address = start; address <= end; address++) cdata.push(signals.get(address) ?? 0);
    return ok({ pmc: { type_a: adrType, type_d: dataType, datano_s: start, datano_e: end, cdata } });
  }

  rdposition(): Answer<BridgeResponse<'cnc_rdposition'>> {
    const pos = this.machine.positions().map((p) => {
      const element = (value: number) => ({
        data: Math.round(value * 1000), dec: 3, unit: p.unit === 'deg' ? POSITION_UNIT.DEGREE : POSITION_UNIT.MM, name: p.axis.charAt(0), suff: p.axis.slice(1),
      });
      return { abs: element(p.absolute), mach: element(p.machine), rel: element(p.relative), dist: element(p.distanceToGo) };
    });
    return ok({ data_num: pos.length, pos });
  }

  /** Servo loads; the model names spindles S1, S2… and servo axes by letter. */
  rdsvmeter(): Answer<BridgeResponse<'cnc_rdsvmeter'>> {
    const svload = this.loads(false);
    return ok({ data_num: svload.length, svload });
  }

  rdspmeter(): Answer<BridgeResponse<'cnc_rdspmeter'>> {
    const spload = this.loads(true);
    return ok({ data_num: spload.length, spload });
  }

  rdparam(datano: number): Answer<BridgeResponse<'cnc_rdparam'>> {
    const value = this.param(datano);
    if (value === undefined) return fail(EW.EW_NUMBER, `the simulator serves parameters ${Object.values(PARAM).join(', ')}`);
    return ok({ param: { datano, type: 0, ldata: value } });
  }

  rdtlinfo(): Answer<BridgeResponse<'cnc_rdtlinfo'>> {
    const groups = this.toolGroups();
    return ok({ tlinfo: { max_group: groups.length, max_tool: Math.max(0, ...groups.map((g) => g.length)), max_minute: 0, max_cycle: 9999 } });
  }

  /** A group's life is that of its tool in use: the first one not yet expired. */
  rdtlgrp(grpNum: number): Answer<BridgeResponse<'cnc_rdtlgrp'>> {
    const tools = this.toolGroups()[grpNum - 1];
    if (tools === undefined) return fail(EW.EW_NUMBER, `no tool life group ${grpNum}`);
    const inUse = tools.find((t) => t.used < t.limit) ?? tools[tools.length - 1];
    if (inUse === undefined) return fail(EW.EW_NUMBER, `tool life group ${grpNum} is empty`);
    return ok({
      tlgrp: {
        ntool: tools.length, nfree: tools.filter((t) => t.used === 0).length, life: inUse.limit, count: inUse.used, use_tool: inUse.toolNum,
        opt_grpno: grpNum, life_rest: Math.max(0, inUse.limit - inUse.used), rest_sig: 0, count_type: inUse.unit === 'minutes' ? 1 : 0,
      },
    });
  }

  /** tool_inf: 0 not used yet, 1 in use, 2 expired. */
  rdtltool(grpNum: number, index: number): Answer<BridgeResponse<'cnc_rdtltool'>> {
    const tools = this.toolGroups()[grpNum - 1];
    const tool = tools?.[index - 1];
    if (tools === undefined || tool === undefined) return fail(EW.EW_NUMBER, `no tool ${index} in tool life group ${grpNum}`);
    const inUse = tools.find((t) => t.used < t.limit) ?? tools[tools.length - 1];
    const toolInf = tool === inUse ? 1 : tool.used >= tool.limit ? 2 : 0;
    return ok({ tltool: { tool_num: tool.toolNum, h_code: tool.offsetNum, d_code: tool.offsetNum, tool_inf: toolInf } });
  }

  /** O-number programs from `top` on, at most `count` of them, in number order. */
  rdprogdir3(top: number, count: number): Answer<BridgeResponse<'cnc_rdprogdir3'>> {
    const prgdir = this.machine
      .programList()
      .filter((p) => /^O\d+$/.test(p.name) && digits(p.name) >= top)
      .sort((x, y) => digits(x.name) - digits(y.name))
      .slice(0, count)
      .map((p) => {
        const date = focasDate(p.modified ?? this.machine.epochMs);
        return { number: digits(p.name), length: p.size, page: Math.ceil(p.size / 256), comment: this.comment(p.dir, p.name), mdate: date, cdate: date };
      });
    return ok({ num_prg: prgdir.length, prgdir });
  }

  /** cnc_upstart4: a full path (`//CNC_MEM/USER/PATH1/O1001`) or a bare name in the program directory. */
  startUpload(prgname: string): Answer<{ transfer: Transfer }> {
    const slash = prgname.lastIndexOf('/');
    const dir = slash >= 0 ? prgname.slice(0, slash + 1) : this.machine.vendor.programDir;
    const data = this.machine.download(dir, prgname.slice(slash + 1));
    if (data === undefined) return fail(EW.EW_DATA, `no program ${prgname}`);
    return ok({ transfer: { kind: 'upload', data: toBridgeText(data), offset: 0 } });
  }

  /** cnc_dwnend4: the CNC names the program after the first block of the data. */
  finishDownload(transfer: Extract<Transfer, { kind: 'download' }>): Answer<object> {
    const name = programNameInContent(transfer.data);
    if (name === undefined) return fail(EW.EW_DATA, 'the data has no program number (O1234) or name (<NAME>) in its first block');
    if (PROTECTED_PROGRAM.test(name)) return fail(EW.EW_PROT, `${name} is in the protected range O9000–O9999`);
    if (transfer.data.length > MAX_PROGRAM_CHARS) return fail(EW.EW_OVRFLOW, 'program memory full');
    this.machine.upload(transfer.dir, name, Buffer.from(transfer.data, 'latin1'));
    return ok({});
  }

  /** The program's first comment with its parentheses, one character per byte as the CNC holds it. */
  private comment(dir: string, name: string): string {
    const bytes = this.machine.download(dir, name) ?? Buffer.alloc(0);
    const open = bytes.indexOf(0x28);
    const close = open < 0 ? -1 : bytes.indexOf(0x29, open);
    return close < 0 ? '' : toBridgeText(bytes.subarray(open, close + 1));
  }

  private loads(spindles: boolean) {
    return this.machine
      .loads()
      .filter((l) => /^S\d*$/.test(l.name) === spindles)
      .map((l) => ({ data: Math.round(l.loadPercent), dec: 0, unit: 0, name: l.name.charAt(0), suff: l.name.slice(1) }));
  }

  private param(datano: number): number | undefined {
    const td = this.machine.timeData();
    const count = this.machine.count();
    const [operatingMin, operatingMs] = minutesAndMs(td.operatingTime);
    const [cuttingMin, cuttingMs] = minutesAndMs(td.cuttingTime);
    const [cycleMin, cycleMs] = minutesAndMs(td.cycleTime);
    const values: Record<number, number> = {
      [PARAM.PARTS_COUNT]: count.partCount,
      [PARAM.PARTS_TOTAL]: count.partsTotal,
      [PARAM.PARTS_REQUIRED]: count.partsRequired ?? 0,
      [PARAM.POWER_ON_MIN]: Math.floor(td.powerOnTime / 60),
      [PARAM.OPERATING_MS]: operatingMs,
      [PARAM.OPERATING_MIN]: operatingMin,
      [PARAM.CUTTING_MS]: cuttingMs,
      [PARAM.CUTTING_MIN]: cuttingMin,
      [PARAM.CYCLE_MS]: cycleMs,
      [PARAM.CYCLE_MIN]: cycleMin,
    };
    return values[datano];
  }

  /** The model's tools by tool life group, group 1 first. */
  private toolGroups() {
    const byGroup = new Map<number, ReturnType<SimulatedMachine['toolLife']>>();
    for (const tool of this.machine.toolLife()) byGroup.set(tool.groupNum, [...(byGroup.get(tool.groupNum) ?? []), tool]);
    return [...byGroup.entries()].sort(([a], [b]) => a - b).map(([, tools]) => tools);
  }
}

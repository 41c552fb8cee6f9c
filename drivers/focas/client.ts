/**
 * The focas DriverClient: each family read is one job of FOCAS calls on the
 * session's handle (see bridge-session.ts); program transfers run on a handle
 * of their own. connect() always starts a new session, so a dead handle or
 * socket is never reused.
 */
import {
  assertFamily, unsupportedFamily,
  type ConnectionLost, type DriverClient, type DriverDeps, type FamilyValues, type ItemFamily, type ProgramByteLimits, type ReadOptions, type ReadableFamily,
} from '../../core/driver-seam/driver.js';
import { GatewayError } from '../../core/interfaces/errors.js';
import { describeRefusedByte, findRefusedByte, isTapeCharacter } from '../../core/values/program-bytes.js';
import { BridgeSession, type Caller } from './bridge-session.js';
import {
  AlarmFirstSeen, COUNT_PARAMS, EMERGENCY, TIME_PARAMS, programNameInContent, scaled, toAlarmEntries, toCncStatus, toFeedAndSpindle, toLoads,
  toPartCount, toPositions, toProgramList, toTimeData, toToolLife, type ParamValues, type ToolLifeGroup,
} from './mapping.js';
import { FOCAS_FAMILIES, type FocasOptions } from './options.js';
import { byteLimits, commentText, fromBridgeText, toBridgeText } from './program-data.js';
import { OVERRIDE_SIGNALS, PMC_ADDRESS } from './protocol.js';

/** Families read by one job on the session's handle; currentProgram also needs a transfer handle. */
type QueuedFamily = Exclude<ReadableFamily, 'currentProgram'>;
type Readers = { [F in QueuedFamily]: (call: Caller, options: ReadOptions) => Promise<FamilyValues[F]> };

/** Characters per cnc_upload4 / cnc_download4 call. */
const TRANSFER_CHUNK = 4096;
/** Programs per cnc_rdprogdir3 call. */
const DIR_PAGE = 100;
/** Upper bound on a program read from the CNC, so a bridge that never ends the data cannot fill memory. */
const MAX_PROGRAM_CHARS = 16 * 1024 * 1024;

export interface FocasMachine {
  machineID: string;
  ip: string;
  port: number;
}

export class FocasClient implements DriverClient {
  readonly scheme = 'focas';
  readonly families: ReadonlySet<ItemFamily>;
  private session: BridgeSession | null = null;
  private closed = false;
  private readonly listeners: Array<(event: ConnectionLost) => void> = [];
  private readonly alarmsSeen = new AlarmFirstSeen();
  private readonly readers: Readers;

  constructor(
    private readonly machine: FocasMachine,
    private readonly options: FocasOptions,
    private readonly deps: Pick<DriverDeps, 'now' | 'logger'>,
  ) {
    this.families = new Set(options.families ?? FOCAS_FAMILIES);
    this.readers = {
      status: (call) => this.readStatus(call),
      alarm: (call) => this.readAlarms(call),
      position: async (call) => toPositions((await call('cnc_rdposition', { type: -1 })).pos),
      load: async (call) => toLoads((await call('cnc_rdsvmeter', {})).svload, (await call('cnc_rdspmeter', { type: 0 })).spload),
      feedAndSpindle: (call) => this.readFeedAndSpindle(call),
      toolNumber: () => Promise.reject(unsupportedFamily(this.scheme, 'toolNumber')),
      timeData: async (call) => toTimeData(await readParams(call, TIME_PARAMS)),
      count: async (call) => toPartCount(await readParams(call, COUNT_PARAMS)),
      toolLife: (call, o) => this.readToolLife(call, o),
      programList: (call, o) => this.readProgramList(call, o),
    };
  }

  async connect(): Promise<void> {
    if (this.closed) throw new GatewayError('MACHINE_NOT_CONNECTED', 'focas: client closed');
    const previous = this.session;
    this.session = null;
    if (previous) await previous.close();
    const session: BridgeSession = await BridgeSession.open(
      { host: this.machine.ip, port: this.machine.port },
      {
        cnc: this.options.cnc, requestTimeoutMs: this.options.requestTimeoutMs, connectTimeoutMs: this.options.connectTimeoutMs,
        peer: { protocol: 'focas', machineId: this.machine.machineID, address: this.machine.ip, port: this.machine.port },
      },
      (reason) => this.lost(session, reason),
    );
    if (this.closed) {
      await session.close();
      throw new GatewayError('MACHINE_NOT_CONNECTED', 'focas: client closed');
    }
    this.session = session;
    this.deps.logger.debug({ bridge: session.info.bridge, version: session.info.version, cnc: session.cnc }, 'focas bridge session open');
  }

  async close(): Promise<void> {
    this.closed = true;
    const session = this.session;
    this.session = null;
    await session?.close();
  }

  async read<F extends ReadableFamily>(family: F, options: ReadOptions = {}): Promise<FamilyValues[F]> {
    assertFamily(this, family);
    const session = this.requireSession();
    if (family === 'currentProgram') return (await this.readCurrentProgram(session)) as FamilyValues[F];
    const reader = this.readers[family as QueuedFamily] as (call: Caller, options: ReadOptions) => Promise<FamilyValues[F]>;
    return session.run(family, (call) => reader(call, options));
  }

  async downloadProgram(dir: string, name: string): Promise<Buffer> {
    assertFamily(this, 'programFiles');
    const folder = this.programDir(dir);
    const session = this.requireSession();
    return session.withTransferHandle((call) => readProgramBytes(call, folder + name, session));
  }

  async uploadProgram(dir: string, name: string, content: Buffer): Promise<void> {
    assertFamily(this, 'programFiles');
    const folder = this.programDir(dir);
    const session = this.requireSession();
    const refused = findRefusedByte(content, byteLimits(session.info, session.address));
    if (refused) throw new GatewayError('INVALID_PARAMETER', `focas: ${describeRefusedByte(refused)} cannot be sent: ${byteLimits(session.info, session.address)?.reason ?? ''}`);
    const data = toBridgeText(content);
    const named = programNameInContent(data);
    if (named === undefined || named.toUpperCase() !== name.trim().toUpperCase()) {
      throw new GatewayError(
        'INVALID_PARAMETER',
        `focas: the CNC names a program after its first block, so the content must begin with '${name}' (found ${named === undefined ? 'no program name' : `'${named}'`})`,
      );
    }
    await session.withTransferHandle(async (call) => {
      await call('cnc_dwnstart4', { type: 0, prgname: folder });
      try {
        for (let at = 0; at < data.length; at += TRANSFER_CHUNK) await call('cnc_download4', { data: data.slice(at, at + TRANSFER_CHUNK) });
      } catch (error) {
        // FOCAS requires the end call even after a failed chunk, or the CNC stays in transfer.
        await call('cnc_dwnend4', {}).catch(() => undefined);
        throw error;
      }
      await call('cnc_dwnend4', {});
    });
  }

  /** Every byte from focas-bridge 1.1 on; ASCII only through a 1.0 bridge. Nothing is refused before a session says which. */
  programByteLimits(): ProgramByteLimits | null {
    const session = this.session;
    return session ? byteLimits(session.info, session.address) : null;
  }

  onConnectionLost(listener: (event: ConnectionLost) => void): void {
    this.listeners.push(listener);
  }

  private async readStatus(call: Caller): Promise<FamilyValues['status']> {
    const { statinfo } = await call('cnc_statinfo', {});
    const { exeprg } = await call('cnc_exeprgname', {});
    const { opmsg } = await call('cnc_rdopmsg', { type: -1 });
    return toCncStatus({ statinfo, exeprg, operatorMessages: opmsg.filter((m) => m.datano >= 0).length }, this.deps.now());
  }

  private async readAlarms(call: Caller): Promise<FamilyValues['alarm']> {
    const { statinfo } = await call('cnc_statinfo', {});
    const { almmsg } = await call('cnc_rdalmmsg', { type: -1, num: 32 });
    const { opmsg } = await call('cnc_rdopmsg', { type: -1 });
    return this.alarmsSeen.stamp(toAlarmEntries(almmsg, opmsg, statinfo.emergency === EMERGENCY.EMG), this.deps.now());
  }

  private async readFeedAndSpindle(call: Caller): Promise<FamilyValues['feedAndSpindle']> {
    let feed;
    let spindleRpm;
    try {
      const { speed } = await call('cnc_rdspeed', { type: -1 });
      feed = speed.actf;
      spindleRpm = scaled(speed.acts);
    } catch (error) {
      // Older series lack cnc_rdspeed; cnc_actf/cnc_acts give the same in mm/min and rpm.
      if (!(error instanceof GatewayError && error.errorName === 'DRIVER_FAMILY_UNSUPPORTED')) throw error;
      feed = { data: (await call('cnc_actf', {})).act.data, dec: 0, unit: 0, name: 'F', suff: '' };
      spindleRpm = (await call('cnc_acts', {})).act.data;
    }
    const { pmc } = await call('pmc_rdpmcrng', { adr_type: PMC_ADDRESS.G, data_type: 0, s_number: OVERRIDE_SIGNALS.FEED, e_number: OVERRIDE_SIGNALS.SPINDLE });
    return toFeedAndSpindle(feed, spindleRpm, pmc);
  }

  private async readToolLife(call: Caller, options: ReadOptions): Promise<FamilyValues['toolLife']> {
    const { tlinfo } = await call('cnc_rdtlinfo', {});
    const groups: ToolLifeGroup[] = [];
    for (let grpNum = 1; grpNum <= tlinfo.max_group; grpNum++) {
      if (options.groupNum !== undefined && options.groupNum !== grpNum) continue;
      const { tlgrp } = await call('cnc_rdtlgrp', { grp_num: grpNum });
      let toolInUse;
      for (let index = 1; index <= tlgrp.ntool && toolInUse === undefined; index++) {
        const { tltool } = await call('cnc_rdtltool', { grp_num: grpNum, tool_num: index });
        if (tltool.tool_num === tlgrp.use_tool) toolInUse = tltool;
      }
      groups.push({ grpNum, tlgrp, toolInUse });
    }
    return toToolLife(groups).filter(
      (r) => (options.toolNum === undefined || r.toolNum === options.toolNum) && (options.offsetNum === undefined || r.offsetNum === options.offsetNum),
    );
  }

  private async readProgramList(call: Caller, options: ReadOptions): Promise<FamilyValues['programList']> {
    const { info } = this.requireSession();
    const dir = this.programDir(options.dir ?? this.options.programDir, options.subDir);
    const entries: FamilyValues['programList'] = [];
    let top = options.startPrgNo ?? 0;
    for (;;) {
      const { prgdir } = await call('cnc_rdprogdir3', { type: 2, top_prog: top, num_prg: DIR_PAGE });
      entries.push(...toProgramList(prgdir, dir, (comment) => commentText(comment, info)));
      const last = prgdir[prgdir.length - 1];
      if (prgdir.length < DIR_PAGE || last === undefined) return entries;
      top = last.number + 1;
    }
  }

  private async readCurrentProgram(session: BridgeSession): Promise<FamilyValues['currentProgram']> {
    const exeprg = await session.run('currentProgram', async (call) => (await call('cnc_exeprgname', {})).exeprg);
    const name = exeprg.name.trim() || (exeprg.o_num > 0 ? `O${exeprg.o_num}` : '');
    if (name === '') throw new GatewayError('PROGRAM_NOT_FOUND', `focas: CNC '${session.cnc}' has no program selected`);
    const dir = this.options.programDir;
    const content = await session.withTransferHandle((call) => readProgramBytes(call, dir + name, session));
    return { dir, name, content };
  }

  /** The one program directory cnc_rdprogdir3 serves; anything else is a caller error. */
  private programDir(dir: string, subDir?: string): string {
    const normalise = (d: string) => (d.endsWith('/') ? d : `${d}/`);
    const wanted = normalise(subDir ? normalise(dir) + subDir.replace(/^\/+/, '') : dir);
    if (wanted !== this.options.programDir) {
      throw new GatewayError('INVALID_PARAMETER', `focas: dir must be ${this.options.programDir}, the CNC program memory this driver serves (driverOptions.programDir); got '${wanted}'`);
    }
    return wanted;
  }

  private requireSession(): BridgeSession {
    const session = this.session;
    if (session === null || !session.isOpen) throw new GatewayError('MACHINE_NOT_CONNECTED', `focas: not connected to the bridge at ${this.machine.ip}:${this.machine.port}`);
    return session;
  }

  private lost(session: BridgeSession, reason: string): void {
    if (this.session !== session) return;
    this.session = null;
    this.deps.logger.warn({ reason }, 'focas bridge session lost');
    for (const listener of this.listeners) listener({ reason });
  }
}

async function readParams(call: Caller, numbers: readonly number[]): Promise<ParamValues> {
  const values = new Map<number, number>();
  for (const datano of numbers) values.set(datano, (await call('cnc_rdparam', { datano, axis: 0 })).param.ldata);
  return values;
}

/**
 * Whether data read so far is a whole program: its closing `%`, after the
 * opening one, followed by nothing but line ends, blanks and tape characters
 * (a DC4, trailing NULs).
 */
function endsAtClosingPercent(text: string): boolean {
  let i = text.length - 1;
  while (i >= 0 && (/\s/.test(text[i] as string) || isTapeCharacter(text.charCodeAt(i)))) i--;
  return i > 0 && text[i] === '%' && text.indexOf('%') < i;
}

/** cnc_upstart4 / cnc_upload4 … / cnc_upend4: the program's bytes as the CNC holds them. */
async function readProgramBytes(call: Caller, path: string, session: Pick<BridgeSession, 'info' | 'address'>): Promise<Buffer> {
  await call('cnc_upstart4', { type: 0, prgname: path });
  let text = '';
  try {
    for (;;) {
      const { data, length } = await call('cnc_upload4', { length: TRANSFER_CHUNK });
      text += data;
      // FOCAS data ends at the closing '%'; a bridge may also signal the end with an empty chunk.
      if (length === 0 || data === '' || endsAtClosingPercent(text)) break;
      if (text.length > MAX_PROGRAM_CHARS) throw new GatewayError('DRIVER_REQUEST_FAILED', `focas: program ${path} is longer than ${MAX_PROGRAM_CHARS} characters`);
    }
  } catch (error) {
    await call('cnc_upend4', {}).catch(() => undefined);
    throw error;
  }
  await call('cnc_upend4', {});
  return fromBridgeText(text, session.info, session.address);
}

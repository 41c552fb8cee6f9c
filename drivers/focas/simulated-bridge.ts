/**
 * What the FOCAS bridge simulator answers, without the HTTP around it: the
 * CNCs it fronts, the handles it has given out, and one answer per bridge
 * call (docs/drivers/focas-bridge-protocol.md). Handles are bridge-wide
 * numbers, each bound to the CNC it was allocated for, as FOCAS handles are
 * bound to one CNC connection.
 */
import { PROTOCOL_NAME, PROTOCOL_VERSION, requestSchemas, type BridgeFunction, type BridgeInfo } from './protocol.js';
import { EW } from './return-codes.js';
import { SimulatedCnc, type Answer, type Transfer } from './simulated-cnc.js';
import type { ProtocolSimulatorOptions } from '../protocol-simulator.js';

type Json = Record<string, unknown>;

/** Extra knobs for tests and demos; `npm run sim` uses none of them. */
export interface FocasBridgeOptions extends ProtocolSimulatorOptions {
  /** Protocol version the bridge announces; tests use it to check that clients refuse another major. */
  protocolVersion?: string;
  /** Per machineID, bridge calls whose CNC option is missing (answered EW_NOOPT). */
  missingOptions?: Readonly<Record<string, readonly BridgeFunction[]>>;
}

interface HandleState {
  cnc: SimulatedCnc;
  transfer: Transfer | null;
}

/** FOCAS allows a limited number of connections per CNC; beyond it cnc_allclibhndl3 fails with EW_SOCKET. */
const MAX_HANDLES_PER_CNC = 10;

/** A numeric argument of a call. */
type Num = (key: string) => number;

/** The calls that read the CNC: each is answered by the simulated CNC's method of the same name. */
const READ_CALLS: Partial<Record<BridgeFunction, (cnc: SimulatedCnc, num: Num) => Answer<Json>>> = {
  cnc_statinfo: (cnc) => cnc.statinfo(),
  cnc_rdalmmsg: (cnc, num) => cnc.rdalmmsg(num('num')),
  cnc_rdopmsg: (cnc) => cnc.rdopmsg(),
  cnc_exeprgname: (cnc) => cnc.exeprgname(),
  cnc_rdspeed: (cnc) => cnc.rdspeed(),
  cnc_actf: (cnc) => cnc.actf(),
  cnc_acts: (cnc) => cnc.acts(),
  pmc_rdpmcrng: (cnc, num) => cnc.pmcRange(num('adr_type'), num('data_type'), num('s_number'), num('e_number')),
  cnc_rdposition: (cnc) => cnc.rdposition(),
  cnc_rdsvmeter: (cnc) => cnc.rdsvmeter(),
  cnc_rdspmeter: (cnc) => cnc.rdspmeter(),
  cnc_rdparam: (cnc, num) => cnc.rdparam(num('datano')),
  cnc_rdtlinfo: (cnc) => cnc.rdtlinfo(),
  cnc_rdtlgrp: (cnc, num) => cnc.rdtlgrp(num('grp_num')),
  cnc_rdtltool: (cnc, num) => cnc.rdtltool(num('grp_num'), num('tool_num')),
  cnc_rdprogdir3: (cnc, num) => cnc.rdprogdir3(num('top_prog'), num('num_prg')),
};

const BUSY = { rc: EW.EW_BUSY, detail: 'a transfer is already in progress on this handle' };
const notStarted = (fn: BridgeFunction) => ({ rc: EW.EW_FUNC, detail: `${fn} without its start call` });

/** The calls of a program transfer: one transfer at a time per handle, started, fed or drained, then ended. */
const TRANSFER_CALLS: Partial<Record<BridgeFunction, (state: HandleState, args: Json) => Answer<Json>>> = {
  cnc_upstart4: (state, args) => {
    if (state.transfer) return BUSY;
    const started = state.cnc.startUpload(String(args.prgname));
    if (started.rc !== EW.EW_OK || !('transfer' in started)) return started;
    state.transfer = started.transfer;
    return { rc: EW.EW_OK };
  },
  cnc_upload4: (state, args) => {
    const t = state.transfer;
    if (t?.kind !== 'upload') return notStarted('cnc_upload4');
    // A real bridge loops on EW_BUFFER from the CNC itself and answers only with data or an error.
    const data = t.data.slice(t.offset, t.offset + Number(args.length));
    t.offset += data.length;
    return { rc: EW.EW_OK, length: data.length, data };
  },
  cnc_upend4: (state) => {
    if (state.transfer?.kind !== 'upload') return notStarted('cnc_upend4');
    state.transfer = null;
    return { rc: EW.EW_OK };
  },
  cnc_dwnstart4: (state, args) => {
    if (state.transfer) return BUSY;
    state.transfer = { kind: 'download', dir: String(args.prgname), data: '' };
    return { rc: EW.EW_OK };
  },
  cnc_download4: (state, args) => {
    const t = state.transfer;
    if (t?.kind !== 'download') return notStarted('cnc_download4');
    const data = String(args.data);
    t.data += data;
    return { rc: EW.EW_OK, length: data.length };
  },
  cnc_dwnend4: (state) => {
    const t = state.transfer;
    if (t?.kind !== 'download') return notStarted('cnc_dwnend4');
    state.transfer = null;
    return state.cnc.finishDownload(t);
  },
};

/** The bridge's CNCs and handles, answering one call at a time. */
export class SimulatedBridge {
  readonly info: BridgeInfo;
  private readonly cncs = new Map<string, SimulatedCnc>();
  private readonly handles = new Map<number, HandleState>();
  private nextHandle = 1;

  constructor(options: FocasBridgeOptions) {
    const now = options.now ?? Date.now;
    for (const spec of options.machines) {
      this.cncs.set(spec.machineID, new SimulatedCnc(spec, now, new Set(options.missingOptions?.[spec.machineID] ?? [])));
    }
    this.info = {
      protocol: PROTOCOL_NAME,
      version: options.protocolVersion ?? PROTOCOL_VERSION,
      bridge: 'focas-bridge simulator',
      cncs: options.machines.map((m) => ({ name: m.machineID, series: m.system })),
    };
  }

  /** The CNC of that name on this bridge. */
  cnc(name: string): SimulatedCnc | undefined {
    return this.cncs.get(name);
  }

  get cncNames(): string[] {
    return [...this.cncs.keys()];
  }

  /** Forgets every handle, as a bridge that stopped does. */
  dropHandles(): void {
    this.handles.clear();
  }

  /** One bridge call. Every answer is synchronous, so a handle never has two calls in flight here; a real bridge answers EW_BUSY then. */
  dispatch(cnc: SimulatedCnc, fn: BridgeFunction, raw: unknown): Answer<Json> {
    const parsed = requestSchemas[fn].safeParse(raw);
    if (!parsed.success) return { rc: EW.EW_ATTRIB, detail: `bad arguments for ${fn}: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}` };
    const args = parsed.data as Json;
    if (fn === 'cnc_allclibhndl3') return this.allocate(cnc);
    const handle = Number(args.handle);
    const state = this.handles.get(handle);
    if (state === undefined || state.cnc !== cnc) return { rc: EW.EW_HANDLE, detail: `handle ${handle} is not open on CNC '${cnc.name}'` };
    if (cnc.lacks(fn)) return { rc: EW.EW_NOOPT, detail: `CNC '${cnc.name}' has no option for ${fn}` };
    if (fn === 'cnc_freelibhndl') {
      this.handles.delete(handle);
      return { rc: EW.EW_OK };
    }
    const read = READ_CALLS[fn];
    if (read) return read(cnc, (key) => Number(args[key]));
    const transfer = TRANSFER_CALLS[fn];
    return transfer ? transfer(state, args) : { rc: EW.EW_FUNC, detail: `${fn} is not a bridge call` };
  }

  private allocate(cnc: SimulatedCnc): Answer<Json> {
    if ([...this.handles.values()].filter((h) => h.cnc === cnc).length >= MAX_HANDLES_PER_CNC) return { rc: EW.EW_SOCKET, detail: 'no free connection on the CNC' };
    const handle = this.nextHandle++;
    this.handles.set(handle, { cnc, transfer: null });
    return { rc: EW.EW_OK, handle };
  }
}

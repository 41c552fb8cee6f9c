/**
 * The FOCAS bridge simulator: the reference implementation of the bridge
 * protocol (docs/drivers/focas-bridge-protocol.md), serving simulated CNCs.
 * One bridge may front several CNCs, each addressed by its name in the path
 * (`/focas/cnc/<name>/<function>`); a real site usually runs one bridge per
 * CNC. Handles are bridge-wide numbers, each bound to the CNC it was
 * allocated for, as FOCAS handles are bound to one CNC connection.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ProtocolSimulatorOptions, RunningSimulator, SimulatedMachineSpec, StartSimulator } from '../protocol-simulator.js';
import { PROTOCOL_NAME, PROTOCOL_VERSION, INFO_PATH, BRIDGE_FUNCTIONS, requestSchemas, type BridgeFunction, type BridgeInfo } from './protocol.js';
import { EW } from './return-codes.js';
import { SimulatedCnc, type Answer, type Transfer } from './simulated-cnc.js';

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
const MAX_REQUEST_BYTES = 256 * 1024;
const PATH = /^\/focas\/cnc\/([^/]+)\/([a-z0-9_]+)$/;

type Json = Record<string, unknown>;

export async function startFocasBridge(options: FocasBridgeOptions): Promise<RunningSimulator> {
  const host = options.host ?? '127.0.0.1';
  const now = options.now ?? Date.now;
  const cncs = new Map<string, SimulatedCnc>();
  for (const spec of options.machines) cncs.set(spec.machineID, new SimulatedCnc(spec, now, new Set(options.missingOptions?.[spec.machineID] ?? [])));
  const handles = new Map<number, HandleState>();
  let nextHandle = 1;
  const info: BridgeInfo = {
    protocol: PROTOCOL_NAME,
    version: options.protocolVersion ?? PROTOCOL_VERSION,
    bridge: 'focas-bridge simulator',
    cncs: options.machines.map((m) => ({ name: m.machineID, series: m.system })),
  };

  /** One bridge call. Every branch is synchronous, so a handle never has two calls in flight here; a real bridge answers EW_BUSY then. */
  function dispatch(cnc: SimulatedCnc, fn: BridgeFunction, raw: unknown): Answer<Json> {
    const parsed = requestSchemas[fn].safeParse(raw);
    if (!parsed.success) return { rc: EW.EW_ATTRIB, detail: `bad arguments for ${fn}: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}` };
    const args = parsed.data as Json;
    if (fn === 'cnc_allclibhndl3') {
      if ([...handles.values()].filter((h) => h.cnc === cnc).length >= MAX_HANDLES_PER_CNC) return { rc: EW.EW_SOCKET, detail: 'no free connection on the CNC' };
      const handle = nextHandle++;
      handles.set(handle, { cnc, transfer: null });
      return { rc: EW.EW_OK, handle };
    }
    const handle = Number(args.handle);
    const state = handles.get(handle);
    if (state === undefined || state.cnc !== cnc) return { rc: EW.EW_HANDLE, detail: `handle ${handle} is not open on CNC '${cnc.name}'` };
    if (cnc.lacks(fn)) return { rc: EW.EW_NOOPT, detail: `CNC '${cnc.name}' has no option for ${fn}` };
    return call(state, handle, fn, args);
  }

  function call(state: HandleState, handle: number, fn: Exclude<BridgeFunction, 'cnc_allclibhndl3'>, args: Json): Answer<Json> {
    const { cnc } = state;
    const num = (key: string): number => Number(args[key]);
    switch (fn) {
      case 'cnc_freelibhndl':
        handles.delete(handle);
        return { rc: EW.EW_OK };
      case 'cnc_statinfo': return cnc.statinfo();
      case 'cnc_rdalmmsg': return cnc.rdalmmsg(num('num'));
      case 'cnc_rdopmsg': return cnc.rdopmsg();
      case 'cnc_exeprgname': return cnc.exeprgname();
      case 'cnc_rdspeed': return cnc.rdspeed();
      case 'cnc_actf': return cnc.actf();
      case 'cnc_acts': return cnc.acts();
      case 'pmc_rdpmcrng': return cnc.pmcRange(num('adr_type'), num('data_type'), num('s_number'), num('e_number'));
      case 'cnc_rdposition': return cnc.rdposition();
      case 'cnc_rdsvmeter': return cnc.rdsvmeter();
      case 'cnc_rdspmeter': return cnc.rdspmeter();
      case 'cnc_rdparam': return cnc.rdparam(num('datano'));
      case 'cnc_rdtlinfo': return cnc.rdtlinfo();
      case 'cnc_rdtlgrp': return cnc.rdtlgrp(num('grp_num'));
      case 'cnc_rdtltool': return cnc.rdtltool(num('grp_num'), num('tool_num'));
      case 'cnc_rdprogdir3': return cnc.rdprogdir3(num('top_prog'), num('num_prg'));
      default: return transfer(state, fn, args);
    }
  }

  /** Program transfer: one transfer at a time per handle, started, fed or drained, then ended. */
  function transfer(state: HandleState, fn: BridgeFunction, args: Json): Answer<Json> {
    const busy = { rc: EW.EW_BUSY, detail: 'a transfer is already in progress on this handle' };
    const notStarted = { rc: EW.EW_FUNC, detail: `${fn} without its start call` };
    const t = state.transfer;
    switch (fn) {
      case 'cnc_upstart4': {
        if (t) return busy;
        const started = state.cnc.startUpload(String(args.prgname));
        if (started.rc !== EW.EW_OK || !('transfer' in started)) return started;
        state.transfer = started.transfer;
        return { rc: EW.EW_OK };
      }
      case 'cnc_upload4': {
        if (t?.kind !== 'upload') return notStarted;
        // A real bridge loops on EW_BUFFER from the CNC itself and answers only with data or an error.
        const data = t.data.slice(t.offset, t.offset + Number(args.length));
        t.offset += data.length;
        return { rc: EW.EW_OK, length: data.length, data };
      }
      case 'cnc_upend4':
      case 'cnc_dwnend4': {
        const kind = fn === 'cnc_upend4' ? 'upload' : 'download';
        if (t?.kind !== kind) return notStarted;
        state.transfer = null;
        return t.kind === 'download' ? state.cnc.finishDownload(t) : { rc: EW.EW_OK };
      }
      case 'cnc_dwnstart4':
        if (t) return busy;
        state.transfer = { kind: 'download', dir: String(args.prgname), data: '' };
        return { rc: EW.EW_OK };
      case 'cnc_download4': {
        if (t?.kind !== 'download') return notStarted;
        const data = String(args.data);
        t.data += data;
        return { rc: EW.EW_OK, length: data.length };
      }
      default:
        return { rc: EW.EW_FUNC, detail: `${fn} is not a bridge call` };
    }
  }

  const server = http.createServer((req, res) => {
    const send = (status: number, body: unknown) => {
      const text = JSON.stringify(body);
      res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
      res.end(text);
    };
    const url = (req.url ?? '').split('?')[0] ?? '';
    if (req.method === 'GET' && url === INFO_PATH) {
      send(200, info);
      req.resume();
      return;
    }
    const match = PATH.exec(url);
    if (req.method !== 'POST' || match === null) {
      send(404, { error: `no route ${req.method ?? ''} ${url}; see GET ${INFO_PATH}` });
      req.resume();
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_REQUEST_BYTES) chunks.push(chunk);
    });
    req.on('end', () => {
      const cnc = cncs.get(decodeURIComponent(match[1] ?? ''));
      const fn = match[2] ?? '';
      if (cnc === undefined) return send(404, { error: `no CNC named '${decodeURIComponent(match[1] ?? '')}' on this bridge` });
      if (size > MAX_REQUEST_BYTES) return send(413, { error: `request body larger than ${MAX_REQUEST_BYTES} bytes` });
      if (!(BRIDGE_FUNCTIONS as string[]).includes(fn)) return send(200, { rc: EW.EW_FUNC, detail: `${fn} is not a bridge call of protocol ${PROTOCOL_VERSION}` });
      let body: unknown;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}');
      } catch {
        return send(400, { error: 'the request body is not JSON' });
      }
      send(200, dispatch(cnc, fn as BridgeFunction, body));
    });
  });
  // Keep idle connections well past the driver's sampling interval, so keep-alive actually keeps.
  server.keepAliveTimeout = 60_000;

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  options.logger?.info({ host, port, cncs: [...cncs.keys()] }, 'focas bridge simulator listening');

  let closing: Promise<void> | null = null;
  return {
    scheme: 'focas',
    host,
    port,
    describe: () => [
      `FOCAS bridge simulator (${PROTOCOL_NAME} ${info.version}) on http://${host}:${port}${INFO_PATH}`,
      ...options.machines.map((m) => `  CNC '${m.machineID}' (${m.system}, ${m.machineType}): POST http://${host}:${port}/focas/cnc/${encodeURIComponent(m.machineID)}/<function>`),
    ],
    machineConfig: (machine: SimulatedMachineSpec) => ({
      machineID: machine.machineID,
      name: `${machine.machineID} (FOCAS bridge)`,
      system: machine.system,
      machineType: machine.machineType,
      driver: 'focas',
      ip: host,
      port,
      driverOptions: { cnc: machine.machineID },
    }),
    close: () => {
      closing ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        // Keep-alive sockets would hold close() open; a stopped bridge drops them as a killed process would.
        server.closeAllConnections();
        handles.clear();
      });
      return closing;
    },
  };
}

/** The protocol simulator `npm run sim` and the tests start. */
export const startFocasSimulator: StartSimulator = (options) => startFocasBridge(options);

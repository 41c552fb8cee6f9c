/**
 * The FOCAS bridge simulator: the reference implementation of the bridge
 * protocol (docs/drivers/focas-bridge-protocol.md), serving simulated CNCs.
 * One bridge may front several CNCs, each addressed by its name in the path
 * (`/focas/cnc/<name>/<function>`); a real site usually runs one bridge per
 * CNC. This file is the HTTP server and its lifecycle; the answers are
 * `SimulatedBridge`'s (simulated-bridge.ts).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { RunningSimulator, SimulatedMachineSpec, StartSimulator } from '../protocol-simulator.js';
import { PROTOCOL_NAME, PROTOCOL_VERSION, INFO_PATH, BRIDGE_FUNCTIONS, type BridgeFunction } from './protocol.js';
import { EW } from './return-codes.js';
import { SimulatedBridge, type FocasBridgeOptions } from './simulated-bridge.js';

export type { FocasBridgeOptions } from './simulated-bridge.js';

const MAX_REQUEST_BYTES = 256 * 1024;
const PATH = /^\/focas\/cnc\/([^/]+)\/([a-z0-9_]+)$/;

type Send = (status: number, body: unknown) => void;

/** Answers one HTTP request: the handshake, or one call on one CNC. */
function serve(bridge: SimulatedBridge, req: http.IncomingMessage, res: http.ServerResponse): void {
  const send: Send = (status, body) => {
    const text = JSON.stringify(body);
    res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
    res.end(text);
  };
  const url = (req.url ?? '').split('?')[0] ?? '';
  const match = PATH.exec(url);
  if (req.method === 'GET' && url === INFO_PATH) send(200, bridge.info);
  else if (req.method !== 'POST' || match === null) send(404, { error: `no route ${req.method ?? ''} ${url}; see GET ${INFO_PATH}` });
  else return readBody(req, (body, size) => answerCall(bridge, decodeURIComponent(match[1] ?? ''), match[2] ?? '', body, size, send));
  req.resume();
}

/** Collects a request body up to the size limit; `size` is the whole size, kept or not. */
function readBody(req: http.IncomingMessage, done: (body: Buffer, size: number) => void): void {
  const chunks: Buffer[] = [];
  let size = 0;
  req.on('data', (chunk: Buffer) => {
    size += chunk.length;
    if (size <= MAX_REQUEST_BYTES) chunks.push(chunk);
  });
  req.on('end', () => done(Buffer.concat(chunks), size));
}

function answerCall(bridge: SimulatedBridge, name: string, fn: string, body: Buffer, size: number, send: Send): void {
  const cnc = bridge.cnc(name);
  if (cnc === undefined) return send(404, { error: `no CNC named '${name}' on this bridge` });
  if (size > MAX_REQUEST_BYTES) return send(413, { error: `request body larger than ${MAX_REQUEST_BYTES} bytes` });
  if (!(BRIDGE_FUNCTIONS as string[]).includes(fn)) return send(200, { rc: EW.EW_FUNC, detail: `${fn} is not a bridge call of protocol ${PROTOCOL_VERSION}` });
  let args: unknown;
  try {
    args = JSON.parse(body.toString('utf8') || '{}');
  } catch {
    return send(400, { error: 'the request body is not JSON' });
  }
  send(200, bridge.dispatch(cnc, fn as BridgeFunction, args));
}

function listen(server: http.Server, port: number, host: string): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve((server.address() as AddressInfo).port);
    });
  });
}

export async function startFocasBridge(options: FocasBridgeOptions): Promise<RunningSimulator> {
  const host = options.host ?? '127.0.0.1';
  const bridge = new SimulatedBridge(options);
  const server = http.createServer((req, res) => serve(bridge, req, res));
  // Keep idle connections well past the driver's sampling interval, so keep-alive actually keeps.
  server.keepAliveTimeout = 60_000;
  const port = await listen(server, options.port ?? 0, host);
  options.logger?.info({ host, port, cncs: bridge.cncNames }, 'focas bridge simulator listening');

  let closing: Promise<void> | null = null;
  return {
    scheme: 'focas',
    host,
    port,
    describe: () => [
      `FOCAS bridge simulator (${PROTOCOL_NAME} ${bridge.info.version}) on http://${host}:${port}${INFO_PATH}`,
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
        bridge.dropHandles();
      });
      return closing;
    },
  };
}

/** The protocol simulator `npm run sim` and the tests start. */
export const startFocasSimulator: StartSimulator = (options) => startFocasBridge(options);

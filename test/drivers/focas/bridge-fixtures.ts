/** Shared pieces of the focas tests: raw bridge calls, clients on a fake clock, and a bridge that never answers. */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { pino } from 'pino';
import { GatewayError } from '../../../core/interfaces/errors.js';
import type { SimulatedMachineSpec } from '../../../drivers/protocol-simulator.js';
import { FocasClient, focasDriver, type FocasOptionsInput } from '../../../drivers/focas/index.js';
import { PROTOCOL_NAME, PROTOCOL_VERSION, INFO_PATH } from '../../../drivers/focas/protocol.js';

export const T0 = Date.UTC(2025, 0, 6, 6, 0, 0);
export const MC: SimulatedMachineSpec = { machineID: 'MC-01', seed: 11, machineType: 'machiningCenter', system: 'FANUC 31i-B' };
export const LATHE: SimulatedMachineSpec = { machineID: 'LATHE-02', seed: 22, machineType: 'lathe', system: 'FANUC 0i-TF' };

export interface RawAnswer {
  status: number;
  body: Record<string, unknown>;
}

/** One HTTP request to a bridge, no driver involved. */
export function rawCall(port: number, method: 'GET' | 'POST', path: string, body?: unknown): Promise<RawAnswer> {
  const payload = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, method, path, agent: false, headers: payload ? { 'content-type': 'application/json' } : {} }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown> }));
    });
    req.on('error', reject);
    req.end(payload);
  });
}

/** A focas client from the factory, parsed options and all. */
export function focasClient(port: number, options: FocasOptionsInput, now: () => number = Date.now): FocasClient {
  const driverOptions = focasDriver.configSchema.parse(options);
  const client = focasDriver.create({ machineID: 'M', ip: '127.0.0.1', port, driverOptions }, { logger: pino({ level: 'silent' }), dataDir: '/tmp', now });
  if (!(client instanceof FocasClient)) throw new Error('focasDriver.create must build a FocasClient');
  return client;
}

export async function rejection(promise: Promise<unknown>): Promise<GatewayError> {
  const error = await promise.then(() => undefined, (caught: unknown) => caught);
  if (!(error instanceof GatewayError)) throw new Error(`expected a GatewayError rejection, got ${String(error)}`);
  return error;
}

/** A bridge that shakes hands and allocates a handle (unless `hangOn` says otherwise), then never answers. */
export async function startSilentBridge(hangOn: 'handshake' | 'calls'): Promise<{ port: number; close(): Promise<void> }> {
  const server = http.createServer((req, res) => {
    req.resume();
    if (hangOn === 'handshake') return;
    if (req.url === INFO_PATH) {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ protocol: PROTOCOL_NAME, version: PROTOCOL_VERSION, cncs: [{ name: 'MUTE' }] }));
      return;
    }
    if (req.url?.endsWith('/cnc_allclibhndl3')) {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ rc: 0, handle: 1 }));
    }
    // Every other call hangs, as a bridge stuck in a FOCAS call would.
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/**
 * An SHDR adapter simulator: a TCP server that plays the recorded lathe
 * (replay.ts) to every client, as adapters do: on connect the current state
 * (this round's lines so far), then each line as it falls due; `* PING` is
 * answered with `* PONG <heartbeat>`. One adapter serves one device, so it
 * takes one machine. Tests may stop the replay, send their own bytes, or
 * leave PINGs unanswered.
 */
import net from 'node:net';
import type { ProtocolSimulatorOptions, RunningSimulator, SimulatedMachineSpec } from '../protocol-simulator.js';
import { loadLathe, Replay } from './replay.js';

export interface AdapterSimulatorOptions extends ProtocolSimulatorOptions {
  /** Answer `* PING` (default true); false plays an adapter without heartbeats. */
  answerPing?: boolean;
  /** The heartbeat period the PONG asks for, ms (default 10,000). */
  heartbeatMs?: number;
  /** Play the recording (default true); false sends only what the test sends. */
  replay?: boolean;
}

export interface RunningAdapterSimulator extends RunningSimulator {
  /** Sends raw text or bytes to every connected client. */
  send(data: string | Buffer): void;
  /** Clients connected now. */
  readonly clients: number;
  /** Resolves once a client is connected. */
  connected(): Promise<void>;
}

/** A client that has not read this much is dropped rather than buffered for without end. */
const MAX_CLIENT_BACKLOG = 4 * 1024 * 1024;

/** Where in the recording a machine starts, from its seed, so machines of a fleet are not in step. */
export const startOffsetMs = (spec: SimulatedMachineSpec, roundMs: number): number => (spec.seed * 7_919) % roundMs;

export async function startMtconnectAdapterSimulator(options: AdapterSimulatorOptions): Promise<RunningAdapterSimulator> {
  const [spec, ...others] = options.machines;
  if (!spec || others.length > 0) throw new Error('an SHDR adapter serves one device: give the adapter simulator exactly one machine');
  const host = options.host ?? '127.0.0.1';
  const now = options.now ?? Date.now;
  const { model, recording } = loadLathe();
  const clients = new Set<net.Socket>();
  const waiting: Array<() => void> = [];
  const write = (socket: net.Socket, data: string | Buffer) => {
    if (socket.writableLength > MAX_CLIENT_BACKLOG) socket.destroy();
    else socket.write(data);
  };
  const broadcast = (data: string | Buffer) => {
    for (const socket of clients) write(socket, data);
  };
  const replay = new Replay(recording, model, {
    startMs: startOffsetMs(spec, recording.roundMs),
    timeScale: spec.timeScale ?? 1,
    now,
    emit: (text) => broadcast(`${text}\n`),
  });
  const server = net.createServer((socket) => {
    clients.add(socket);
    socket.setNoDelay(true);
    socket.on('close', () => clients.delete(socket));
    socket.on('error', () => socket.destroy());
    let pending = '';
    socket.on('data', (chunk: Buffer) => {
      pending = (pending + chunk.toString('latin1')).slice(-4096);
      for (let nl = pending.indexOf('\n'); nl >= 0; nl = pending.indexOf('\n')) {
        const line = pending.slice(0, nl).trim();
        pending = pending.slice(nl + 1);
        if (line.startsWith('* PING') && options.answerPing !== false) write(socket, `* PONG ${options.heartbeatMs ?? 10_000}\n`);
      }
    });
    if (options.replay !== false) for (const text of replay.snapshot()) write(socket, `${text}\n`);
    for (const resolve of waiting.splice(0)) resolve();
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => resolve());
  });
  if (options.replay !== false) replay.start();
  const port = (server.address() as net.AddressInfo).port;
  let closing: Promise<void> | undefined;
  return {
    scheme: 'mtconnect',
    host,
    port,
    get clients() {
      return clients.size;
    },
    send: broadcast,
    connected: () => (clients.size > 0 ? Promise.resolve() : new Promise<void>((resolve) => waiting.push(resolve))),
    describe: () => [
      `SHDR adapter of ${spec.machineID}: the recorded lathe (drivers/mtconnect/recordings/lathe.shdr), a ${Math.round(recording.roundMs / 1000)} s round`,
      `read it with "driver": "mtconnect", "ip": "${host}", "port": ${port} (or driverOptions.adapter "${host}:${port}")`,
    ],
    machineConfig: (machine) => ({
      machineID: machine.machineID,
      name: `${machine.machineID} (MTConnect adapter)`,
      system: machine.system,
      machineType: machine.machineType,
      driver: 'mtconnect',
      ip: host,
      port,
      driverOptions: {},
    }),
    close: () =>
      (closing ??= new Promise<void>((resolve) => {
        replay.stop();
        for (const socket of clients) socket.destroy();
        server.close(() => resolve());
      })),
  };
}

import { createServer, type Server, type Socket } from 'node:net';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterEach, describe, expect, it } from 'vitest';
import ModbusSerial from 'modbus-serial';
import type { ServerTCP } from 'modbus-serial';
import { freePort, startModbusSimulator } from '../../../drivers/modbus/simulator.js';
import type { RunningSimulator } from '../../../drivers/protocol-simulator.js';
import type { ModbusClient } from '../../../drivers/modbus/index.js';
import { ModbusConnection } from '../../../drivers/modbus/connection.js';
import { modbusClient, rejection } from './helpers.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
async function until(what: string, check: () => boolean): Promise<void> {
  for (let waited = 0; !check(); waited += 10) {
    if (waited > 5000) throw new Error(`timed out waiting for ${what}`);
    await sleep(10);
  }
}

function track(client: ModbusClient): ModbusClient {
  cleanups.push(() => client.close());
  return client;
}

async function simulator(port = 0): Promise<RunningSimulator> {
  const sim = await startModbusSimulator({ port, machines: [{ machineID: 'MB-01', seed: 5, machineType: 'mill', system: 'FANUC' }] });
  cleanups.push(() => sim.close());
  return sim;
}

/** A Modbus server whose answers take a few ms and which counts how many requests it handles at once. */
async function countingServer(): Promise<{ port: number; stats: { inFlight: number; maxInFlight: number; served: number } }> {
  const stats = { inFlight: 0, maxInFlight: 0, served: 0 };
  const answer = async (address: number, length: number) => {
    stats.inFlight++;
    stats.maxInFlight = Math.max(stats.maxInFlight, stats.inFlight);
    await sleep(3);
    stats.inFlight--;
    stats.served++;
    return Array.from({ length }, (_, i) => (address + i) % 2);
  };
  const vector = {
    getHoldingRegister: async (address: number) => (await answer(address, 1))[0] ?? 0,
    getMultipleHoldingRegisters: (address: number, length: number) => answer(address, length),
  };
  const port = await freePort('127.0.0.1');
  const server: ServerTCP = await new Promise((resolve, reject) => {
    const started = new ModbusSerial.ServerTCP(vector, { host: '127.0.0.1', port });
    started.on('initialized', () => resolve(started));
    started.on('serverError', reject);
  });
  cleanups.push(() => new Promise((resolve) => server.close(() => resolve())));
  return { port, stats };
}

/** A TCP server that accepts connections and never answers. */
async function silentServer(): Promise<number> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen({ host: '127.0.0.1', port: 0 }, resolve));
  cleanups.push(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  const address = server.address();
  return typeof address === 'object' && address ? address.port : 0;
}

/** A full garbage collection, for checking what is still reachable. */
function collectGarbage(): void {
  setFlagsFromString('--expose-gc');
  (runInNewContext('gc') as () => void)();
}

const holding = (address: number, type: string, extra: Record<string, unknown> = {}) => ({ function: 'holding', address, type, ...extra });
const SMALL_MAP = {
  status: {
    adjustedStatus: holding(0, 'uint16', { enum: { '0': 'RESET', '1': 'RUNNING' } }),
    alarmStatus: holding(50, 'bool'),
  },
  toolNumber: { toolNumber: holding(101, 'uint16') },
};

describe('modbus connection', () => {
  it('sends one request at a time on a connection, however many reads are waiting', async () => {
    const { port, stats } = await countingServer();
    const client = track(modbusClient(port, { map: SMALL_MAP }));
    await client.connect();
    const reads = await Promise.all([
      ...Array.from({ length: 5 }, () => client.read('status')),
      ...Array.from({ length: 5 }, () => client.read('toolNumber')),
    ]);
    expect(stats.maxInFlight).toBe(1);
    // A status read is two requests here (registers 0 and 50 are more than maxGapRegisters apart).
    expect(stats.served).toBe(15);
    expect(reads[0]).toMatchObject({ adjustedStatus: 'RESET', cncStatus: '0', alarmStatus: false, alarmLevel: 'none', mode: 'UNKNOWN', programStatus: 'stopped' });
    expect(reads[9]).toEqual({ toolNumber: 1 });
  });

  it('gives DRIVER_TIMEOUT when the device does not answer, and keeps serving the queue', async () => {
    const port = await silentServer();
    const client = track(modbusClient(port, { map: SMALL_MAP, requestTimeoutMs: 150 }));
    await client.connect();
    const [first, second] = await Promise.all([rejection(client.read('status')), rejection(client.read('toolNumber'))]);
    expect(first.errorName).toBe('DRIVER_TIMEOUT');
    expect(first.message).toContain('unit 1 holding 0+1 got no answer within 150 ms (driverOptions.requestTimeoutMs)');
    expect(second.errorName).toBe('DRIVER_TIMEOUT');
  });

  it('reports a refused connection as MACHINE_NOT_CONNECTED', async () => {
    const port = await freePort('127.0.0.1');
    const error = await rejection(modbusClient(port).connect());
    expect(error.errorName).toBe('MACHINE_NOT_CONNECTED');
    expect(error.message).toContain('ECONNREFUSED');
  });

  it('reports a Modbus exception as DRIVER_REQUEST_FAILED naming the request', async () => {
    const sim = await simulator();
    const client = track(modbusClient(sim.port, { unitId: 9 }));
    await client.connect();
    const error = await rejection(client.read('status'));
    expect(error.errorName).toBe('DRIVER_REQUEST_FAILED');
    expect(error.message).toMatch(/unit 9 holding 0\+28 failed: Modbus exception 11/);
  });

  it('tells listeners when the device drops the link, refuses reads, and reconnects on a new socket', async () => {
    const sim = await simulator();
    const client = track(modbusClient(sim.port, { unitId: 1 }));
    const losses: string[] = [];
    client.onConnectionLost((event) => losses.push(event.reason));
    await client.connect();
    expect((await client.read('status')).adjustedStatus).toBeDefined();
    await sim.close();
    await until('the connection loss', () => losses.length > 0);
    expect(losses).toEqual(['connection closed by the device']);
    expect((await rejection(client.read('status'))).errorName).toBe('MACHINE_NOT_CONNECTED');
    expect((await rejection(client.connect())).errorName).toBe('MACHINE_NOT_CONNECTED');
    await simulator(sim.port);
    await client.connect();
    expect((await client.read('count')).partsTotal).toBeGreaterThanOrEqual(0);
    expect(losses).toHaveLength(1);
  });

  it('keeps no answer alive once its reader has let it go', async () => {
    const sim = await simulator();
    const connection = new ModbusConnection({ host: '127.0.0.1', port: sim.port, unitId: 1, connectTimeoutMs: 2000, requestTimeoutMs: 2000 }, () => undefined);
    cleanups.push(async () => connection.close());
    await connection.open();
    const answers: WeakRef<object>[] = [];
    for (let i = 0; i < 20; i++) answers.push(new WeakRef(await connection.read('holding', 0, 28)));
    // WeakRefs hold their targets until the current job ends.
    await new Promise<void>((resolve) => setImmediate(resolve));
    collectGarbage();
    expect(answers.filter((answer) => answer.deref() !== undefined)).toHaveLength(0);
    // The connection still answers after the collection.
    expect(await connection.read('holding', 0, 28)).toHaveLength(28);
  });
});

/**
 * One Modbus TCP connection: a socket this module owns, handed to a
 * modbus-serial client with `linkTCP`. Owning the socket gives a bounded
 * connect (the library's connectTCP waits for the OS) and a `close` event
 * whether the peer ended the link or reset it (the library reports only the
 * former). Requests are serialised, one in flight, each with the client's
 * transaction timeout set (the library default is to wait forever). A dead
 * link is never reused: `open()` throws the old socket and client away.
 *
 * Every request is given the link's one callback, never a closure of its
 * own: the library keeps each request's callback in a table of 256
 * transaction ids per connection that it never empties, so a per-request
 * closure (or its promise API, which makes one) would keep that request's
 * promise and answer alive until the id comes round again, about 1 kB per
 * request, some 50 MB for 200 machines.
 */
import { createConnection, type Socket } from 'node:net';
import type { ModbusRTU } from 'modbus-serial/ModbusRTU.js';
import { GatewayError } from '../../core/interfaces/errors.js';
import { SerialQueue } from '../../core/runtime/semaphore.js';
import type { ModbusFunction } from './register-items.js';

export interface ConnectionSettings {
  host: string;
  port: number;
  unitId: number;
  connectTimeoutMs: number;
  requestTimeoutMs: number;
}

/** Words of a register read, or bits of a coil/discrete-input read. */
export type ReadResult = number[] | boolean[];

/** What the library calls back with; `data` is words or bits by function. */
type Answer = (error: unknown, result?: { data: ReadResult }) => void;

interface Link {
  socket: Socket;
  client: ModbusRTU;
  /** The one callback every request on this link is sent with. */
  answer: Answer;
}

/** The request in flight: how to settle it, and what it asked for (for errors). */
interface InFlight {
  resolve: (result: ReadResult) => void;
  reject: (error: GatewayError) => void;
  what: string;
}

interface ModbusLibraryError {
  name?: string;
  message?: string;
  errno?: string;
  modbusCode?: number;
}

const ignore = () => undefined;

export class ModbusConnection {
  private link: Link | undefined;
  /** Bumped by open() and close(), so an open that was overtaken gives its socket up. */
  private generation = 0;
  private readonly queue = new SerialQueue();
  private inFlight: InFlight | undefined;

  constructor(
    private readonly settings: ConnectionSettings,
    /** Called when an open link drops on its own (not on close()). */
    private readonly onLost: (reason: string) => void,
  ) {}

  get isOpen(): boolean {
    return this.link !== undefined;
  }

  async open(): Promise<void> {
    this.discard();
    const generation = ++this.generation;
    // modbus-serial is CommonJS: its module.exports is the client class, and module.exports.default points to it too.
    const ModbusClient = (await import('modbus-serial')).default.default;
    const socket = await this.connectSocket();
    if (generation !== this.generation) {
      socket.destroy();
      throw this.notConnected('connection closed while opening');
    }
    const client = new ModbusClient();
    try {
      // The port is informational here: the socket is already connected.
      await client.linkTCP(socket, { port: this.settings.port });
    } catch (error) {
      socket.destroy();
      throw this.notConnected(error instanceof Error ? error.message : String(error));
    }
    client.setTimeout(this.settings.requestTimeoutMs);
    const link: Link = { socket, client, answer: (error, result) => this.answered(link, error, result) };
    this.link = link;
    socket.once('close', () => this.dropped(link, 'connection closed by the device'));
  }

  /** Reads `count` registers or bits from `address`; queued behind any request in flight. */
  read(fn: ModbusFunction, address: number, count: number): Promise<ReadResult> {
    return this.queue.run(() => this.send(fn, address, count));
  }

  /** Closes the link without telling onLost; safe to call twice. */
  close(): void {
    this.generation++;
    this.discard();
  }

  private send(fn: ModbusFunction, address: number, count: number): Promise<ReadResult> {
    const link = this.link;
    if (!link) return Promise.reject(this.notConnected('not connected'));
    const { unitId } = this.settings;
    return new Promise<ReadResult>((resolve, reject) => {
      this.inFlight = { resolve, reject, what: `unit ${unitId} ${fn} ${address}+${count}` };
      const client = link.client;
      if (fn === 'holding') client.writeFC3(unitId, address, count, link.answer);
      else if (fn === 'input') client.writeFC4(unitId, address, count, link.answer);
      else if (fn === 'coils') client.writeFC1(unitId, address, count, link.answer);
      else client.writeFC2(unitId, address, count, link.answer);
    });
  }

  /** The library's answer to the request in flight on `link`; one from a link given up, or with none in flight, is dropped. */
  private answered(link: Link, error: unknown, result: { data: ReadResult } | undefined): void {
    const inFlight = this.inFlight;
    if (this.link !== link || !inFlight) return;
    this.inFlight = undefined;
    if (error || !result) inFlight.reject(this.translate(error, inFlight.what));
    else inFlight.resolve(result.data);
  }

  private connectSocket(): Promise<Socket> {
    const { host, port, connectTimeoutMs } = this.settings;
    return new Promise((resolve, reject) => {
      const socket = createConnection({ host, port });
      // Keeps a late error (after a timeout, or after the library's handler is gone) from being unhandled.
      socket.on('error', ignore);
      const timer = setTimeout(() => {
        socket.destroy();
        reject(new GatewayError('DRIVER_TIMEOUT', `modbus: connect to ${host}:${port} got no answer within ${connectTimeoutMs} ms (driverOptions.connectTimeoutMs)`));
      }, connectTimeoutMs);
      socket.once('connect', () => {
        clearTimeout(timer);
        socket.removeAllListeners('error');
        socket.on('error', ignore);
        socket.setNoDelay(true);
        resolve(socket);
      });
      socket.once('error', (error: Error) => {
        clearTimeout(timer);
        socket.destroy();
        reject(this.notConnected(error.message));
      });
    });
  }

  private dropped(link: Link, reason: string): void {
    if (this.link !== link) return;
    this.discard();
    this.onLost(reason);
  }

  /** Forgets the current link, destroying its socket and the client's timers, and fails the request in flight. */
  private discard(): void {
    const link = this.link;
    this.link = undefined;
    if (link) {
      link.client.destroy(ignore);
      link.socket.destroy();
    }
    const inFlight = this.inFlight;
    this.inFlight = undefined;
    inFlight?.reject(this.notConnected('connection closed'));
  }

  private translate(error: unknown, what: string): GatewayError {
    const e = (error ?? {}) as ModbusLibraryError;
    if (e.name === 'TransactionTimedOutError' || e.errno === 'ETIMEDOUT') {
      return new GatewayError('DRIVER_TIMEOUT', `modbus: ${what} got no answer within ${this.settings.requestTimeoutMs} ms (driverOptions.requestTimeoutMs)`);
    }
    if (e.name === 'PortNotOpenError') return this.notConnected('not connected');
    return new GatewayError('DRIVER_REQUEST_FAILED', `modbus: ${what} failed: ${e.message ?? String(error)}`);
  }

  private notConnected(detail: string): GatewayError {
    return new GatewayError('MACHINE_NOT_CONNECTED', `modbus: ${this.settings.host}:${this.settings.port}: ${detail}`);
  }
}

/**
 * One TCP connection to an SHDR adapter, as the reference agent keeps it
 * (cppagent's Connector): `* PING` on connect; an answer `* PONG <ms>` starts
 * heartbeats (a PING every <ms>) and the connection counts as dead after two
 * heartbeats without data; an adapter that never answers is a legacy one, and
 * its connection counts as dead after `legacyTimeoutMs` without data.
 *
 * Lines are split here, with bounds: a line longer than `maxLineBytes` or a
 * run of lines that are not SHDR text (NUL or invalid UTF-8 bytes, or no
 * timestamp) drops the connection with the reason, so a peer that is not an
 * adapter, or one gone wrong, cannot make the gateway buffer without end.
 * Nothing reconnects here: the machine actor does.
 */
import net from 'node:net';
import { GatewayError } from '../../core/interfaces/errors.js';

export interface ShdrConnectionSettings {
  host: string;
  port: number;
  connectTimeoutMs: number;
  legacyTimeoutMs: number;
  /** Heartbeat period to use instead of the one the adapter's PONG gives. */
  heartbeatMs: number | undefined;
  maxLineBytes: number;
  /** Lines in a row that are not SHDR text before the peer counts as no adapter. */
  maxBadLinesInARow: number;
  /** The gateway's clock, unix ms. */
  now: () => number;
}

export interface ShdrConnectionHandlers {
  /** One non-blank line of text; returns false when it was not SHDR. Throwing ShdrBreak-like errors drops the connection. */
  line(text: string, receivedAt: number): boolean;
  /** The connection died after it opened; called once. */
  lost(reason: string): void;
}

/** The longest heartbeat a PONG may ask for, as the reference agent bounds it. */
const MAX_HEARTBEAT_MS = 30 * 60_000;
const NEWLINE = 0x0a;

const hex = (bytes: Buffer): string => [...bytes.subarray(0, 8)].map((b) => b.toString(16).padStart(2, '0')).join(' ');

/** True when the decoded line holds bytes no SHDR text has: NUL, other control characters, or invalid UTF-8. */
function notText(text: string): boolean {
  // eslint-disable-next-line no-control-regex -- control characters are exactly what is looked for
  return /[\u0000-\u0008\u000e-\u001f\ufffd]/.test(text);
}

export class ShdrConnection {
  private socket: net.Socket | undefined;
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  private badInARow = 0;
  private open_ = false;
  private ended = false;
  private watchdog: NodeJS.Timeout | undefined;
  private pinger: NodeJS.Timeout | undefined;
  private receiveLimitMs: number;
  /** The heartbeat period once the adapter answered PING, ms. */
  heartbeatMs: number | undefined;

  constructor(
    private readonly settings: ShdrConnectionSettings,
    private readonly handlers: ShdrConnectionHandlers,
  ) {
    this.receiveLimitMs = settings.legacyTimeoutMs;
  }

  get alive(): boolean {
    return this.open_ && !this.ended;
  }

  get where(): string {
    return `adapter ${this.settings.host}:${this.settings.port}`;
  }

  /** Connects within connectTimeoutMs and sends `* PING`. */
  async open(): Promise<void> {
    const { host, port, connectTimeoutMs } = this.settings;
    const socket = new net.Socket();
    this.socket = socket;
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        socket.destroy();
        reject(new GatewayError('DRIVER_TIMEOUT', `mtconnect: ${this.where} did not accept the connection within ${connectTimeoutMs} ms (driverOptions.connectTimeoutMs)`));
      }, connectTimeoutMs);
      socket.once('connect', () => {
        clearTimeout(timer);
        resolve();
      });
      socket.once('error', (error: NodeJS.ErrnoException) => {
        clearTimeout(timer);
        socket.destroy();
        reject(new GatewayError('MACHINE_NOT_CONNECTED', `mtconnect: cannot reach ${this.where} (${error.code ?? error.message})`));
      });
      socket.connect({ host, port });
    });
    if (this.ended) {
      socket.destroy();
      throw new GatewayError('MACHINE_NOT_CONNECTED', 'mtconnect: client closed');
    }
    socket.setNoDelay(true);
    socket.setKeepAlive(true, 10_000);
    socket.on('data', (chunk: Buffer) => this.onData(chunk));
    socket.on('error', (error: NodeJS.ErrnoException) => this.drop(`connection to ${this.where} failed (${error.code ?? error.message})`));
    socket.on('close', () => this.drop(`${this.where} closed the connection`));
    this.open_ = true;
    this.watchdog = setTimeout(() => this.silent(), this.receiveLimitMs);
    socket.write('* PING\n');
  }

  /** Closes the socket and every timer. Safe to call twice. */
  async close(): Promise<void> {
    this.ended = true;
    this.stopTimers();
    const socket = this.socket;
    this.socket = undefined;
    socket?.removeAllListeners('data');
    socket?.on('error', () => undefined);
    socket?.destroy();
  }

  /** Drops the connection: the reason goes to the handler once. */
  drop(reason: string): void {
    if (this.ended) return;
    const wasOpen = this.open_;
    void this.close();
    if (wasOpen) this.handlers.lost(`mtconnect: ${reason}`);
  }

  private stopTimers(): void {
    clearTimeout(this.watchdog);
    clearInterval(this.pinger);
    this.watchdog = undefined;
    this.pinger = undefined;
  }

  private silent(): void {
    const seconds = (this.receiveLimitMs / 1000).toFixed(1);
    this.drop(
      this.heartbeatMs === undefined
        ? `${this.where} sent nothing for ${seconds} s and never answered '* PING' with '* PONG', so it sends no heartbeat (driverOptions.legacyTimeoutMs)`
        : `${this.where} sent nothing for ${seconds} s, two of its ${this.heartbeatMs} ms heartbeats`,
    );
  }

  private onData(chunk: Buffer): void {
    if (this.ended) return;
    this.watchdog?.refresh();
    const receivedAt = this.settings.now();
    let start = 0;
    try {
      for (let nl = chunk.indexOf(NEWLINE, start); nl >= 0; nl = chunk.indexOf(NEWLINE, start)) {
        const part = chunk.subarray(start, nl);
        start = nl + 1;
        const bytes = this.pending.length ? Buffer.concat([...this.pending, part]) : part;
        this.pending = [];
        this.pendingBytes = 0;
        if (bytes.length > this.settings.maxLineBytes) return this.drop(this.tooLong(bytes.length));
        this.onLine(bytes, receivedAt);
        if (this.ended) return;
      }
      if (start < chunk.length) {
        const rest = chunk.subarray(start);
        this.pendingBytes += rest.length;
        if (this.pendingBytes > this.settings.maxLineBytes) return this.drop(this.tooLong(this.pendingBytes));
        // A copy, so the socket's chunk is not held for a line that may take long to end.
        this.pending.push(Buffer.from(rest));
      }
    } catch (error) {
      this.drop(`${this.where}: ${error instanceof Error ? error.message : String(error)}`);
    }
  }

  private tooLong(bytes: number): string {
    return `${this.where} sent a line of more than ${this.settings.maxLineBytes} bytes (${bytes} so far without an end of line; driverOptions.maxLineBytes)`;
  }

  private onLine(bytes: Buffer, receivedAt: number): void {
    const text = bytes.toString('utf8').trimEnd();
    if (text === '') return;
    let shdr: boolean;
    if (notText(text)) shdr = false;
    else if (text.startsWith('* PONG')) {
      this.pong(text);
      shdr = true;
    } else shdr = this.handlers.line(text, receivedAt);
    this.badInARow = shdr ? 0 : this.badInARow + 1;
    if (this.badInARow >= this.settings.maxBadLinesInARow) {
      this.drop(`${this.where} does not speak SHDR: ${this.badInARow} lines in a row were not SHDR text (the last began with bytes ${hex(bytes)})`);
    }
  }

  private pong(text: string): void {
    if (this.heartbeatMs !== undefined) return;
    const asked = /^\* PONG\s+(\d+)/.exec(text);
    const period = this.settings.heartbeatMs ?? (asked ? Number(asked[1]) : NaN);
    if (!(period > 0 && period < MAX_HEARTBEAT_MS)) return;
    this.heartbeatMs = period;
    this.receiveLimitMs = 2 * period;
    clearTimeout(this.watchdog);
    this.watchdog = setTimeout(() => this.silent(), this.receiveLimitMs);
    this.pinger = setInterval(() => this.socket?.write('* PING\n'), period);
  }
}

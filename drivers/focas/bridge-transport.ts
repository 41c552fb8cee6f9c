/**
 * JSON over HTTP/1.1 to one bridge, on a keep-alive agent of its own. Every
 * request is bounded by a timer that never outlives it. An idle keep-alive
 * socket that closes is reported, so the session can check whether the
 * bridge went away between requests.
 */
import http from 'node:http';
import type { Socket } from 'node:net';
import { GatewayError } from '../../core/interfaces/errors.js';

export interface TransportTarget {
  host: string;
  port: number;
}

export interface TransportRequest {
  method: 'GET' | 'POST';
  path: string;
  body?: unknown;
  timeoutMs: number;
  /** Names the timeout setting in the DRIVER_TIMEOUT text. */
  setting: string;
  /** What is being asked, for error texts, e.g. `cnc_statinfo on CNC 'MC-01'`. */
  what: string;
  /** Safe to send again: retried once when a reused keep-alive socket turns out closed. */
  idempotent: boolean;
}

export interface TransportResponse {
  status: number;
  body: unknown;
}

/** Transport errors that mean the bridge cannot be reached at all. */
const UNREACHABLE = new Set(['ECONNREFUSED', 'ECONNRESET', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN', 'EPIPE', 'ETIMEDOUT', 'ECONNABORTED']);
/** Responses larger than this are refused: no bridge call answers with more. */
const MAX_BODY_BYTES = 1 << 20;

class RequestTimeout extends Error {}

export class BridgeTransport {
  private readonly agent: http.Agent;
  private readonly watched = new WeakSet<Socket>();
  /** Sockets this side destroyed (timeouts), whose close says nothing about the bridge. */
  private readonly abandoned = new WeakSet<Socket>();
  private inFlight = 0;
  private destroyed = false;

  constructor(
    private readonly target: TransportTarget,
    /** Called when a keep-alive socket closes while no request is in flight. */
    private readonly onIdleClose: () => void,
  ) {
    // Two sockets at most: the session's handle and a program-transfer handle.
    this.agent = new http.Agent({ keepAlive: true, maxSockets: 2, maxFreeSockets: 2 });
  }

  get address(): string {
    return `${this.target.host}:${this.target.port}`;
  }

  async send(request: TransportRequest): Promise<TransportResponse> {
    if (this.destroyed) throw new GatewayError('MACHINE_NOT_CONNECTED', `focas: connection to the bridge at ${this.address} is closed`);
    try {
      return await this.once(request);
    } catch (error) {
      const retry = request.idempotent && error instanceof ReusedSocketClosed && !this.destroyed;
      if (!retry) throw error instanceof ReusedSocketClosed ? error.gatewayError : error;
      return this.once(request).catch((again: unknown) => {
        throw again instanceof ReusedSocketClosed ? again.gatewayError : again;
      });
    }
  }

  /** Closes every socket; requests in flight reject with MACHINE_NOT_CONNECTED. */
  destroy(): void {
    this.destroyed = true;
    this.agent.destroy();
  }

  private once(request: TransportRequest): Promise<TransportResponse> {
    const payload = request.body === undefined ? undefined : Buffer.from(JSON.stringify(request.body));
    return new Promise<TransportResponse>((resolve, reject) => {
      this.inFlight++;
      let settled = false;
      const finish = (outcome: () => void) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        this.inFlight--;
        outcome();
      };
      const req = http.request({
        host: this.target.host,
        port: this.target.port,
        method: request.method,
        path: request.path,
        agent: this.agent,
        headers: {
          accept: 'application/json',
          ...(payload ? { 'content-type': 'application/json', 'content-length': payload.length } : {}),
        },
      });
      const timer = setTimeout(() => {
        if (req.socket) this.abandoned.add(req.socket);
        req.destroy(new RequestTimeout());
      }, request.timeoutMs);
      req.on('socket', (socket) => this.watch(socket));
      req.on('error', (error: NodeJS.ErrnoException) =>
        finish(() => {
          if (error instanceof RequestTimeout) {
            reject(new GatewayError('DRIVER_TIMEOUT', `focas: ${request.what} got no answer from the bridge at ${this.address} within ${request.timeoutMs} ms (${request.setting})`));
            return;
          }
          const failure = this.transportError(request, error);
          reject(req.reusedSocket && (error.code === 'ECONNRESET' || error.message === 'socket hang up') ? new ReusedSocketClosed(failure) : failure);
        }),
      );
      req.on('response', (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > MAX_BODY_BYTES) {
            req.destroy(new Error(`response larger than ${MAX_BODY_BYTES} bytes`));
            return;
          }
          chunks.push(chunk);
        });
        res.on('error', (error) => finish(() => reject(this.transportError(request, error))));
        res.on('end', () =>
          finish(() => {
            const text = Buffer.concat(chunks).toString('utf8');
            try {
              resolve({ status: res.statusCode ?? 0, body: text === '' ? undefined : (JSON.parse(text) as unknown) });
            } catch {
              reject(new GatewayError('DRIVER_REQUEST_FAILED', `focas: the bridge at ${this.address} answered ${request.what} with a body that is not JSON (HTTP ${res.statusCode ?? 0})`));
            }
          }),
        );
      });
      req.end(payload);
    });
  }

  private watch(socket: Socket): void {
    if (this.watched.has(socket)) return;
    this.watched.add(socket);
    socket.once('close', () => {
      if (this.destroyed || this.abandoned.has(socket) || this.inFlight > 0) return;
      this.onIdleClose();
    });
  }

  private transportError(request: TransportRequest, error: NodeJS.ErrnoException): GatewayError {
    if (this.destroyed) return new GatewayError('MACHINE_NOT_CONNECTED', `focas: connection to the bridge at ${this.address} was closed during ${request.what}`);
    const code = error.code ?? error.message;
    if (error.code === undefined || UNREACHABLE.has(error.code) || error.message === 'socket hang up') {
      return new GatewayError('MACHINE_NOT_CONNECTED', `focas: the bridge at ${this.address} is unreachable (${code}) during ${request.what}`);
    }
    return new GatewayError('DRIVER_REQUEST_FAILED', `focas: ${request.what} failed at the bridge ${this.address} (${code})`);
  }
}

/** A request on a reused keep-alive socket that the bridge had already closed: worth one retry. */
class ReusedSocketClosed extends Error {
  constructor(readonly gatewayError: GatewayError) {
    super(gatewayError.message);
  }
}

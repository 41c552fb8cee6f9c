/**
 * One session with one CNC behind a bridge: the handshake, a FOCAS handle
 * (`cnc_allclibhndl3`) and the handle's request queue. FOCAS handles are not
 * re-entrant, so a handle runs one job at a time; a job is one or more calls
 * that belong together (a family read, a program transfer). A session is
 * never reused after it is closed or lost: connect() opens a new one.
 */
import { GatewayError } from '../../core/interfaces/errors.js';
import { SerialQueue } from '../../core/runtime/semaphore.js';
import type { ItemFamily } from '../../core/driver-seam/driver.js';
import { BridgeTransport, type TransportTarget } from './bridge-transport.js';
import {
  INFO_PATH, PROTOCOL_MAJOR, PROTOCOL_NAME, callPath, httpErrorSchema, infoSchema, requestSchemas, responseSchemas, returnCodeSchema,
  type BridgeFunction, type BridgeInfo, type BridgeRequest, type BridgeResponse,
} from './protocol.js';
import { EW, errorForReturnCode } from './return-codes.js';
import { inDriverRequest, type DriverPeer } from '../../core/telemetry/drivers.js';

export interface SessionSettings {
  /** CNC name on the bridge; undefined picks the bridge's only CNC. */
  cnc: string | undefined;
  requestTimeoutMs: number;
  connectTimeoutMs: number;
  /** Who the calls go to, for their spans (core/telemetry/drivers.ts). */
  peer?: DriverPeer;
}

/** A call's arguments without the handle, which the session adds. */
export type CallArgs<F extends BridgeFunction> = Omit<BridgeRequest<F>, 'handle'>;
/** Runs one bridge call on the job's handle. */
export type Caller = <F extends BridgeFunction>(fn: F, args: CallArgs<F>) => Promise<BridgeResponse<F>>;

/** Calls that change nothing on the CNC, so a retry after a stale keep-alive socket is safe. */
const NOT_IDEMPOTENT: ReadonlySet<BridgeFunction> = new Set([
  'cnc_allclibhndl3', 'cnc_upstart4', 'cnc_upload4', 'cnc_upend4', 'cnc_dwnstart4', 'cnc_download4', 'cnc_dwnend4',
]);

export class BridgeSession {
  private closed = false;
  private probing = false;
  private readonly queue = new SerialQueue();

  private constructor(
    private readonly transport: BridgeTransport,
    readonly info: BridgeInfo,
    readonly cnc: string,
    private readonly handle: number,
    private readonly settings: SessionSettings,
    private readonly onLost: (reason: string) => void,
  ) {}

  /** Handshake, CNC check and handle allocation, all within the connect timeout. */
  static async open(target: TransportTarget, settings: SessionSettings, onLost: (reason: string) => void): Promise<BridgeSession> {
    let session: BridgeSession | undefined;
    const transport = new BridgeTransport(target, () => session?.probe());
    // One budget for the whole connect, so the actor's connect watchdog sees one bound.
    const deadline = Date.now() + settings.connectTimeoutMs;
    try {
      const info = await BridgeSession.handshake(transport, settings.connectTimeoutMs);
      const cnc = pickCnc(info, settings.cnc, transport.address);
      const timeoutSec = Math.max(1, Math.ceil(settings.requestTimeoutMs / 1000));
      const left = Math.max(1, deadline - Date.now());
      const { handle } = await callOnce(transport, cnc, 'cnc_allclibhndl3', { timeout: timeoutSec }, 'status', left, 'driverOptions.connectTimeoutMs');
      session = new BridgeSession(transport, info, cnc, handle, settings, onLost);
      return session;
    } catch (error) {
      transport.destroy();
      throw error;
    }
  }

  private static async handshake(transport: BridgeTransport, timeoutMs: number): Promise<BridgeInfo> {
    const res = await transport.send({
      method: 'GET', path: INFO_PATH, timeoutMs, setting: 'driverOptions.connectTimeoutMs', what: 'the handshake (GET /focas/info)', idempotent: true,
    });
    const parsed = infoSchema.safeParse(res.body);
    if (res.status !== 200 || !parsed.success) {
      throw new GatewayError('MACHINE_NOT_CONNECTED', `focas: ${transport.address} did not answer GET ${INFO_PATH} as a FOCAS bridge (HTTP ${res.status})`);
    }
    const info = parsed.data;
    const major = Number(info.version.split('.')[0]);
    if (info.protocol !== PROTOCOL_NAME || major !== PROTOCOL_MAJOR) {
      throw new GatewayError(
        'MACHINE_NOT_CONNECTED',
        `focas: the bridge at ${transport.address} speaks ${info.protocol} ${info.version}; this driver speaks ${PROTOCOL_NAME} ${PROTOCOL_MAJOR}.x (incompatible major version: upgrade the bridge or the gateway)`,
      );
    }
    return info;
  }

  get isOpen(): boolean {
    return !this.closed;
  }

  /** `host:port` of the bridge, for messages. */
  get address(): string {
    return this.transport.address;
  }

  /**
   * Runs `job` on the session's handle once the jobs queued before it are
   * done. A job that waited longer than one request timeout fails unsent, so a
   * hung bridge cannot pile up work.
   */
  run<T>(family: ItemFamily, job: (call: Caller) => Promise<T>): Promise<T> {
    return this.queue.run(async () => {
      this.ensureOpen();
      return job(this.caller(this.handle, family));
    }, {
      maxWaitMs: this.settings.requestTimeoutMs,
      // A session closed meanwhile says so first: reconnecting is what helps then.
      onWaitedTooLong: (waited) => this.closed
        ? this.closedError()
        : new GatewayError('DRIVER_TIMEOUT', `focas: ${family} read waited ${waited} ms for the busy handle on CNC '${this.cnc}' (driverOptions.requestTimeoutMs)`),
    });
  }

  /**
   * Runs `job` on a handle of its own, allocated for it and freed after: a
   * program transfer takes many calls and must not hold up status sampling.
   */
  async withTransferHandle<T>(job: (call: Caller) => Promise<T>): Promise<T> {
    this.ensureOpen();
    const timeoutSec = Math.max(1, Math.ceil(this.settings.requestTimeoutMs / 1000));
    const { handle } = await this.callChecked(this.handle, 'programFiles', 'cnc_allclibhndl3', { timeout: timeoutSec });
    try {
      return await job(this.caller(handle, 'programFiles'));
    } finally {
      await this.callChecked(handle, 'programFiles', 'cnc_freelibhndl', {}).catch(() => undefined);
    }
  }

  /** Frees the handle (best effort, short) and closes every socket. Safe to call twice. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const free = callOnce(this.transport, this.cnc, 'cnc_freelibhndl', { handle: this.handle }, 'status', Math.min(250, this.settings.requestTimeoutMs), 'close');
    await free.catch(() => undefined);
    this.transport.destroy();
  }

  private caller(handle: number, family: ItemFamily): Caller {
    return (fn, args) => this.callChecked(handle, family, fn, args);
  }

  private async callChecked<F extends BridgeFunction>(handle: number, family: ItemFamily, fn: F, args: CallArgs<F>): Promise<BridgeResponse<F>> {
    this.ensureOpen();
    const body = { ...args, handle } as BridgeRequest<F>;
    try {
      const call = () => callOnce(this.transport, this.cnc, fn, body, family, this.settings.requestTimeoutMs, 'driverOptions.requestTimeoutMs');
      return await (this.settings.peer ? inDriverRequest(`focas ${fn}`, this.settings.peer, fn, call) : call());
    } catch (error) {
      // The request reports the loss itself; the session just stops being usable.
      if (error instanceof GatewayError && error.errorName === 'MACHINE_NOT_CONNECTED') this.lose(error.message, false);
      throw error;
    }
  }

  /** Checks, after an idle socket closed, whether the bridge is still there. */
  private probe(): void {
    if (this.closed || this.probing) return;
    this.probing = true;
    BridgeSession.handshake(this.transport, this.settings.connectTimeoutMs)
      .then(
        () => undefined,
        (error: unknown) => this.lose(error instanceof GatewayError ? error.message : 'the bridge went away', true),
      )
      .finally(() => {
        this.probing = false;
      });
  }

  /** Ends the session; `notify` tells the listeners, for a loss noticed outside a request. */
  private lose(reason: string, notify: boolean): void {
    if (this.closed) return;
    this.closed = true;
    this.transport.destroy();
    if (notify) this.onLost(reason);
  }

  private ensureOpen(): void {
    if (this.closed) throw this.closedError();
  }

  private closedError(): GatewayError {
    return new GatewayError('MACHINE_NOT_CONNECTED', `focas: the session with CNC '${this.cnc}' is closed; waiting for reconnect`);
  }
}

/** The CNC to address: the configured one, or the bridge's only one. */
function pickCnc(info: BridgeInfo, wanted: string | undefined, address: string): string {
  const names = info.cncs.map((c) => c.name);
  if (wanted !== undefined) {
    if (names.includes(wanted)) return wanted;
    throw new GatewayError('MACHINE_NOT_CONNECTED', `focas: the bridge at ${address} serves no CNC named '${wanted}' (it serves: ${names.join(', ') || 'none'}); check driverOptions.cnc`);
  }
  const [only] = names;
  if (names.length === 1 && only !== undefined) return only;
  throw new GatewayError('MACHINE_NOT_CONNECTED', `focas: the bridge at ${address} serves ${names.length} CNCs (${names.join(', ') || 'none'}); set driverOptions.cnc to one of them`);
}

/** One bridge call: send, check the HTTP status, parse `rc`, map a failure, parse the outputs. */
async function callOnce<F extends BridgeFunction>(
  transport: BridgeTransport, cnc: string, fn: F, body: BridgeRequest<F>, family: ItemFamily, timeoutMs: number, setting: string,
): Promise<BridgeResponse<F>> {
  const what = `${fn} on CNC '${cnc}'`;
  const res = await transport.send({ method: 'POST', path: callPath(cnc, fn), body: requestSchemas[fn].parse(body), timeoutMs, setting, what, idempotent: !NOT_IDEMPOTENT.has(fn) });
  if (res.status !== 200) {
    const text = httpErrorSchema.safeParse(res.body);
    const detail = text.success ? text.data.error : 'no error text';
    const name = res.status === 404 ? 'MACHINE_NOT_CONNECTED' : 'DRIVER_REQUEST_FAILED';
    throw new GatewayError(name, `focas: the bridge at ${transport.address} answered ${what} with HTTP ${res.status}: ${detail}`);
  }
  const rc = returnCodeSchema.safeParse(res.body);
  if (!rc.success) throw new GatewayError('DRIVER_REQUEST_FAILED', `focas: the bridge answered ${what} without a FOCAS return code (rc)`);
  if (rc.data.rc !== EW.EW_OK) {
    throw errorForReturnCode({ fn, rc: rc.data.rc, cnc, family });
  }
  const parsed = responseSchemas[fn].safeParse(res.body);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new GatewayError('DRIVER_REQUEST_FAILED', `focas: the bridge answered ${what} with a body that does not match protocol v1 (${issue ? `${issue.path.join('.')}: ${issue.message}` : 'invalid'})`);
  }
  return parsed.data as BridgeResponse<F>;
}

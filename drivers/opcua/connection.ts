/**
 * One OPC UA link: an OPCUAClient, its secure channel and its session, with
 * a serial request queue, a timeout on every request and loss detection. A
 * link is used once: after a loss or a failed connect it is torn down and the
 * next connect builds a new client, so nothing of node-opcua's own
 * reconnection machinery runs behind the gateway's back.
 */
import { join } from 'node:path';
import type { DriverPeer } from '../../core/telemetry/drivers.js';
import type { Logger } from 'pino';
import type { ClientSession, DataValue, OPCUAClient } from 'node-opcua';
import { GatewayError } from '../../core/interfaces/errors.js';
import { SerialQueue } from '../../core/runtime/semaphore.js';
import { withTimeout } from '../../core/driver-seam/timeout.js';
import type { OpcuaOptions } from './options.js';

export type OpcuaModule = typeof import('node-opcua');

let modulePromise: Promise<OpcuaModule> | undefined;
/** node-opcua takes over a second to load, so it is loaded on first use only. */
export function loadOpcua(): Promise<OpcuaModule> {
  modulePromise ??= import('node-opcua');
  return modulePromise;
}

export interface LinkTarget {
  endpointUrl: string;
  options: OpcuaOptions;
  password: string | undefined;
  dataDir: string;
  logger: Logger;
  /** Who the requests go to, for their spans (core/telemetry/drivers.ts). */
  peer?: DriverPeer;
}

/** Messages of node-opcua errors that mean the channel or session is gone. */
const LINK_GONE = /closed|disconnect|not connected|BadSession|BadSecureChannel|BadConnection|BadTcp|ECONNRESET|EPIPE|socket|aborted/i;

/** Removes a credential from text that is about to leave the driver. */
export function redact(text: string, secret: string | undefined): string {
  return secret ? text.split(secret).join('***') : text;
}

/** An open client + session. `dead` turns true once, on loss or teardown. */
export class OpcuaLink {
  dead = false;
  private readonly queue = new SerialQueue();
  private readonly lostListeners: Array<(reason: string) => void> = [];

  private constructor(
    readonly opcua: OpcuaModule,
    private readonly client: OPCUAClient,
    readonly session: ClientSession,
    private readonly target: LinkTarget,
  ) {
    const lost = (reason: string) => () => this.markLost(reason);
    client.on('connection_lost', lost('connection lost'));
    client.on('close', lost('connection closed'));
    client.on('start_reconnection', lost('connection broken'));
    session.on('session_closed', lost('session closed by the server'));
    session.on('keepalive_failure', lost('session keep-alive failed'));
  }

  /** Opens a client and a session, failing closed when the requested security is not offered. */
  static async open(target: LinkTarget): Promise<OpcuaLink> {
    const opcua = await loadOpcua();
    const { options } = target;
    const securityMode = opcua.MessageSecurityMode[options.securityMode];
    const securityPolicy = options.securityMode === 'None' ? opcua.SecurityPolicy.None : opcua.SecurityPolicy[options.securityPolicy];
    const certificateManager = new opcua.OPCUACertificateManager({
      rootFolder: join(target.dataDir, 'opcua', 'pki'),
      automaticallyAcceptUnknownCertificate: options.acceptUnknownServerCertificate,
    });
    const client = opcua.OPCUAClient.create({
      applicationName: 'CNC machine gateway',
      // One try only: the machine actor owns reconnection and its backoff.
      connectionStrategy: { maxRetry: 0, initialDelay: 100, maxDelay: 200 },
      securityMode,
      securityPolicy,
      // Machines often advertise a host name other than the address the gateway uses; the endpoint is
      // still chosen by security mode and policy, so this never weakens security.
      endpointMustExist: false,
      keepSessionAlive: false,
      requestedSessionTimeout: 60_000,
      transportTimeout: options.connectTimeoutMs,
      defaultTransactionTimeout: Math.max(options.requestTimeoutMs * 2, 2_000),
      clientCertificateManager: certificateManager,
    });
    let session: ClientSession | undefined;
    try {
      await client.connect(target.endpointUrl);
      if (client.securityMode !== securityMode) {
        throw new GatewayError('MACHINE_NOT_CONNECTED', `opcua: the server did not grant securityMode '${options.securityMode}'`);
      }
      session = await client.createSession(
        options.userName
          ? { type: opcua.UserTokenType.UserName, userName: options.userName, password: target.password ?? '' }
          : { type: opcua.UserTokenType.Anonymous },
      );
      return new OpcuaLink(opcua, client, session, target);
    } catch (error) {
      await closeQuietly(client, session);
      throw connectError(error, target);
    }
  }

  onLost(listener: (reason: string) => void): void {
    this.lostListeners.push(listener);
  }

  /**
   * Runs one service call through the queue. The caller's answer is bounded by
   * the request timeout from the moment it asked, waiting included; a call
   * that waited that long for its turn is not sent (its caller has its
   * DRIVER_TIMEOUT already), and one that was sent keeps the session until
   * node-opcua's transaction timeout (at least 5 s) ends it, so calls never
   * overlap.
   */
  request<T>(what: string, call: (session: ClientSession) => Promise<T>): Promise<T> {
    if (this.dead) return Promise.reject(new GatewayError('MACHINE_NOT_CONNECTED', 'opcua: not connected'));
    const { requestTimeoutMs } = this.target.options;
    const run = this.queue.run(async () => {
      if (this.dead) throw new GatewayError('MACHINE_NOT_CONNECTED', 'opcua: not connected');
      return call(this.session);
    }, { maxWaitMs: requestTimeoutMs });
    return withTimeout(run, requestTimeoutMs, `opcua ${what}`, 'driverOptions.requestTimeoutMs').catch((error: unknown) => {
      throw this.requestError(what, error);
    });
  }

  /** Reads the Value attribute of `nodeIds` in one Read request. */
  readValues(what: string, nodeIds: readonly string[]): Promise<DataValue[]> {
    if (nodeIds.length === 0) return Promise.resolve([]);
    const { AttributeIds } = this.opcua;
    return this.request(what, (session) => session.read(nodeIds.map((nodeId) => ({ nodeId, attributeId: AttributeIds.Value }))));
  }

  /** Closes the session and the client; bounded, never throws. */
  async close(): Promise<void> {
    this.dead = true;
    await closeQuietly(this.client, this.session);
  }

  private markLost(reason: string): void {
    if (this.dead) return;
    this.dead = true;
    this.target.logger.warn({ reason }, 'opcua link lost');
    for (const listener of this.lostListeners) listener(reason);
    void closeQuietly(this.client, this.session);
  }

  private requestError(what: string, error: unknown): GatewayError {
    if (error instanceof GatewayError) return error;
    const text = redact(error instanceof Error ? error.message : String(error), this.target.password);
    if (this.dead || LINK_GONE.test(text)) return new GatewayError('MACHINE_NOT_CONNECTED', `opcua: ${what} failed: ${firstLine(text)}`);
    return new GatewayError('DRIVER_REQUEST_FAILED', `opcua: ${what} failed: ${firstLine(text)}`);
  }
}

function firstLine(text: string): string {
  return text.split('\n')[0]?.trim() ?? text;
}

function connectError(error: unknown, target: LinkTarget): GatewayError {
  if (error instanceof GatewayError) return error;
  const text = firstLine(redact(error instanceof Error ? error.message : String(error), target.password));
  const { securityMode, securityPolicy, userName } = target.options;
  if (/endpoint/i.test(text) && securityMode !== 'None') {
    return new GatewayError(
      'MACHINE_NOT_CONNECTED',
      `opcua: ${target.endpointUrl} offers no endpoint with securityMode '${securityMode}' and securityPolicy '${securityPolicy}'; refusing to connect with weaker security (${text})`,
    );
  }
  if (/BadUserAccessDenied|BadIdentityToken|identity/i.test(text)) {
    return new GatewayError('MACHINE_NOT_CONNECTED', `opcua: the server rejected the ${userName ? `user '${userName}'` : 'anonymous login'} (${text})`);
  }
  return new GatewayError('MACHINE_NOT_CONNECTED', `opcua: cannot connect to ${target.endpointUrl}: ${text}`);
}

/** Bounded close: a dead peer must not keep close() waiting, and a late answer must not keep a timer alive. */
async function closeQuietly(client: OPCUAClient, session: ClientSession | undefined): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const bound = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, 1_000);
  });
  const closing = (async () => {
    try {
      await session?.close(false);
    } catch {
      // the session is gone already
    }
    try {
      await client.disconnect();
    } catch {
      // the channel is gone already
    }
  })();
  await Promise.race([closing, bound]);
  clearTimeout(timer);
}

/**
 * The one path every interface that contacts a machine takes: resolve the
 * machine (unknown or inactive → 10003), check that its driver declares the
 * item family (→ 2001), check that its actor is online (→ 2002, without
 * contacting it), then run the request under the machine's request timeout
 * (→ 2004). Live reads and program file transfer both go through here.
 */
import type { Logger } from 'pino';
import type { GatewayContext } from '../../core/roles/gateway/context.js';
import { assertFamily, type DriverClient, type ItemFamily } from '../../core/driver-seam/driver.js';
import { ERRORS, GatewayError, type ErrorName, quote } from '../../core/interfaces/errors.js';
import type { MachineSnapshot } from '../../core/roles/gateway/fleet/machine-snapshot.js';
import { withTimeout } from '../../core/driver-seam/timeout.js';

/** An active machine, its live view and its driver client. */
export interface ReachableMachine {
  view: MachineSnapshot;
  client: DriverClient;
}

/** A stored error message without the error-table description it starts with, for quoting inside another error. */
export function errorDetail(name: ErrorName, message: string): string {
  const description: string = ERRORS[name].description;
  return message.startsWith(description) ? message.slice(description.length).trim() : message;
}

/** The view of an active machine; unknown and inactive machineIDs are both 10003 (GW-94). */
export function activeMachineSnapshot(ctx: GatewayContext, machineID: string): MachineSnapshot {
  if (!ctx.fleet.has(machineID)) throw new GatewayError('GENERAL_MACHINE_ID_NOT_EXISTED', `machineID ${quote(machineID)} does not exist`);
  const view = ctx.fleet.snapshot(machineID);
  if (!view.config.isActive) throw new GatewayError('GENERAL_MACHINE_ID_NOT_EXISTED', `machineID ${quote(machineID)} is inactive`);
  return view;
}

function notConnected(machineID: string, connection: MachineSnapshot['connection']): GatewayError {
  const since = connection.since ? ` since ${new Date(connection.since).toISOString()}` : '';
  const error = connection.error ? `: ${errorDetail(connection.error.errorName, connection.error.message)}` : '';
  return new GatewayError('MACHINE_NOT_CONNECTED', `machine '${machineID}' connection is ${connection.state}${since}${error}`);
}

/**
 * Resolves a machine for a request of `family`. The family is checked before
 * the connection: an unsupported item stays unsupported after a reconnect, so
 * telling the caller to wait for one would mislead.
 */
export function reachableMachine(ctx: GatewayContext, machineID: string, family: ItemFamily): ReachableMachine {
  const view = activeMachineSnapshot(ctx, machineID);
  // An active machine without an actor is being restarted after a config change; it has no client for a moment.
  if (view.connection.state === 'stopped') throw notConnected(machineID, view.connection);
  const client = ctx.fleet.client(machineID);
  assertFamily(client, family);
  if (view.connection.state !== 'online') throw notConnected(machineID, view.connection);
  return { view, client };
}

/**
 * Runs one request against a reachable machine under its request timeout.
 * A driver that throws something other than a GatewayError breaks the driver
 * contract; it is reported as DRIVER_REQUEST_FAILED and the cause goes to the
 * log only, since driver messages may carry connection details.
 */
export async function requestMachine<T>(
  ctx: GatewayContext,
  target: { machineID: string; family: ItemFamily; what: string; logger: Logger },
  request: (machine: ReachableMachine) => Promise<T>,
): Promise<T> {
  const machine = reachableMachine(ctx, target.machineID, target.family);
  const what = `machine '${target.machineID}' ${target.what}`;
  try {
    return await withTimeout(request(machine), machine.view.config.connection.requestTimeoutMs, what, 'connection.requestTimeoutMs');
  } catch (err) {
    if (err instanceof GatewayError) throw err;
    target.logger.warn({ err, machineID: target.machineID, family: target.family }, 'driver request failed');
    throw new GatewayError('DRIVER_REQUEST_FAILED', `${what} failed; see the gateway log`, { cause: err });
  }
}

/**
 * The spans of drivers' own requests to a controller (a Modbus read, an
 * OPC UA read, …): client spans under the live read that asked for them,
 * with the machine, the protocol and the peer's address
 * (`network.peer.address`, `network.peer.port`). Only under a span: the
 * actors' periodic polls make no traces of their own. While tracing is off,
 * a request pays one check.
 */
import { inSpan, tracingEnabled } from './tracing.js';

/** Who a driver's requests go to, as its spans name it. */
export interface DriverPeer {
  /** The driver's scheme (`modbus`, `opcua`, …), as `cncgw.protocol`. */
  protocol: string;
  /** The gateway's id of the machine. */
  machineId?: string;
  /** The controller's host and port. */
  address?: string;
  port?: number;
}

/** Runs one request of a driver inside its client span (`name`, e.g. `modbus read holding`); `method` is the request's kind (`rpc.method`). */
export function inDriverRequest<T>(name: string, peer: DriverPeer, method: string, run: () => Promise<T>): Promise<T> {
  if (!tracingEnabled()) return run();
  return inSpan(name, {
    kind: 'client',
    childOnly: true,
    attributes: { 'cncgw.protocol': peer.protocol, 'cncgw.machine.id': peer.machineId, 'network.peer.address': peer.address, 'network.peer.port': peer.port, 'rpc.method': method },
  }, run);
}

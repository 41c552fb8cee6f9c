/**
 * The link to the gateway in the same process: calls its interface registry
 * directly, as an internal administrator principal. No key exists on disk.
 */
import type { EntryInput, EntryOutput, InterfaceEntry, InterfaceRegistry, Principal } from '../interfaces/registry.js';
import { linkError } from './calls.js';
import { CallingGatewayLink } from './calling-link.js';
import type { FleetChangeSource, GatewayLink } from './types.js';
import { inRole } from '../telemetry/tracing.js';

/** Who the program service is on its own gateway: an internal principal, never a stored account. */
export const PROGRAM_SERVICE_PRINCIPAL: Principal = Object.freeze({ username: 'program-service', isAdmin: true, method: 'internal' as const });

/** How long calls may hold the event loop before it turns (ms). */
const SLICE_MS = 5;

export class InProcessGatewayLink extends CallingGatewayLink implements GatewayLink {
  readonly target = 'in-process';

  /** `fleetChanges`: the gateway's machine and group events (the gateway's bus), for `watchFleet`. */
  constructor(
    private readonly interfaces: InterfaceRegistry,
    private readonly fleetChanges?: FleetChangeSource,
  ) {
    super();
  }

  watchFleet(listener: () => void): () => void {
    return this.fleetChanges ? this.fleetChanges(listener) : () => undefined;
  }

  /** When the event loop last turned for these calls (see turn). */
  private sliceStart = 0;

  /**
   * Lets the event loop turn when calls have held it for a slice. The gateway
   * in this process answers without I/O, so a batch of calls would otherwise
   * run as one long chain of promise callbacks, and the service's own database
   * writes, webhooks and HTTP requests would wait until it ended; turning on
   * every call instead costs a loop iteration each.
   */
  private async turn(): Promise<void> {
    if (performance.now() - this.sliceStart < SLICE_MS) return;
    await new Promise<void>((resolve) => setImmediate(resolve));
    this.sliceStart = performance.now();
  }

  /** The registry's answer as it is: typed by the entry, with program bytes as they are in the process; nothing is parsed again. */
  protected async call<E extends InterfaceEntry>(entry: E, input: EntryInput<E>): Promise<EntryOutput<E>> {
    await this.turn();
    // The call is the gateway's work: its spans belong to cncgw-gateway, under the caller's span.
    const result = await inRole('gateway', () => this.interfaces.call(entry, input, { principal: PROGRAM_SERVICE_PRINCIPAL }));
    if (!result.ok) throw linkError(result.error.errorCode, result.error.message);
    return result.data;
  }
}

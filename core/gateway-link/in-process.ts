/**
 * The link to the gateway in the same process: calls its interface registry
 * directly, as an internal administrator principal. No key exists on disk.
 */
import type { InterfaceRegistry, Principal } from '../interfaces.js';
import { CallingGatewayLink, linkError, type LinkCall } from './calls.js';
import type { GatewayLink } from './types.js';

/** Who the program service is on its own gateway: an internal principal, never a stored account. */
export const PROGRAM_SERVICE_PRINCIPAL: Principal = Object.freeze({ username: 'program-service', isAdmin: true, method: 'internal' as const });

export class InProcessGatewayLink extends CallingGatewayLink implements GatewayLink {
  readonly target = 'in-process';

  constructor(private readonly interfaces: InterfaceRegistry) {
    super();
  }

  protected async call<T>(call: LinkCall<T>): Promise<T> {
    const result = await this.interfaces.call(call.path, call.input, { principal: PROGRAM_SERVICE_PRINCIPAL });
    if (!result.ok) throw linkError(result.error.errorCode, result.error.message);
    return call.read(result.data);
  }
}

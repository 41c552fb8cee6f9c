/**
 * The link to the gateway in the same process: calls its interface registry
 * directly, as an internal administrator principal. No key exists on disk.
 */
import type { InterfaceRegistry, Principal } from '../interfaces.js';
import { CALLS, linkError, type LinkCall } from './calls.js';
import type { GatewayLink } from './types.js';

/** Who the program service is on its own gateway: an internal principal, never a stored account. */
export const PROGRAM_SERVICE_PRINCIPAL: Principal = Object.freeze({ username: 'program-service', isAdmin: true, method: 'internal' as const });

export class InProcessGatewayLink implements GatewayLink {
  readonly target = 'in-process';

  constructor(private readonly interfaces: InterfaceRegistry) {}

  private async call<T>(call: LinkCall<T>): Promise<T> {
    const result = await this.interfaces.call(call.path, call.input, { principal: PROGRAM_SERVICE_PRINCIPAL });
    if (!result.ok) throw linkError(result.error.errorCode, result.error.message);
    return call.read(result.data);
  }

  listMachines() {
    return this.call(CALLS.machines());
  }

  listGroups() {
    return this.call(CALLS.groups());
  }

  listPrograms(machineID: string, dir?: string) {
    return this.call(CALLS.programs(machineID, dir));
  }

  uploadProgram(machineID: string, dir: string, name: string, content: Buffer) {
    return this.call(CALLS.upload(machineID, dir, name, content));
  }

  downloadProgram(machineID: string, dir: string, name: string) {
    return this.call(CALLS.download(machineID, dir, name));
  }

  currentProgram(machineID: string) {
    return this.call(CALLS.current(machineID));
  }
}

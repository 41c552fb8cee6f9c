/**
 * What each machine can take as a program file, asked before a transfer:
 * whether its driver transfers program files at all, and which bytes it
 * cannot carry unchanged (a protocol whose text is ASCII only, say), with
 * the reason. The program service asks this once per gateway for a
 * deployment batch and once for a preview, so a program a machine cannot
 * take is refused at once with the reason instead of failing at transfer.
 * It never contacts a machine: drivers answer from their connection.
 */
import type { GatewayContext } from '../../core/roles/gateway/context.js';
import type { ProgramByteLimits } from '../../core/driver-seam/driver.js';
import { PROGRAM_FILES, type ProgramCapability } from '../../core/roles/gateway/contract/program-files.js';
import { activeMachineSnapshot, errorDetail } from './machine-reads.js';

function capabilityOf(ctx: GatewayContext, machineID: string): ProgramCapability {
  const view = activeMachineSnapshot(ctx, machineID);
  const { connection } = view;
  const offline = (): ProgramCapability => {
    const error = connection.error ? `: ${errorDetail(connection.error.errorName, connection.error.message)}` : '';
    return { machineID, programFiles: true, limitsKnown: false, refusedBytes: [], reason: `the machine is ${connection.state}${error}; its driver is asked once it is online` };
  };
  if (connection.state === 'stopped') return offline();
  const client = ctx.fleet.client(machineID);
  if (!client.families.has('programFiles')) {
    return { machineID, programFiles: false, limitsKnown: true, refusedBytes: [], reason: `its driver (${client.scheme}) does not transfer program files` };
  }
  if (connection.state !== 'online') return offline();
  const limits: ProgramByteLimits | null = client.programByteLimits?.() ?? null;
  return { machineID, programFiles: true, limitsKnown: true, refusedBytes: limits ? limits.refused.map((r) => ({ from: r.from, to: r.to })) : [], ...(limits ? { reason: limits.reason } : {}) };
}

export function defineProgramCapabilities(ctx: GatewayContext): void {
  ctx.interfaces.implement(PROGRAM_FILES.capabilities, {
    handler: ({ machineID }) => {
      const ids = machineID !== undefined ? [machineID] : ctx.fleet.ids().filter((id) => ctx.fleet.snapshot(id).config.isActive);
      return { machines: ids.map((id) => capabilityOf(ctx, id)) };
    },
  });
}

/**
 * What a preview says about the target before anything is sent: whether the
 * machine can take the transformed file at all (its driver's program
 * transfer, the bytes it carries), asked of its gateway as a deployment
 * would ask (core/gateway-link/program-takers.ts), in plant words.
 */
import { checkTargets } from '../../core/gateway-link/program-takers.js';
import type { ProgramsServices } from '../../core/roles/programs/context.js';

type GatewayMachines = ProgramsServices['gateway-machines'];
type FleetMachine = NonNullable<Awaited<ReturnType<GatewayMachines['machine']>>>;

/** Warnings for a preview of `content` on `machine`; empty when nothing stands in the way. */
export async function previewWarnings(machine: FleetMachine, content: Buffer, fleet: GatewayMachines): Promise<string[]> {
  const named = `Machine ${machine.name} (${machine.machineId})`;
  const { refused, unchecked } = await checkTargets([{ gatewayId: machine.gatewayId, machineId: machine.machineId, content }], () => fleet.linkFor(machine));
  return [
    ...refused.map((r) => `${named} cannot take this program: ${r.reason}. A deployment to it is refused.`),
    ...unchecked.map((u) => `Whether ${named} can take this program is not known yet: ${u.reason}. Its gateway checks again when the file is sent.`),
  ];
}

/**
 * Whether machines can take a program, asked of their gateways before
 * anything is sent: one call per gateway (`programCapabilities`), then each
 * machine's file checked against what its driver carries. The program
 * service's preview and deployments use it, so a program a machine cannot
 * take is refused at once, in plant words, instead of failing at transfer.
 */
import { describeRefusedByte, findRefusedByte } from '../values/program-bytes.js';
import type { GatewayLink, LinkProgramCapability } from './types.js';

/** One machine and the file it would get. */
export interface ProgramTarget {
  gatewayId: string;
  /** The machine's ID on its gateway. */
  machineId: string;
  content: Buffer;
}

export interface TargetCheck<T extends ProgramTarget> {
  /** Machines that cannot take their file, with why. */
  refused: { target: T; reason: string }[];
  /** Machines whose gateway could not say (offline machine, gateway unreachable), with why; they are tried at transfer. */
  unchecked: { target: T; reason: string }[];
}

/** Why a machine with `capability` cannot take `content`, in plant words; undefined when it can. */
export function refusalOf(capability: LinkProgramCapability, content: Buffer): string | undefined {
  if (!capability.programFiles) return `it cannot receive program files: ${capability.reason ?? 'its driver has no program transfer'}`;
  if (!capability.limitsKnown) return undefined;
  const found = findRefusedByte(content, { refused: capability.refusedBytes, reason: capability.reason ?? '' });
  if (!found) return undefined;
  return `the program holds ${describeRefusedByte(found)}, which it cannot take unchanged: ${capability.reason ?? 'its driver does not carry that byte'}`;
}

/** Checks every target against its gateway's answer, asking each gateway once. */
export async function checkTargets<T extends ProgramTarget>(targets: readonly T[], linkFor: (target: T) => Promise<GatewayLink>): Promise<TargetCheck<T>> {
  const result: TargetCheck<T> = { refused: [], unchecked: [] };
  const byGateway = new Map<string, T[]>();
  for (const t of targets) byGateway.set(t.gatewayId, [...(byGateway.get(t.gatewayId) ?? []), t]);
  for (const group of byGateway.values()) {
    let answers: Map<string, LinkProgramCapability>;
    try {
      const link = await linkFor(group[0] as T);
      // One machine: ask for it alone; several: one answer for the whole gateway.
      const single = new Set(group.map((t) => t.machineId)).size === 1;
      answers = new Map((await link.programCapabilities(single ? group[0]?.machineId : undefined)).map((c) => [c.machineID, c]));
    } catch (err) {
      const reason = `its gateway could not say what it takes (${(err as Error).message.slice(0, 200)})`;
      for (const target of group) result.unchecked.push({ target, reason });
      continue;
    }
    for (const target of group) {
      const capability = answers.get(target.machineId);
      if (!capability) {
        result.unchecked.push({ target, reason: 'its gateway does not list it as an active machine' });
        continue;
      }
      const reason = refusalOf(capability, target.content);
      if (reason) result.refused.push({ target, reason });
      else if (!capability.limitsKnown) result.unchecked.push({ target, reason: capability.reason ?? 'its driver could not say which bytes it carries' });
    }
  }
  return result;
}

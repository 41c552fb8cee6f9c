/**
 * Which vault version a deployment's file is, as its upload tells the
 * gateway (docs/api.md, the upload's `vault` field): the program's name in
 * the vault, the version's number and its content SHA-256. A deployment of
 * a version (a deployment, a trial, a pull-back to the version before, a
 * drift rejected) sends it; a restored snapshot of a machine's own file is
 * no version and sends none.
 */
import type { LinkVaultVersion } from '../../core/gateway-link/types.js';
import type { ProgramsContext } from '../../core/roles/programs/context.js';
import { SYSTEM } from './common.js';
import type { DeploymentRow } from './store.js';

/** The vault version `row` sends, or undefined when it sends none or the vault no longer has it. */
export async function vaultVersionOf(ctx: Pick<ProgramsContext, 'services'>, row: DeploymentRow): Promise<LinkVaultVersion | undefined> {
  if (row.versionId === null) return undefined;
  // The version's own hash, not the bytes': an assignment's transform (a program number) changes the bytes, not which version they are.
  const identity = await ctx.services.find('vault.versions')?.identity(row.versionId, SYSTEM);
  if (!identity) return undefined;
  return { program: identity.program, version: identity.number, sha256: identity.sha256 };
}

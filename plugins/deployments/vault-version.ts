/**
 * Which vault version a deployment's file is, as its upload tells the
 * gateway (docs/api.md, the upload's `vault` field): the program's name in
 * the vault, the version's number and its content SHA-256. A deployment of
 * no vault version (a pull-back or restore of a machine's own file) has none.
 */
import type { LinkVaultVersion } from '../../core/gateway-link/types.js';
import type { ProgramsContext } from '../../core/roles/programs/context.js';
import { SYSTEM } from './common.js';
import type { DeploymentRow } from './store.js';

/** The vault version `row` sends, or undefined when it sends none or the vault no longer has it. */
export async function vaultVersionOf(ctx: Pick<ProgramsContext, 'services'>, row: DeploymentRow): Promise<LinkVaultVersion | undefined> {
  if (row.versionId === null) return undefined;
  const identity = await ctx.services.find('vault.versions')?.identity(row.versionId, SYSTEM);
  // The bytes sent are the deployment's: a version whose hash differs is not what the file is.
  if (!identity || identity.sha256 !== row.sha256) return undefined;
  return { program: identity.program, version: identity.number, sha256: identity.sha256 };
}

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

/** How long a looked-up version is reused: a batch sends one version to every machine, while a program renamed in the vault is named anew soon after. */
const REUSE_MS = 5000;
/** Versions kept at once (a batch usually sends one). */
const KEPT = 8;

/**
 * The vault version each deployment sends, looked up once per version for
 * the deployments of a batch that start within REUSE_MS of each other,
 * instead of two queries for each machine.
 */
export class VaultVersions {
  private readonly kept = new Map<string, { at: number; version: Promise<LinkVaultVersion | undefined> }>();

  constructor(
    private readonly ctx: Pick<ProgramsContext, 'services' | 'now'>,
  ) {}

  /** The vault version `row` sends, or undefined when it sends none or the vault no longer has it. */
  of(row: DeploymentRow): Promise<LinkVaultVersion | undefined> {
    const versionId = row.versionId;
    if (versionId === null) return Promise.resolve(undefined);
    const now = this.ctx.now();
    const kept = this.kept.get(versionId);
    if (kept && now - kept.at < REUSE_MS) return kept.version;
    const version = lookUp(this.ctx, versionId);
    this.kept.delete(versionId);
    this.kept.set(versionId, { at: now, version });
    if (this.kept.size > KEPT) this.kept.delete(this.kept.keys().next().value as string);
    // A failed look-up is not kept: the next deployment asks again.
    version.catch(() => this.kept.get(versionId)?.version === version && this.kept.delete(versionId));
    return version;
  }
}

async function lookUp(ctx: Pick<ProgramsContext, 'services'>, versionId: string): Promise<LinkVaultVersion | undefined> {
  // The version's own hash, not the bytes': an assignment's transform (a program number) changes the bytes, not which version they are.
  const identity = await ctx.services.find('vault.versions')?.identity(versionId, SYSTEM);
  if (!identity) return undefined;
  return { program: identity.program, version: identity.number, sha256: identity.sha256 };
}

/**
 * What every mirror operation shares: the repository and the mirror, the
 * services of the plugins it works with, the audit, and the lookups that
 * answer 404 for a machine, file or drift item outside the caller's scope.
 */
import type { z } from 'zod';
import { isoOrNull, iso } from '../../../core/rest/fields.js';
import type { AnyRestOperation, RestPrincipal } from '../../../core/rest/operation.js';
import { auditActor } from '../../../core/rest/principal.js';
import { ProblemError } from '../../../core/rest/problem.js';
import type { ProgramsContext, ProgramsServices } from '../../../core/roles/programs/context.js';
import type { WriteTx } from '../../../core/store/database.js';
import type { Mirror } from '../mirror.js';
import type { DriftItem, MirrorFile, MirrorRepository } from '../store.js';
import type { driftView } from './views.js';

export interface MirrorDeps {
  ctx: ProgramsContext;
  repo: MirrorRepository;
  mirror: Mirror;
  fleet(): ProgramsServices['gateway-machines'];
  deployments(): ProgramsServices['deployments'];
  vault(): ProgramsServices['vault.versions'];
  audit(tx: WriteTx, p: RestPrincipal, action: string, entityType: string, entityId: string, machine: string, details: Record<string, unknown>): Promise<unknown>;
  machineOf(id: string, p: RestPrincipal): Promise<NonNullable<Awaited<ReturnType<ProgramsServices['gateway-machines']['machine']>>>>;
  fileOf(id: string, p: RestPrincipal): Promise<MirrorFile>;
  driftOf(id: string, p: RestPrincipal): Promise<DriftItem>;
  driftOut(d: DriftItem): Promise<z.infer<typeof driftView>>;
  libraryOf(id: string, p: RestPrincipal): Promise<{ id: string; name: string }>;
}

/** One mirror operation, made from the shared deps. */
export type MirrorOperation = (d: MirrorDeps) => AnyRestOperation;

export function mirrorDeps(ctx: ProgramsContext, repo: MirrorRepository, mirror: Mirror): MirrorDeps {
  const fleet = () => ctx.services.get('gateway-machines');
  const vault = () => ctx.services.get('vault.versions');
  return {
    ctx, repo, mirror, fleet, vault,
    deployments: () => ctx.services.get('deployments'),
    audit: (tx, p, action, entityType, entityId, machine, details) => ctx.audit.append(tx, { ...auditActor(p), category: 'mirror', action, entityType, entityId, machine, details }),
    machineOf: async (id, p) => {
      const m = await fleet().machine(id, p);
      if (!m) throw new ProblemError('not-found', `no machine ${id}`);
      return m;
    },
    fileOf: async (id, p) => {
      const f = await repo.file(id);
      if (!f || !(await fleet().machine(f.machineId, p))) throw new ProblemError('not-found', `no machine file ${id}`);
      return f;
    },
    driftOf: async (id, p) => {
      const d = await repo.drift(id);
      if (!d || !(await fleet().machine(d.machineId, p))) throw new ProblemError('not-found', `no drift item ${id}`);
      return d;
    },
    driftOut: async (d) => {
      const f = await repo.file(d.fileId);
      return {
        id: d.id, fileId: d.fileId, machineId: d.machineId, assignmentId: d.assignmentId, dir: f?.dir ?? '', fileName: f?.name ?? '',
        expected: { source: d.expectedSource, versionId: d.expectedVersionId, sha256: d.expectedSha256 }, foundSha256: d.foundSha256, snapshotId: d.snapshotId,
        status: d.status, openedAt: iso(d.openedAt), updatedAt: iso(d.updatedAt), decidedBy: d.decidedBy, decidedAt: isoOrNull(d.decidedAt), note: d.note,
        resultVersionId: d.resultVersionId, resultDeploymentId: d.resultDeploymentId,
      };
    },
    libraryOf: async (id, p) => {
      const l = await vault().library(id, p);
      if (!l) throw new ProblemError('not-found', `no library ${id}`, { errors: [{ field: 'body.libraryId', message: 'no such library' }] });
      return l;
    },
  };
}

/**
 * What every vault operation shares: the store, the audit of the caller,
 * write transactions, and the lookups that answer 404 for a record outside
 * the caller's library scope as for a missing one.
 */
import type { z } from 'zod';
import type { AnyRestOperation, RestPrincipal } from '../../../core/rest/operation.js';
import { auditActor, type AuditActor } from '../../../core/rest/principal.js';
import { ProblemError } from '../../../core/rest/problem.js';
import type { ProgramsContext } from '../../../core/roles/programs/context.js';
import type { AuditEntry } from '../../../core/roles/programs/audit/chain.js';
import type { WriteTx } from '../../../core/store/database.js';
import { iso, isoOrNull } from '../../../core/rest/fields.js';
import { eligibleLeft, excludedOf } from '../duties.js';
import type { Approval, Library, Program, Version, VaultStore } from '../store.js';
import type { approvalView } from './views.js';

export interface VaultDeps {
  ctx: ProgramsContext;
  store: VaultStore;
  audit(tx: WriteTx, p: RestPrincipal, entry: Omit<AuditEntry, keyof AuditActor>): Promise<unknown>;
  change<T>(job: (tx: WriteTx) => Promise<T>): Promise<T>;
  /** The version.published webhook event, in the publishing transaction, when the webhooks plugin runs. */
  published(tx: WriteTx, version: Version, program: Program): Promise<void>;
  /** The library, or 404 when it does not exist or is outside the caller's scope (the same answer). */
  visibleLibrary(p: RestPrincipal, id: string, field?: string): Promise<Library>;
  visibleProgram(p: RestPrincipal, id: string): Promise<{ program: Program; library: Library }>;
  visibleVersion(p: RestPrincipal, id: string): Promise<{ version: Version; program: Program; library: Library }>;
  approvalOut(a: Approval): Promise<z.infer<typeof approvalView>>;
}

/** One vault operation, made from the shared deps. */
export type VaultOperation = (d: VaultDeps) => AnyRestOperation;

export const inScope = (p: RestPrincipal, libraryId: string): boolean => p.scopes.libraries === '*' || p.scopes.libraries.includes(libraryId);
export const scopeOf = (p: RestPrincipal) => p.scopes.libraries;

export const stateConflict = (what: string, state: string, allowed: string) =>
  new ProblemError('state-conflict', `${what} is ${state}; this needs ${allowed}`, { extensions: { state } });

export function vaultDeps(ctx: ProgramsContext, store: VaultStore): VaultDeps {
  return {
    ctx,
    store,
    audit: (tx, p, entry) => ctx.audit.append(tx, { ...auditActor(p), ...entry }),
    change: (job) => ctx.db.write(job, { transaction: true }),
    published: async (tx, version, program) => {
      await ctx.services.find('webhooks.outbox')?.enqueue(tx, 'version.published', {
        versionId: version.id, programId: program.id, libraryId: program.libraryId, programName: program.name, number: version.number, sha256: version.sha256, size: version.size,
      });
    },
    visibleLibrary: async (p, id, field) => {
      const library = inScope(p, id) ? await store.library(id) : undefined;
      if (!library) throw new ProblemError('not-found', `no library ${id}`, field ? { errors: [{ field, message: 'no such library' }] } : {});
      return library;
    },
    visibleProgram: async (p, id) => {
      const program = await store.program(id);
      const library = program && inScope(p, program.libraryId) ? await store.library(program.libraryId) : undefined;
      if (!program || !library) throw new ProblemError('not-found', `no program ${id}`);
      return { program, library };
    },
    visibleVersion: async (p, id) => {
      const version = await store.version(id);
      const program = version ? await store.program(version.programId) : undefined;
      const library = program && inScope(p, program.libraryId) ? await store.library(program.libraryId) : undefined;
      if (!version || !program || !library) throw new ProblemError('not-found', `no version ${id}`);
      return { version, program, library };
    },
    approvalOut: async (a) => {
      const version = (await store.version(a.versionId)) as Version;
      const program = (await store.program(version.programId)) as Program;
      const library = (await store.library(program.libraryId)) as Library;
      return {
        id: a.id, versionId: a.versionId, programId: program.id, libraryId: library.id, versionNumber: version.number, state: a.state, required: a.required,
        approvals: a.decisions.filter((d) => d.decision === 'approve').length,
        decisions: a.decisions.map((d) => ({ approver: d.approver, onBehalfOf: d.onBehalfOf, decision: d.decision, comment: d.comment, decidedAt: iso(d.decidedAt) })),
        excluded: excludedOf(version),
        eligibleApproversLeft: a.state === 'pending' ? eligibleLeft(library, version, a) : null,
        createdBy: a.createdBy, createdAt: iso(a.createdAt), decidedAt: isoOrNull(a.decidedAt),
      };
    },
  };
}

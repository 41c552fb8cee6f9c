/**
 * What the vault offers the service's other plugins (assignments,
 * deployments), through the role's service registry: versions with their
 * content, as the caller's scope allows, and the NC-aware diff. Declared by
 * declaration merging, so a consumer needs no import of this plugin.
 */
import type { RestPrincipal } from '../../core/rest/operation.js';
import { diffPrograms } from './nc/index.js';
import { sha256Hex } from '../../core/values/hash.js';
import type { WriteTx } from '../../core/store/database.js';
import { newId } from '../../core/rest/ids.js';
import { defaultFileName } from '../../core/roles/programs/file-name-template.js';
import type { VaultStore } from './store.js';

/** A version as other plugins use it. */
export interface VaultVersionForUse {
  id: string;
  number: number;
  state: 'draft' | 'submitted' | 'published' | 'obsolete';
  sha256: string;
  size: number;
  /** `fileName`: the file name template its assignments take unless they name their own. */
  program: { id: string; name: string; libraryId: string; controller: string; fileName: string };
  content: Buffer;
}

/** Which vault version a file is: the program's name, the version's number and its content SHA-256. */
export interface VaultVersionIdentity {
  program: string;
  number: number;
  sha256: string;
}

export interface VaultVersions {
  /** The version with its program and content; undefined when missing or outside `principal`'s library scope. */
  version(versionId: string, principal: RestPrincipal): Promise<VaultVersionForUse | undefined>;
  /** The version's program name, number and content SHA-256 without its content (what a deployment tells the gateway); undefined as for `version`. */
  identity(versionId: string, principal: RestPrincipal): Promise<VaultVersionIdentity | undefined>;
  /** The program; undefined when missing or outside the scope. */
  program(programId: string, principal: RestPrincipal): Promise<VaultVersionForUse['program'] | undefined>;
  /** The newest published version of a program, or undefined. */
  latestPublished(programId: string, principal: RestPrincipal): Promise<VaultVersionForUse | undefined>;
  /**
   * Two files compared line by line as written (comment-only lines
   * included), with the NC-aware summary of what changes on the machine and
   * the unified text (docs/nc-diff.md): what a preview or a drift item shows,
   * so a header comment added or a comment changed at the machine is seen.
   */
  diff(from: Buffer, to: Buffer): { identical: boolean; summary: ReturnType<typeof diffPrograms>['summary']; unified: string };
  /** The library; undefined when missing or outside the scope. */
  library(libraryId: string, principal: RestPrincipal): Promise<{ id: string; name: string } | undefined>;
  /**
   * Adds a draft version of a program inside the caller's transaction (the
   * caller writes the audit record): content from a machine becomes a draft
   * that goes through submit and approval like any upload. `authorOperator`
   * is the operator the author declared (X-On-Behalf-Of): separation of
   * duties keeps that person from approving the draft too.
   */
  addDraft(tx: WriteTx, draft: { programId: string; content: Buffer; notes: string; author: string; authorOperator: string | null; now: number }): Promise<{ id: string; number: number; sha256: string; size: number }>;
  /** Creates a program inside the caller's transaction; 'name-taken' when the library has one of that name. */
  addProgram(tx: WriteTx, program: { libraryId: string; name: string; controller: string; description: string; createdBy: string; now: number }): Promise<{ id: string } | 'name-taken'>;
  /** Approvals waiting for a decision, across every library. */
  pendingApprovals(): Promise<number>;
}

declare module '../../core/roles/programs/context.js' {
  interface ProgramsServices {
    'vault.versions': VaultVersions;
  }
}

/** No rule of the canonical form: every line compared as written. */
export const EVERY_LINE = { blockNumbers: false, comments: false, whitespace: false, case: false, numberFormat: false } as const;

const inScope = (p: RestPrincipal, libraryId: string): boolean => p.scopes.libraries === '*' || p.scopes.libraries.includes(libraryId);

export function vaultVersions(store: VaultStore): VaultVersions {
  const program = async (programId: string, principal: RestPrincipal) => {
    const p = await store.program(programId);
    return p && inScope(principal, p.libraryId) ? { id: p.id, name: p.name, libraryId: p.libraryId, controller: p.controller, fileName: p.fileName } : undefined;
  };
  const version = async (versionId: string, principal: RestPrincipal): Promise<VaultVersionForUse | undefined> => {
    const v = await store.version(versionId);
    const p = v ? await program(v.programId, principal) : undefined;
    if (!v || !p) return undefined;
    return { id: v.id, number: v.number, state: v.state, sha256: v.sha256, size: v.size, program: p, content: (await store.content(v.id)) as Buffer };
  };
  return {
    version,
    async identity(versionId, principal) {
      const v = await store.version(versionId);
      const p = v ? await program(v.programId, principal) : undefined;
      return v && p ? { program: p.name, number: v.number, sha256: v.sha256 } : undefined;
    },
    program,
    async latestPublished(programId, principal) {
      if (!(await program(programId, principal))) return undefined;
      const [latest] = await store.listVersions(programId, 'published', 1, null);
      return latest ? version(latest.id, principal) : undefined;
    },
    diff(from, to) {
      const d = diffPrograms(from, to, { unified: true, ignore: EVERY_LINE });
      return { identical: d.identical, summary: d.summary, unified: d.unified ?? '' };
    },
    async library(libraryId, principal) {
      const l = await store.library(libraryId);
      return l && inScope(principal, l.id) ? { id: l.id, name: l.name } : undefined;
    },
    async addDraft(tx, d) {
      const sha256 = sha256Hex(d.content);
      const id = newId('ver');
      const number = await store.insertVersion(tx, {
        id, programId: d.programId, sha256, size: d.content.length, notes: d.notes, author: d.author, authorOperator: d.authorOperator, state: 'draft', createdAt: d.now,
        submittedAt: null, submittedBy: null, submittedOperator: null, publishedAt: null, obsoletedAt: null, obsoletedBy: null,
      }, d.content);
      return { id, number, sha256, size: d.content.length };
    },
    async addProgram(tx, p) {
      if (await tx.get('SELECT 1 AS x FROM vault_programs WHERE library_id = ? AND name_key = ?', [p.libraryId, p.name.toLowerCase()])) return 'name-taken';
      const id = newId('prg');
      await store.insertProgram(tx, { id, libraryId: p.libraryId, name: p.name, controller: p.controller, description: p.description, fileName: defaultFileName(p.name), createdBy: p.createdBy, createdAt: p.now, updatedAt: p.now });
      return { id };
    },
    pendingApprovals: () => store.countPendingApprovals(),
  };
}

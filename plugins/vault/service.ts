/**
 * What the vault offers the service's other plugins (assignments,
 * deployments), through the role's service registry: versions with their
 * content, as the caller's scope allows, and the NC-aware diff. Declared by
 * declaration merging, so a consumer needs no import of this plugin.
 */
import type { RestPrincipal } from '../../core/rest/operation.js';
import { diffPrograms } from './nc/index.js';
import type { VaultStore } from './store.js';

/** A version as other plugins use it. */
export interface VaultVersionForUse {
  id: string;
  number: number;
  state: 'draft' | 'submitted' | 'published' | 'obsolete';
  sha256: string;
  size: number;
  program: { id: string; name: string; libraryId: string; controller: string };
  content: Buffer;
}

export interface VaultVersions {
  /** The version with its program and content; undefined when missing or outside `principal`'s library scope. */
  version(versionId: string, principal: RestPrincipal): Promise<VaultVersionForUse | undefined>;
  /** The program; undefined when missing or outside the scope. */
  program(programId: string, principal: RestPrincipal): Promise<VaultVersionForUse['program'] | undefined>;
  /** The newest published version of a program, or undefined. */
  latestPublished(programId: string, principal: RestPrincipal): Promise<VaultVersionForUse | undefined>;
  /** The NC-aware diff's machine summary and unified text (docs/nc-diff.md). */
  diff(from: Buffer, to: Buffer): { identical: boolean; summary: ReturnType<typeof diffPrograms>['summary']; unified: string };
}

declare module '../../core/roles/programs-context.js' {
  interface ProgramsServices {
    'vault.versions': VaultVersions;
  }
}

const inScope = (p: RestPrincipal, libraryId: string): boolean => p.scopes.libraries === '*' || p.scopes.libraries.includes(libraryId);

export function vaultVersions(store: VaultStore): VaultVersions {
  const program = async (programId: string, principal: RestPrincipal) => {
    const p = await store.program(programId);
    return p && inScope(principal, p.libraryId) ? { id: p.id, name: p.name, libraryId: p.libraryId, controller: p.controller } : undefined;
  };
  const version = async (versionId: string, principal: RestPrincipal): Promise<VaultVersionForUse | undefined> => {
    const v = await store.version(versionId);
    const p = v ? await program(v.programId, principal) : undefined;
    if (!v || !p) return undefined;
    return { id: v.id, number: v.number, state: v.state, sha256: v.sha256, size: v.size, program: p, content: (await store.content(v.id)) as Buffer };
  };
  return {
    version,
    program,
    async latestPublished(programId, principal) {
      if (!(await program(programId, principal))) return undefined;
      const [latest] = await store.listVersions(programId, 'published', 1, null);
      return latest ? version(latest.id, principal) : undefined;
    },
    diff(from, to) {
      const d = diffPrograms(from, to, { unified: true });
      return { identical: d.identical, summary: d.summary, unified: d.unified ?? '' };
    },
  };
}

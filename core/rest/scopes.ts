/**
 * Scopes as sets: which libraries and machine groups a caller, an account or
 * a webhook covers, and whether one set of scopes lies within another. The
 * accounts' grant rule (plugins/accounts/grants.ts), the webhooks' own
 * scopes and the audit's filter all compare scopes here, one way.
 * docs/programs-access.md, "Scopes".
 */
import type { LibraryScope, RestPrincipal } from './operation.js';

/** Both kinds of scope, complete (machine groups always given). */
export interface Scopes {
  libraries: LibraryScope;
  machineGroups: LibraryScope;
}

/** Every library and every machine group. */
export const ALL_SCOPES: Scopes = Object.freeze({ libraries: '*', machineGroups: '*' });

/** The kinds of scope, with the name of what each lists. */
export const SCOPE_KINDS = { libraries: 'library', machineGroups: 'machine group' } as const;
export type ScopeKind = keyof typeof SCOPE_KINDS;
const KINDS = Object.keys(SCOPE_KINDS) as ScopeKind[];

/** A principal's scopes, complete: absent machine groups mean every group. */
export function scopesOf(p: Pick<RestPrincipal, 'scopes'>): Scopes {
  return { libraries: p.scopes.libraries, machineGroups: p.scopes.machineGroups ?? '*' };
}

/** Whether the scopes cover everything: such a caller sees every object and every audit record. */
export function isUnscoped(s: Scopes): boolean {
  return s.libraries === '*' && s.machineGroups === '*';
}

/** The ids of `granted` outside `own`; `'*'` when `granted` is every object and `own` is not. */
export function beyondScope(granted: LibraryScope, own: LibraryScope): readonly string[] | '*' {
  if (own === '*') return [];
  if (granted === '*') return '*';
  const mine = new Set(own);
  return [...new Set(granted.filter((id) => !mine.has(id)))];
}

/** Whether `granted` names nothing beyond `own`, for both kinds (`*` lies within `*` only; `[]` within anything). */
export function scopesWithin(granted: Scopes, own: Scopes): boolean {
  return KINDS.every((kind) => beyondScope(granted[kind], own[kind]).length === 0);
}

/** Scopes read back from their stored JSON text; a record from before machine-group scopes covers every group. */
export function parseScopes(text: string): Scopes {
  const stored = JSON.parse(text) as { libraries: LibraryScope; machineGroups?: LibraryScope };
  return { libraries: stored.libraries, machineGroups: stored.machineGroups ?? '*' };
}

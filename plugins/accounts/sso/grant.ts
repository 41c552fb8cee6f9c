/**
 * What a person's (or a system's) claims give them on the program service:
 * the role of the first entry of `programs.oidc.roles` (in the file's order)
 * whose claim value they have, so the separation of duties between roles
 * holds for someone in two groups; and the libraries and machine groups of
 * every value of the scopes claim they have. No role mapped: no access.
 */
import { claimValues, matchingEntries } from '../../../core/auth/oidc-claims.js';
import type { LibraryScope } from '../../../core/rest/operation.js';
import type { RoleName } from '../roles.js';
import type { ProgramsOidcSettings } from './config.js';

/** A role and scopes from the claims. */
export interface ProgramsGrant {
  role: RoleName;
  scopes: { libraries: LibraryScope; machineGroups: LibraryScope };
}

/** The union of the mapped scopes of `values`; every object ("*") when the mapping is absent. */
function scopeOf(mapping: Readonly<Record<string, LibraryScope>> | undefined, values: readonly string[]): LibraryScope {
  if (mapping === undefined) return '*';
  const ids = new Set<string>();
  for (const [, scope] of matchingEntries(mapping, values)) {
    if (scope === '*') return '*';
    for (const id of scope) ids.add(id);
  }
  return [...ids].sort();
}

/** The grant of `claims`; null when no value of the roles claim is mapped. */
export function programsGrant(claims: Record<string, unknown>, settings: ProgramsOidcSettings): ProgramsGrant | null {
  const first = matchingEntries(settings.roles, claimValues(claims, settings.rolesClaim))[0];
  if (!first) return null;
  const values = claimValues(claims, settings.scopesClaim ?? settings.rolesClaim);
  return { role: first[1], scopes: { libraries: scopeOf(settings.libraries, values), machineGroups: scopeOf(settings.machineGroups, values) } };
}

/** The claim paths the mapping reads (what a refusal page lists). */
export function mappedClaimPaths(settings: ProgramsOidcSettings): string[] {
  return [...new Set([settings.rolesClaim, settings.scopesClaim ?? settings.rolesClaim])];
}

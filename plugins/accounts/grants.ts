/**
 * What a caller may grant. Every path that creates an account or sets its
 * role, scopes or limits (create user, create service token, update user)
 * goes through `authorizeAccountChange`, and the lists and revocation see only
 * the accounts `holdsWithin` the caller: nobody can make, or turn an account
 * into, something holding more than they hold themselves, and nobody changes
 * their own role or scopes. docs/programs-access.md, "Granting rights".
 */
import type { LibraryScope, RestPrincipal } from '../../core/rest/operation.js';
import { ProblemError, type ProblemFieldError } from '../../core/rest/problem.js';
import { beyondScope, SCOPE_KINDS, scopesOf, scopesWithin, type ScopeKind, type Scopes } from '../../core/rest/scopes.js';
import { ROLE_NAMES, ROLE_PERMISSIONS, type RoleName } from './roles.js';

export type { Scopes } from '../../core/rest/scopes.js';

/** A caller as a grantor: its rights, and for a service token its own limits. */
export interface Grantor {
  kind: RestPrincipal['kind'];
  id: string;
  role: string;
  scopes: Scopes;
  /** A service token that requires an operator grants only tokens that do too. */
  requiresOperator: boolean;
  /** A service token's expiry; the tokens it makes expire no later. Null: no limit. */
  expiresAt: number | null;
}

/** What an account will hold once created or changed. */
export interface Grant {
  role: RoleName;
  scopes: Scopes;
  /** Service tokens only. */
  requiresOperator?: boolean;
  /** Service tokens only; null: never expires. */
  expiresAt?: number | null;
}

/** An existing account, for a change. */
export interface Account {
  kind: RestPrincipal['kind'];
  id: string;
  role: string;
  scopes: Scopes;
}

/** The grantor of a principal; `token` is the calling service token's expiry, when it is one. */
export function grantorOf(p: RestPrincipal, token?: { expiresAt: number | null }): Grantor {
  return {
    kind: p.kind, id: p.id, role: p.role, scopes: scopesOf(p),
    requiresOperator: p.requiresOperator, expiresAt: token?.expiresAt ?? null,
  };
}

/** The roles a holder of `role` may grant: those whose every permission it holds (itself included); in the role table's order. */
export function grantableRoles(role: string): RoleName[] {
  const own = ROLE_PERMISSIONS[role as RoleName] as ReadonlySet<string> | undefined;
  if (!own) return [];
  return ROLE_NAMES.filter((r) => [...ROLE_PERMISSIONS[r]].every((permission) => own.has(permission)));
}

/** Whether an account with `rights` holds nothing beyond the grantor's role and scopes. */
export function holdsWithin(g: Grantor, rights: { role: string; scopes: Scopes }): boolean {
  return grantableRoles(g.role).includes(rights.role as RoleName) && scopesWithin(rights.scopes, g.scopes);
}

/** Whether two scopes name the same objects (a list's order and repeats do not matter). */
function sameScope(a: LibraryScope, b: LibraryScope): boolean {
  if (a === '*' || b === '*') return a === b;
  const left = new Set(a);
  const right = new Set(b);
  return left.size === right.size && [...left].every((id) => right.has(id));
}

/** Scopes as sent, completed: a kind left out is `fallback`'s (the grantor's own on a create, the account's current on a change). */
export function completeScopes(sent: { libraries?: LibraryScope; machineGroups?: LibraryScope } | undefined, fallback: Scopes): Scopes {
  return { libraries: sent?.libraries ?? fallback.libraries, machineGroups: sent?.machineGroups ?? fallback.machineGroups };
}

const MAX_LISTED = 20;
const listed = (ids: readonly string[]): string => (ids.length > MAX_LISTED ? `${ids.slice(0, MAX_LISTED).join(', ')} and ${ids.length - MAX_LISTED} more` : ids.join(', '));
const scopeText = (kind: ScopeKind, own: LibraryScope): string =>
  own === '*' ? '"*" or any ids' : own.length === 0 ? 'an empty list (you hold no ' + SCOPE_KINDS[kind] + ')' : `a list of ids among your own: ${listed(own)}`;

/** The fields of `grant` beyond the grantor's rights, each with what the grantor may grant instead. */
function grantErrors(g: Grantor, grant: Grant): ProblemFieldError[] {
  const errors: ProblemFieldError[] = [];
  const roles = grantableRoles(g.role);
  if (!roles.includes(grant.role)) {
    errors.push({ field: 'body.role', message: `${grant.role} holds permissions your role (${g.role}) does not`, accepted: roles.join(', ') || 'none' });
  }
  for (const kind of Object.keys(SCOPE_KINDS) as ScopeKind[]) {
    const beyond = beyondScope(grant.scopes[kind], g.scopes[kind]);
    if (beyond.length === 0) continue;
    const what = beyond === '*' ? `"*" (every ${SCOPE_KINDS[kind]}) is wider than your own ${kind}` : `outside your own ${kind}: ${listed(beyond)}`;
    errors.push({ field: `body.scopes.${kind}`, message: what, accepted: scopeText(kind, g.scopes[kind]) });
  }
  if (g.requiresOperator && grant.requiresOperator === false) {
    errors.push({ field: 'body.requiresOperator', message: 'you require an operator, so the tokens you make do too', accepted: 'true' });
  }
  if (g.expiresAt !== null && grant.expiresAt !== undefined && (grant.expiresAt === null || grant.expiresAt > g.expiresAt)) {
    const limit = new Date(g.expiresAt).toISOString();
    errors.push({ field: 'body.expiresAt', message: `later than your own expiry (${limit})`, accepted: `an instant no later than ${limit}` });
  }
  return errors;
}

/** 404 for an account: the answer for one that does not exist, too. */
export function accountNotFound(account: Pick<Account, 'kind' | 'id'>): ProblemError {
  return new ProblemError('not-found', `no ${account.kind === 'user' ? 'user' : 'service token'} ${account.id}`);
}

/** The problem's `mayGrant`: the roles and scopes the grantor may give and, for a token, the limits the tokens it makes keep. */
const mayGrant = (g: Grantor) => ({
  roles: grantableRoles(g.role), scopes: g.scopes,
  ...(g.kind === 'serviceToken' ? { tokenLimits: { requiresOperator: g.requiresOperator, expiresNoLaterThan: g.expiresAt === null ? null : new Date(g.expiresAt).toISOString() } } : {}),
});

/**
 * The one check of every create and change of an account. `target` is the
 * account being changed (absent on a create): one holding more than the
 * grantor is 404 exactly as if it did not exist, and a grantor's own role
 * and scopes are not its to change. `result` is what the account will hold:
 * every part of it must lie within the grantor's rights, else 403
 * `beyond-own-rights` naming each field and what the grantor may grant.
 */
export function authorizeAccountChange(g: Grantor, change: { target?: Account; result: Grant }): void {
  const { target, result } = change;
  if (target && !holdsWithin(g, target)) throw accountNotFound(target);
  if (target && target.kind === g.kind && target.id === g.id) {
    const errors: ProblemFieldError[] = [];
    if (result.role !== target.role) errors.push({ field: 'body.role', message: 'your own role is set by another administrator', accepted: `your current role, ${target.role}` });
    if (!(Object.keys(SCOPE_KINDS) as ScopeKind[]).every((kind) => sameScope(result.scopes[kind], target.scopes[kind]))) {
      errors.push({ field: 'body.scopes', message: 'your own scopes are set by another administrator', accepted: 'your current scopes' });
    }
    if (errors.length > 0) {
      throw new ProblemError('beyond-own-rights', 'nobody changes their own role or scopes; another administrator whose rights cover them can', { errors, extensions: { mayGrant: mayGrant(g) } });
    }
  }
  const errors = grantErrors(g, result);
  if (errors.length > 0) {
    throw new ProblemError('beyond-own-rights', `you may grant only what you hold yourself: ${errors.map((e) => e.field).join(', ')} ${errors.length === 1 ? 'goes' : 'go'} beyond it`, {
      errors, extensions: { mayGrant: mayGrant(g) },
    });
  }
}

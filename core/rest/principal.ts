/**
 * The caller of an operation and who it is in the audit. A handler of an
 * operation that needs a permission always has a principal (the surface
 * answers 401 before); `principalOf` narrows it and refuses a missing one,
 * and `auditActor` is the principal as the audit records it, or the service
 * itself for work nobody requested (runners, the mirror, start-up).
 */
import type { RestPrincipal } from './operation.js';
import { ProblemError } from './problem.js';

/** Who an audit record names: the principal, the operator it acts for, and how it authenticated. */
export interface AuditActor {
  /** Who acted: a user name, or a service token's name. */
  principalName: string;
  /** The human operator a service token acts for (X-On-Behalf-Of). */
  onBehalfOf?: string | null;
  /** How the principal authenticated, e.g. session, serviceToken, password, internal. */
  authMethod: string;
}

/** The service acting for itself in the audit. */
export const SYSTEM_ACTOR: AuditActor = Object.freeze({ principalName: 'system', onBehalfOf: null, authMethod: 'internal' });

/** The caller, or 401 `unauthenticated` when there is none. */
export function principalOf(p: RestPrincipal | null): RestPrincipal {
  if (!p) throw new ProblemError('unauthenticated', 'sign in first');
  return p;
}

/** The principal as the audit records it; the service itself for null. */
export function auditActor(p: Pick<RestPrincipal, 'name' | 'onBehalfOf' | 'authMethod'> | null): AuditActor {
  return p ? { principalName: p.name, onBehalfOf: p.onBehalfOf, authMethod: p.authMethod } : SYSTEM_ACTOR;
}

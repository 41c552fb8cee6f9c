/** Small helpers the deployments plugin's files share. */
import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { SERVICE_PRINCIPAL, type RestPrincipal } from '../../core/rest/operation.js';
import { ProblemError } from '../../core/rest/problem.js';

export const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());
export const idOf = (prefix: string) => z.string().regex(new RegExp(`^${prefix}_[0-9a-f]{16}$`), `an id such as ${prefix}_0123456789abcdef`);
export const newId = (prefix: string) => `${prefix}_${randomBytes(8).toString('hex')}`;

export const principalOf = (p: RestPrincipal | null): RestPrincipal => {
  if (!p) throw new ProblemError('unauthenticated', 'sign in first');
  return p;
};

/** The service acting for itself (runners, pull-backs): it sees every machine. */
export const SYSTEM = SERVICE_PRINCIPAL;

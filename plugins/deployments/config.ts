/**
 * The deployments plugin's part of the configuration (core/config/config-parts.ts):
 * `programs.deployments.leaseSec`, how long an instance's lease on the
 * deployments and trials it drives lasts without renewal
 * (docs/programs-deployments.md, "Several instances").
 */
import { z } from 'zod';
import type { ConfigPart } from '../../core/config/config-parts.js';

export const DEFAULT_DEPLOYMENT_LEASE_SEC = 30;

export const programsDeploymentsSchema = z
  .object({
    /** Seconds a lease on a deployment or trial lasts unless renewed (renewed at least every third of it): another instance takes a dead one's work over within it plus a second. */
    leaseSec: z.number().int().min(2).max(3600).default(DEFAULT_DEPLOYMENT_LEASE_SEC),
  })
  .strict();

export const DEPLOYMENTS_FIELDS = {
  deployments: programsDeploymentsSchema.default({ leaseSec: DEFAULT_DEPLOYMENT_LEASE_SEC }),
};

export const DEPLOYMENTS_PART = { section: 'programs', fields: DEPLOYMENTS_FIELDS } satisfies ConfigPart<typeof DEPLOYMENTS_FIELDS>;

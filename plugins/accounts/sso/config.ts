/**
 * The program service's `programs.oidc` (docs/identity.md, "The program
 * service"): sign-in to its console and terminal through the plant's OpenID
 * Connect provider, and the provider's access tokens on `/api/v1`. Besides
 * the common fields (core/auth/oidc-settings.ts), `roles` maps a claim value
 * to one of the service's roles, `libraries` and `machineGroups` map the
 * values of `scopesClaim` to scopes, and `maxAuthAgeForApprovalSec` is how
 * recent a sign-in at the provider an approval needs.
 */
import { z } from 'zod';
import { claimValueKey, oidcCommonFields } from '../../../core/auth/oidc-settings.js';
import type { ConfigPart } from '../../../core/config/config-parts.js';
import { ROLE_NAMES } from '../roles.js';

export const DEFAULT_MAX_AUTH_AGE_FOR_APPROVAL_SEC = 300;

const libraryIds = z.union([z.literal('*'), z.array(z.string().regex(/^lib_[0-9a-f]{16}$/, 'a library id, lib_ and 16 hex digits')).max(1000)]);
const groupIds = z.union([z.literal('*'), z.array(z.string().regex(/^grp_[0-9a-f]{16}$/, 'a machine group id, grp_ and 16 hex digits')).max(1000)]);

export const programsOidcSchema = z
  .object({
    ...oidcCommonFields(ROLE_NAMES),
    /** The claim whose values map to scopes; the roles claim when absent. */
    scopesClaim: z.string().regex(/^[A-Za-z0-9_:$-]+(\.[A-Za-z0-9_:$-]+)*$/, 'a claim name, or a dotted path').max(128).optional(),
    /** Claim value → libraries ("*" or ids); absent: every library. A user holds those of every value they have. */
    libraries: z.record(claimValueKey, libraryIds).optional(),
    /** Claim value → machine groups ("*" or ids); absent: every group. */
    machineGroups: z.record(claimValueKey, groupIds).optional(),
    /** An approval by a person signed in through the provider needs a sign-in there at most this long ago, seconds (21 CFR 11.200); older: signed in again with max_age. */
    maxAuthAgeForApprovalSec: z.number().int().min(5).max(86_400).default(DEFAULT_MAX_AUTH_AGE_FOR_APPROVAL_SEC),
  })
  .strict();

export type ProgramsOidcSettings = z.output<typeof programsOidcSchema>;

const SSO_FIELDS = { oidc: programsOidcSchema.optional() };

/** The accounts plugin's part of the `programs` section. */
export const ACCOUNTS_CONFIG = { section: 'programs', fields: SSO_FIELDS } satisfies ConfigPart;

export type AccountsFields = typeof SSO_FIELDS;

/**
 * The gateway's `security.oidc` (docs/identity.md): sign-in to the fleet
 * console through the plant's OpenID Connect provider. Besides the common
 * fields (core/auth/oidc-settings.ts), `roles` maps a claim value to
 * `admin` or `user`, and `authorizedApis` gives the users of a claim value
 * their authorised API list, as an administrator gives a local user's.
 */
import { z } from 'zod';
import { claimValueKey, oidcCommonFields } from '../../../core/auth/oidc-settings.js';

/** The gateway's roles a claim value maps to: an administrator, or a user with an authorised API list. */
export const GATEWAY_SSO_ROLES = ['admin', 'user'] as const;

/** An authorised API entry as a local user's list has it: an interface path, or a prefix ending in `/*`. */
const apiEntry = z.string().max(200).regex(/^\/api\/[A-Za-z0-9/_.*-]*$/, 'an interface path such as /api/config/machines, or a prefix such as /api/cnc/*');

export const gatewayOidcSchema = z
  .object({
    ...oidcCommonFields(GATEWAY_SSO_ROLES),
    /** Claim value → authorised API entries; a `user` gets those of every value they have. */
    authorizedApis: z.record(claimValueKey, z.array(apiEntry).max(500)).default({}),
  })
  .strict();

export type GatewayOidcSettings = z.output<typeof gatewayOidcSchema>;

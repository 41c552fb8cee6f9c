/**
 * The shapes the account operations take and answer: ids, names, roles and
 * scopes as input schemas, users, service tokens and the caller as answers.
 */
import { z } from 'zod';
import { MIN_PASSWORD_LENGTH } from '../../core/auth/passwords.js';
import { iso, isoOrNull } from '../../core/rest/fields.js';
import { idOf } from '../../core/rest/ids.js';
import { ROLE_NAMES } from './roles.js';
import type { TokenRecord, UserRecord } from './store.js';

export const MAX_PASSWORD_LENGTH = 1024;
/** An account id in a path: users and tokens made by earlier versions have 12 hex digits, so 12 to 16 are accepted. */
export const accountIdOf = (prefix: 'usr' | 'tok') => idOf(prefix, { minDigits: 12 });
export const usernameSchema = z.string().min(1).max(64).regex(/^[A-Za-z0-9][A-Za-z0-9._@-]*$/, 'letters, digits and . _ @ -, starting with a letter or digit');
export const passwordSchema = z.string().min(MIN_PASSWORD_LENGTH).max(MAX_PASSWORD_LENGTH);
export const roleSchema = z.enum(ROLE_NAMES);
const libraryScope = z.union([z.literal('*'), z.array(z.string().regex(/^lib_[0-9a-f]{16}$/, 'a library id')).max(1000)]);
const machineGroupScope = z.union([z.literal('*'), z.array(z.string().regex(/^grp_[0-9a-f]{16}$/, 'a machine group id')).max(1000)]);
export const scopesSchema = z
  .object({ libraries: libraryScope, machineGroups: machineGroupScope })
  .strict()
  .describe('What the account may act on: libraries and machine groups, each "*" for all or a list of ids.');
/** Scopes as a create or a change sends them: a kind left out is the caller's own (create) or the account's current one (change). */
export const scopesInputSchema = z
  .object({ libraries: libraryScope.optional(), machineGroups: machineGroupScope.optional() })
  .strict()
  .describe('What the account may act on: libraries and machine groups, each "*" for all or a list of ids, within your own scopes. A kind left out is your own on a create and unchanged on a change.');

export const userView = z.object({
  id: z.string(), username: z.string(), role: roleSchema, scopes: scopesSchema, disabled: z.boolean(), createdAt: z.string(), updatedAt: z.string(),
});
export const tokenView = z.object({
  id: z.string(), name: z.string(), role: roleSchema, scopes: scopesSchema, requiresOperator: z.boolean(), expiresAt: z.string().nullable(),
  lastUsedAt: z.string().nullable(), revokedAt: z.string().nullable(), createdBy: z.string(),
  ownerUserId: z.string().nullable().describe('The user on whose authority the token was made (its maker, or the owner of the token that made it); disabling that user revokes it. Null for a token made before owners were recorded by another token.'),
  createdAt: z.string(),
});
export const meView = z.object({
  kind: z.enum(['user', 'serviceToken']), id: z.string(), name: z.string(), role: z.string(), scopes: scopesSchema,
  permissions: z.array(z.string()), authMethod: z.enum(['session', 'serviceToken', 'accessToken']), onBehalfOf: z.string().nullable(),
  csrfToken: z.string().optional().describe('For a session: send it as X-CSRF-Token with POST, PATCH and DELETE.'),
  identityProvider: z.object({ authTime: z.string().nullable() }).optional().describe('A session opened by a sign-in through the identity provider: when the person last authenticated there (null: the provider did not say). Its logout goes on to the provider (GET /auth/oidc/logout).'),
});

export const userOut = (u: UserRecord): z.infer<typeof userView> => ({
  id: u.id, username: u.username, role: u.role, scopes: u.scopes as z.infer<typeof scopesSchema>, disabled: u.disabled, createdAt: iso(u.createdAt), updatedAt: iso(u.updatedAt),
});
export const tokenOut = (t: TokenRecord): z.infer<typeof tokenView> => ({
  id: t.id, name: t.name, role: t.role, scopes: t.scopes as z.infer<typeof scopesSchema>, requiresOperator: t.requiresOperator, expiresAt: isoOrNull(t.expiresAt),
  lastUsedAt: isoOrNull(t.lastUsedAt), revokedAt: isoOrNull(t.revokedAt), createdBy: t.createdBy, ownerUserId: t.ownerUserId, createdAt: iso(t.createdAt),
});


/**
 * The gateway's security interfaces: logging in, one's own password, users,
 * secret keys, the security settings and the cloud link (docs/security.md,
 * docs/cloud-relay.md). All but login and change-password are for
 * administrators only.
 */
import { z } from 'zod';
import { MIN_PASSWORD_LENGTH } from '../../../auth/passwords.js';
import { defineEntry } from '../../../interfaces/registry.js';

/** A username: 1-64 letters, digits, `_ . @ -`, starting with a letter or digit. */
export const USERNAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.@-]{0,63}$/;
/** A cloud broker's URL: mqtt:// or mqtts://, host and port only. */
export const BROKER_URL = /^mqtts?:\/\/[^\s/]+$/;

const username = z.string().regex(USERNAME_PATTERN, 'username must be 1-64 letters, digits, _ . @ -, starting with a letter or digit');
const password = z.string().min(MIN_PASSWORD_LENGTH, `password must have at least ${MIN_PASSWORD_LENGTH} characters`).max(256);

const user = z.strictObject({
  username: z.string(),
  isAdmin: z.boolean(),
  authorizedApis: z.array(z.string()),
  secretKeys: z.number().int().describe('secret keys the user holds, not revoked'),
  createdAt: z.number().describe('unix ms'),
  updatedAt: z.number().describe('unix ms'),
});

const settings = z.strictObject({ securityControl: z.boolean(), enableIpWhiteList: z.boolean(), ipWhiteList: z.array(z.string()) });

/** The cloud link's status (core/roles/gateway/cloud-link-status.ts); never the token. */
export const cloudLinkStatusSchema = z.strictObject({
  configured: z.boolean(),
  source: z.enum(['config', 'api']).optional().describe('where the settings come from: the config file (and environment), or the API'),
  brokerUrl: z.string().optional().describe('without any credentials in the URL'),
  tokenId: z.string().optional().describe('the token’s public id: the gateway’s name in the cloud’s topics'),
  user: z.string().optional(),
  connected: z.boolean(),
  state: z.enum(['connecting', 'connected', 'retrying']).optional(),
  failedAttempts: z.number().int().optional(),
  nextAttemptAt: z.number().optional(),
  protocolVersion: z.union([z.literal(4), z.literal(5)]).optional(),
  connectedAt: z.number().optional(),
  lastError: z.string().optional(),
  lastErrorAt: z.number().optional(),
  callsAnswered: z.number().int().optional(),
  callsFailed: z.number().int().optional(),
  callsDropped: z.number().int().optional(),
});
const cloudLinkStatus = cloudLinkStatusSchema;

export const SECURITY = {
  login: defineEntry({
    path: '/api/auth/login',
    method: 'POST',
    summary: 'Logs in with username and password; returns a JWT valid 24 hours. Exempt from the IP white list; failures are throttled (429 with Retry-After).',
    tags: ['authentication'],
    permission: null,
    // The specification's Login response has the field `token`: a client written from it reads response.token.
    topLevel: ['token'],
    input: z.object({ username: z.string().min(1).max(64), password: z.string().min(1).max(256) }).strict(),
    output: z.object({ token: z.string() }),
    errors: ['PASSWORD_MISMATCH', 'TOO_MANY_REQUESTS'],
  }),
  changePassword: defineEntry({
    path: '/api/auth/change-password',
    method: 'POST',
    summary: 'Changes the password of the user named in the JWT. Every JWT issued before is invalidated.',
    tags: ['authentication'],
    input: z.object({ currentPassword: z.string().min(1).max(256), newPassword: password }).strict(),
    output: z.strictObject({ username: z.string(), reloginRequired: z.literal(true) }),
    errors: ['PASSWORD_MISMATCH', 'WEAK_PASSWORD', 'TOO_MANY_REQUESTS'],
  }),
  users: defineEntry({
    path: '/api/security/users',
    method: 'GET',
    summary: 'Every user with role and authorised API list (administrators only).',
    tags: ['security'],
    input: z.object({}).strict(),
    output: z.array(user),
    errors: [],
  }),
  addUser: defineEntry({
    path: '/api/security/user/add',
    method: 'POST',
    summary: 'Adds a user (administrators only).',
    tags: ['security'],
    input: z.object({ username, password, isAdmin: z.boolean().default(false), authorizedApis: z.array(z.string()).default([]) }).strict(),
    output: user,
    errors: ['USER_EXISTED'],
  }),
  updateUser: defineEntry({
    path: '/api/security/user/update',
    method: 'POST',
    summary: 'Changes a user’s password, role or authorised API list (administrators only). A new password invalidates the user’s JWTs.',
    tags: ['security'],
    input: z.object({ username, password: password.optional(), isAdmin: z.boolean().optional(), authorizedApis: z.array(z.string()).optional() }).strict(),
    output: user,
    errors: ['USER_NOT_EXISTED'],
  }),
  deleteUser: defineEntry({
    path: '/api/security/user/delete',
    method: 'POST',
    summary: 'Deletes a user and their secret keys (administrators only). The last administrator cannot be deleted.',
    tags: ['security'],
    input: z.object({ username }).strict(),
    output: z.strictObject({ username: z.string(), deleted: z.literal(true) }),
    errors: ['USER_NOT_EXISTED'],
  }),
  secretKeys: defineEntry({
    path: '/api/security/secret-keys',
    method: 'GET',
    summary: 'Every secret key, without its secret (administrators only).',
    tags: ['security'],
    input: z.object({}).strict(),
    output: z.array(z.strictObject({ id: z.string(), username: z.string(), label: z.string(), createdAt: z.number(), revokedAt: z.number().nullable(), lastUsedAt: z.number().nullable() })),
    errors: [],
  }),
  createSecretKey: defineEntry({
    path: '/api/security/secret-key/create',
    method: 'POST',
    summary: 'Creates a secret key for a user (administrators only). The key is shown in this response only; it is valid until revoked.',
    tags: ['security'],
    input: z.object({ username, label: z.string().max(128).default('') }).strict(),
    output: z.strictObject({ id: z.string(), username: z.string(), label: z.string(), key: z.string().describe('the key itself, shown this once') }),
    errors: ['USER_NOT_EXISTED'],
  }),
  revokeSecretKey: defineEntry({
    path: '/api/security/secret-key/revoke',
    method: 'POST',
    summary: 'Revokes a secret key (administrators only); it stops working at once.',
    tags: ['security'],
    input: z.object({ id: z.string().min(1) }).strict(),
    output: z.strictObject({ id: z.string(), revokedAt: z.number().nullable() }),
    errors: ['SECRET_KEY_NOT_EXISTED'],
  }),
  settings: defineEntry({
    path: '/api/security/settings',
    method: 'GET',
    summary: 'Security control and the IP white list (administrators only).',
    tags: ['security'],
    input: z.object({}).strict(),
    output: settings,
    errors: [],
  }),
  updateSettings: defineEntry({
    path: '/api/security/settings/update',
    method: 'POST',
    summary: 'Turns security control and the IP white list on or off and sets the list (administrators only). JWT-authenticated requests stay exempt from the list, so an administrator cannot lock themselves out.',
    tags: ['security'],
    input: z
      .object({ securityControl: z.boolean().optional(), enableIpWhiteList: z.boolean().optional(), ipWhiteList: z.array(z.string()).max(1000).optional() })
      .strict(),
    output: settings.extend({
      configManaged: z.array(z.string()).optional().describe('the settings of this change that the config file sets: the next start applies the file’s value again'),
      warning: z.string().optional(),
    }),
    errors: [],
  }),
  setCloudLink: defineEntry({
    path: '/api/security/cloud-link/set',
    method: 'POST',
    summary: 'Sets the link to a cloud relay without a restart: the broker URL, the gateway token the cloud made (cgw_…), and the user whose authorised API list cloud calls run with. Given fields replace the current ones; they are kept in the data directory and win over the config until removed. Answers the link status, never the token.',
    tags: ['security'],
    input: z
      .object({
        brokerUrl: z.string().max(512).regex(BROKER_URL, 'an mqtt:// or mqtts:// URL such as mqtt://cloud.example:1883').optional(),
        accessToken: z.string().max(256).optional(),
        user: z.string().min(1).max(128).optional(),
      })
      .strict(),
    output: cloudLinkStatus,
    errors: [],
  }),
  removeCloudLink: defineEntry({
    path: '/api/security/cloud-link/remove',
    method: 'POST',
    summary: 'Removes the cloud link settings made through the API: the link goes back to the config\'s cloudLink section, or closes when there is none.',
    tags: ['security'],
    input: z.object({}).strict(),
    output: cloudLinkStatus,
    errors: [],
  }),
};

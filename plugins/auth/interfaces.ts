/** The authentication and security-administration interfaces (HTTP only; no MCP tool exposes them). */
import { z } from 'zod';
import type { Logger } from 'pino';
import type { GatewayContext } from '../../core/roles/gateway/context.js';
import { GatewayError } from '../../core/errors.js';
import type { CallContext } from '../../core/interfaces.js';
import type { GatewayAccessPolicy } from './access-policy.js';
import { isAdminOnly } from './access-policy.js';
import { configManagedSettings, SETTING_PATHS } from './config-settings.js';
import { parseWhiteListEntry } from './ip-white-list.js';
import type { LoginThrottle } from '../../core/auth/login-throttle.js';
import { hashPassword, MIN_PASSWORD_LENGTH, needsRehash, verifyPassword, type ScryptCost } from '../../core/auth/passwords.js';
import { createSecretKey, signJwt } from './tokens.js';
import { USERNAME_PATTERN, type User, type UserStore } from './user-store.js';

const username = z.string().regex(USERNAME_PATTERN, 'username must be 1-64 letters, digits, _ . @ -, starting with a letter or digit');
const password = z.string().min(MIN_PASSWORD_LENGTH, `password must have at least ${MIN_PASSWORD_LENGTH} characters`).max(256);

export interface AuthDeps {
  ctx: GatewayContext & { logger: Logger };
  users: UserStore;
  policy: GatewayAccessPolicy;
  throttle: LoginThrottle;
  signingKey: Uint8Array;
  /** The cost of new hashes; stored hashes of a lower cost are re-hashed at login. */
  passwordCost: ScryptCost;
  /** A valid scrypt hash (at passwordCost) of a random password, verified for unknown usernames so timing does not reveal which exist. */
  dummyHash: () => Promise<string>;
  /** Whether the config file writes a security setting itself (the next start applies the file's value again). */
  configWrites(key: string): boolean;
}

/** What the API shows of a user: never the password hash. */
function publicUser(u: User, users: UserStore) {
  return {
    username: u.username,
    isAdmin: u.isAdmin,
    authorizedApis: u.authorizedApis,
    secretKeys: users.listKeys().filter((k) => k.username === u.username && k.revokedAt === null).length,
    createdAt: u.createdAt,
    updatedAt: u.updatedAt,
  };
}

function throttleSource(call: CallContext): string {
  return call.sourceIp ?? 'internal';
}

function checkThrottle(deps: AuthDeps, source: string, name: string): void {
  const wait = deps.throttle.retryAfterSec(source, name, deps.ctx.now());
  if (wait > 0) throw new GatewayError('TOO_MANY_REQUESTS', `too many failed attempts; retry in ${wait} s`, { retryAfterSec: wait });
}

/** Checks authorised-API entries against the registry, so a typo is an error rather than a silent denial. */
function checkApiList(ctx: GatewayContext, list: readonly string[]): void {
  const known = ctx.interfaces.list().map((d) => d.permission ?? d.path);
  const bad = list.filter((entry) => {
    if (entry.endsWith('/*')) return !known.some((k) => k.startsWith(entry.slice(0, -1)));
    return !known.includes(entry) || isAdminOnly(entry);
  });
  if (bad.length) {
    throw new GatewayError(
      'INVALID_PARAMETER',
      `authorizedApis: unknown or administrator-only entries ${bad.map((b) => `'${b}'`).join(', ')}; accepted: interface paths such as /api/config/machines, or a prefix such as /api/cnc/*`,
    );
  }
}

/**
 * Hashes the password again at the current cost after a successful login, when the stored hash is
 * cheaper. Skipped if the user changed meanwhile (another password, or deleted and created again).
 * A failure is logged and the login still succeeds: the old hash stays valid.
 */
async function rehashIfCheaper(deps: AuthDeps, user: User, password: string): Promise<void> {
  if (!needsRehash(user.passwordHash, deps.passwordCost)) return;
  try {
    const passwordHash = await hashPassword(password, deps.passwordCost);
    const current = deps.users.findUser(user.username);
    if (current?.accountId !== user.accountId || current.passwordHash !== user.passwordHash) return;
    await deps.users.updateUser({ ...current, passwordHash });
    deps.ctx.logger.info({ username: user.username, cost: deps.passwordCost }, 'password re-hashed at the current cost');
  } catch (err) {
    deps.ctx.logger.warn({ username: user.username, err: (err as Error).message }, 'password re-hash failed; the old hash stays valid');
  }
}

function adminCount(users: UserStore): number {
  return users.listUsers().filter((u) => u.isAdmin).length;
}

export function defineAuthInterfaces(deps: AuthDeps): void {
  const { ctx, users, policy, throttle } = deps;
  const define = ctx.interfaces.define.bind(ctx.interfaces);

  define({
    path: '/api/auth/login',
    method: 'POST',
    summary: 'Logs in with username and password; returns a JWT valid 24 hours. Exempt from the IP white list; failures are throttled (429 with Retry-After).',
    tags: ['authentication'],
    permission: null,
    // The specification's Login response has the field `token`: a client written from it reads response.token.
    topLevel: ['token'],
    input: z.object({ username: z.string().min(1).max(64), password: z.string().min(1).max(256) }).strict(),
    output: z.object({ token: z.string() }),
    handler: async (input, call) => {
      const source = throttleSource(call);
      checkThrottle(deps, source, input.username);
      const user = users.findUser(input.username);
      const ok = await verifyPassword(input.password, user?.passwordHash ?? (await deps.dummyHash()));
      if (!user || !ok) {
        throttle.fail(source, input.username, ctx.now());
        throw new GatewayError('PASSWORD_MISMATCH');
      }
      throttle.succeed(source, input.username);
      await rehashIfCheaper(deps, user, input.password);
      return { token: await signJwt(deps.signingKey, { username: user.username, accountId: user.accountId, tokenVersion: user.tokenVersion }, ctx.now()) };
    },
  });

  define({
    path: '/api/auth/change-password',
    method: 'POST',
    summary: 'Changes the password of the user named in the JWT. Every JWT issued before is invalidated.',
    tags: ['authentication'],
    input: z.object({ currentPassword: z.string().min(1).max(256), newPassword: password }).strict(),
    handler: async (input, call) => {
      const principal = call.principal;
      if (principal.method !== 'jwt' || !principal.username) {
        throw new GatewayError('UNAUTHORIZED', 'change-password takes the user from a JWT: send Authorization: Bearer <JWT from /api/auth/login>');
      }
      const source = throttleSource(call);
      checkThrottle(deps, source, principal.username);
      const user = users.getUser(principal.username);
      if (!(await verifyPassword(input.currentPassword, user.passwordHash))) {
        throttle.fail(source, principal.username, ctx.now());
        throw new GatewayError('PASSWORD_MISMATCH', 'currentPassword is wrong');
      }
      if (input.newPassword === input.currentPassword) throw new GatewayError('WEAK_PASSWORD', 'newPassword must differ from currentPassword');
      throttle.succeed(source, principal.username);
      await users.updateUser({ ...user, passwordHash: await hashPassword(input.newPassword, deps.passwordCost), tokenVersion: user.tokenVersion + 1, updatedAt: ctx.now() });
      return { username: user.username, reloginRequired: true };
    },
  });

  define({
    path: '/api/security/users',
    method: 'GET',
    summary: 'Every user with role and authorised API list (administrators only).',
    tags: ['security'],
    input: z.object({}).strict(),
    handler: () => users.listUsers().map((u) => publicUser(u, users)),
  });

  define({
    path: '/api/security/user/add',
    method: 'POST',
    summary: 'Adds a user (administrators only).',
    tags: ['security'],
    input: z.object({ username, password, isAdmin: z.boolean().default(false), authorizedApis: z.array(z.string()).default([]) }).strict(),
    handler: async (input) => {
      checkApiList(ctx, input.authorizedApis);
      const now = ctx.now();
      const user = await users.createUser({
        username: input.username,
        passwordHash: await hashPassword(input.password, deps.passwordCost),
        isAdmin: input.isAdmin,
        authorizedApis: input.authorizedApis,
        createdAt: now,
        updatedAt: now,
      });
      return publicUser(user, users);
    },
  });

  define({
    path: '/api/security/user/update',
    method: 'POST',
    summary: 'Changes a user’s password, role or authorised API list (administrators only). A new password invalidates the user’s JWTs.',
    tags: ['security'],
    input: z.object({ username, password: password.optional(), isAdmin: z.boolean().optional(), authorizedApis: z.array(z.string()).optional() }).strict(),
    handler: async (input) => {
      const user = users.getUser(input.username);
      if (input.authorizedApis) checkApiList(ctx, input.authorizedApis);
      if (user.isAdmin && input.isAdmin === false && adminCount(users) === 1) {
        throw new GatewayError('INVALID_PARAMETER', `isAdmin: '${user.username}' is the last administrator and must stay one`);
      }
      const updated = await users.updateUser({
        ...user,
        ...(input.password ? { passwordHash: await hashPassword(input.password, deps.passwordCost), tokenVersion: user.tokenVersion + 1 } : {}),
        ...(input.isAdmin !== undefined ? { isAdmin: input.isAdmin } : {}),
        ...(input.authorizedApis ? { authorizedApis: input.authorizedApis } : {}),
        updatedAt: ctx.now(),
      });
      return publicUser(updated, users);
    },
  });

  define({
    path: '/api/security/user/delete',
    method: 'POST',
    summary: 'Deletes a user and their secret keys (administrators only). The last administrator cannot be deleted.',
    tags: ['security'],
    input: z.object({ username }).strict(),
    handler: async (input) => {
      const user = users.getUser(input.username);
      if (user.isAdmin && adminCount(users) === 1) throw new GatewayError('INVALID_PARAMETER', `username: '${user.username}' is the last administrator`);
      await users.deleteUser(input.username);
      return { username: input.username, deleted: true };
    },
  });

  define({
    path: '/api/security/secret-keys',
    method: 'GET',
    summary: 'Every secret key, without its secret (administrators only).',
    tags: ['security'],
    input: z.object({}).strict(),
    handler: () =>
      users.listKeys().map((k) => ({ id: k.id, username: k.username, label: k.label, createdAt: k.createdAt, revokedAt: k.revokedAt, lastUsedAt: k.lastUsedAt })),
  });

  define({
    path: '/api/security/secret-key/create',
    method: 'POST',
    summary: 'Creates a secret key for a user (administrators only). The key is shown in this response only; it is valid until revoked.',
    tags: ['security'],
    input: z.object({ username, label: z.string().max(128).default('') }).strict(),
    handler: async (input) => {
      const owner = users.getUser(input.username);
      const created = createSecretKey();
      await users.addKey({ id: created.id, accountId: owner.accountId, username: input.username, keyHash: created.hash, label: input.label, createdAt: ctx.now(), revokedAt: null, lastUsedAt: null });
      return { id: created.id, username: input.username, label: input.label, key: created.key };
    },
  });

  define({
    path: '/api/security/secret-key/revoke',
    method: 'POST',
    summary: 'Revokes a secret key (administrators only); it stops working at once.',
    tags: ['security'],
    input: z.object({ id: z.string().min(1) }).strict(),
    handler: async (input) => {
      const key = await users.revokeKey(input.id, ctx.now());
      return { id: key.id, revokedAt: key.revokedAt };
    },
  });

  define({
    path: '/api/security/settings',
    method: 'GET',
    summary: 'Security control and the IP white list (administrators only).',
    tags: ['security'],
    input: z.object({}).strict(),
    handler: () => users.settings,
  });

  define({
    path: '/api/security/settings/update',
    method: 'POST',
    summary: 'Turns security control and the IP white list on or off and sets the list (administrators only). JWT-authenticated requests stay exempt from the list, so an administrator cannot lock themselves out.',
    tags: ['security'],
    input: z
      .object({ securityControl: z.boolean().optional(), enableIpWhiteList: z.boolean().optional(), ipWhiteList: z.array(z.string()).max(1000).optional() })
      .strict(),
    handler: async (input) => {
      const problems: string[] = [];
      (input.ipWhiteList ?? []).forEach((entry, i) => {
        try {
          parseWhiteListEntry(entry);
        } catch (err) {
          problems.push(`ipWhiteList[${i}]: ${(err as Error).message}`);
        }
      });
      if (problems.length) throw new GatewayError('INVALID_PARAMETER', problems.join('; '));
      const next = { ...users.settings, ...input };
      await users.saveSettings(next);
      policy.reload();
      // A setting the config file writes returns to the file's value at the next start: say so now.
      const managed = configManagedSettings({ writes: deps.configWrites }).filter((key) => key in input);
      return managed.length
        ? { ...next, configManaged: managed.map((key) => SETTING_PATHS[key]), warning: `the config file sets ${managed.map((key) => SETTING_PATHS[key]).join(', ')}; the next start applies the file's value again — change the file to keep this` }
        : next;
    },
  });
}

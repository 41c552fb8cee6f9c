/** The user administration (administrators only): /api/security/users, /api/security/user/{add,update,delete}. */
import { SECURITY } from '../../../core/roles/gateway/contract/security.js';
import { GatewayError } from '../../../core/interfaces/errors.js';
import type { GatewayContext } from '../../../core/roles/gateway/context.js';
import { hashPassword } from '../../../core/auth/passwords.js';
import { isAdminOnly } from '../access-policy.js';
import type { User, UserStore } from '../user-store.js';
import type { AuthDeps } from './deps.js';

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

function adminCount(users: UserStore): number {
  return users.listUsers().filter((u) => u.isAdmin).length;
}

/** Listing, adding, changing and deleting users; the last administrator stays one. */
export function defineUserInterfaces(deps: AuthDeps): void {
  const { ctx, users } = deps;
  const implement = ctx.interfaces.implement.bind(ctx.interfaces);

  implement(SECURITY.users, {
    handler: () => users.listUsers().map((u) => publicUser(u, users)),
  });

  implement(SECURITY.addUser, {
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

  implement(SECURITY.updateUser, {
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

  implement(SECURITY.deleteUser, {
    handler: async (input) => {
      const user = users.getUser(input.username);
      if (user.isAdmin && adminCount(users) === 1) throw new GatewayError('INVALID_PARAMETER', `username: '${user.username}' is the last administrator`);
      await users.deleteUser(input.username);
      return { username: input.username, deleted: true as const };
    },
  });
}

/** Logging in and changing one's own password: /api/auth/login, /api/auth/change-password. */
import { SECURITY } from '../../../core/roles/gateway/contract/security.js';
import { GatewayError } from '../../../core/interfaces/errors.js';
import type { CallContext } from '../../../core/interfaces/registry.js';
import { hashPassword, isPasswordHash, needsRehash, verifyPassword } from '../../../core/auth/passwords.js';
import { signJwt } from '../tokens.js';
import type { User } from '../user-store.js';
import type { AuthDeps } from './deps.js';

function throttleSource(call: CallContext): string {
  return call.sourceIp ?? 'internal';
}

function checkThrottle(deps: AuthDeps, source: string, name: string): void {
  const wait = deps.throttle.retryAfterSec(source, name, deps.ctx.now());
  if (wait > 0) throw new GatewayError('TOO_MANY_REQUESTS', `too many failed attempts; retry in ${wait} s`, { retryAfterSec: wait });
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

/** The login and the change of one's own password, both throttled per source and user. */
export function defineLoginInterfaces(deps: AuthDeps): void {
  const { ctx, users, throttle } = deps;
  const implement = ctx.interfaces.implement.bind(ctx.interfaces);

  implement(SECURITY.login, {
    handler: async (input, call) => {
      const source = throttleSource(call);
      checkThrottle(deps, source, input.username);
      const user = users.findUser(input.username);
      // A user without a password (one made by a sign-in through the provider) costs a verification too: the answer's time tells nothing.
      const hashed = user !== undefined && isPasswordHash(user.passwordHash);
      const ok = (await verifyPassword(input.password, hashed ? user.passwordHash : await deps.dummyHash())) && hashed;
      if (!user || !ok) {
        throttle.fail(source, input.username, ctx.now());
        throw new GatewayError('PASSWORD_MISMATCH');
      }
      throttle.succeed(source, input.username);
      await rehashIfCheaper(deps, user, input.password);
      return { token: await signJwt(deps.signingKey, { username: user.username, accountId: user.accountId, tokenVersion: user.tokenVersion }, ctx.now()) };
    },
  });

  implement(SECURITY.changePassword, {
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
      return { username: user.username, reloginRequired: true as const };
    },
  });
}

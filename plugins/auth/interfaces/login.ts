/** Logging in and changing one's own password: /api/auth/login, /api/auth/change-password. */
import { z } from 'zod';
import { GatewayError } from '../../../core/errors.js';
import type { CallContext } from '../../../core/interfaces.js';
import { hashPassword, isPasswordHash, needsRehash, verifyPassword } from '../../../core/auth/passwords.js';
import { signJwt } from '../tokens.js';
import type { User } from '../user-store.js';
import type { AuthDeps } from './deps.js';
import { password } from './fields.js';

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
}

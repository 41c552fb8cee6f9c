/**
 * Accounts of the program service: users with roles and library scopes,
 * server-side sessions behind an HttpOnly cookie with a CSRF token, service
 * tokens `pvs_<id>_<secret>` shown once and stored hashed, login throttling,
 * and the first administrator (PROGRAMS_ADMIN_PASSWORD, else ADMIN_PASSWORD,
 * else the process's shared first-start password, else a generated password
 * shown once at start: core/auth/first-admin.ts), and sign-in through the
 * plant's OpenID Connect provider (`programs.oidc`, ./sso/). docs/programs-access.md,
 * docs/identity.md.
 */
import { generatePassword, hashPassword, PASSWORD_COST, type ScryptCost } from '../../core/auth/passwords.js';
import { firstAdminLine, firstAdminPassword, passwordFromEnv } from '../../core/auth/first-admin.js';
import { SqlLoginThrottle } from '../../core/auth/login-throttle-sql.js';
import { definePlugin } from '../../core/runtime/plugin-host.js';
import type { ProgramsContext } from '../../core/roles/programs/context.js';
import { AccountsAuthenticator } from './authenticator.js';
import { RefusalAudit } from './refusal-audit.js';
import { accountOperations } from './operations.js';
import { SESSION_ABSOLUTE_MS, SESSION_IDLE_MS } from '../../core/auth/sessions.js';
import { newId } from '../../core/rest/ids.js';
import { AccountStore, LOGIN_THROTTLE_TABLE, MIGRATIONS } from './store.js';
import { accountGrants } from './within.js';
import { auditActor, SYSTEM_ACTOR } from '../../core/rest/principal.js';
import { ACCOUNTS_CONFIG, type AccountsFields } from './sso/config.js';
import { openProgramsSso } from './sso/index.js';
import { serveNoOidc } from '../../core/auth/oidc-routes.js';

export const ADMIN_PASSWORD_ENV = 'PROGRAMS_ADMIN_PASSWORD';
/** Expired sessions are deleted this often. */
const SESSION_SWEEP_MS = 10 * 60_000;
/** Held while the first administrator is made, so instances starting together on one database make one. */
const FIRST_ADMIN_LOCK = 'accounts-first-admin';

export function createAccountsPlugin(options: { passwordCost?: ScryptCost } = {}) {
  const passwordCost = options.passwordCost ?? PASSWORD_COST;
  return definePlugin<ProgramsContext, AccountsFields>({
    name: 'accounts',
    config: [ACCOUNTS_CONFIG],
    migrations: MIGRATIONS,
    async register(ctx) {
      const store = new AccountStore(ctx.db);
      // A variable that is set must be usable, also at a later start (core/auth/first-admin.ts names the order).
      passwordFromEnv(ctx.env, ADMIN_PASSWORD_ENV);
      if ((await store.countUsers()) === 0) {
        const first = firstAdminPassword(ctx.env, { role: 'programs', username: 'admin', roleVariable: ADMIN_PASSWORD_ENV, shared: ctx.sharedFirstPassword });
        const password = first.password;
        const now = ctx.now();
        const user = { id: newId('usr'), username: 'admin', passwordHash: await hashPassword(password, passwordCost), role: 'admin' as const, scopes: { libraries: '*' as const, machineGroups: '*' as const }, disabled: false, createdAt: now, updatedAt: now };
        // Instances starting together on one database: the first to hold the lock makes the administrator, the others find it.
        const created = await ctx.db.write(async (tx) => {
          await tx.lock(FIRST_ADMIN_LOCK);
          if ((await tx.get<{ n: number }>('SELECT COUNT(*) AS n FROM accounts_users'))?.n !== 0) return false;
          await store.insertUser(tx, user);
          await ctx.audit.append(tx, { ...SYSTEM_ACTOR, category: 'admin', action: 'user.create', entityType: 'user', entityId: user.id, details: { username: 'admin', role: 'admin', firstStart: true } });
          return true;
        }, { transaction: true });
        if (created) {
          ctx.logger.info({ username: 'admin' }, 'first administrator created');
          ctx.announcements.push(
            firstAdminLine('admin', first, '/api/v1/auth/change-password'),
            `log in:         POST /api/v1/auth/login {"username","password"} → session cookie and csrfToken`,
          );
        }
      }
      const refusals = new RefusalAudit(ctx.db, ctx.audit, ctx.now);
      // Sign-in through the provider (programs.oidc) is read from the file at each start; its client secret is never stored.
      const sso = ctx.settings.oidc ? openProgramsSso(ctx, store, refusals, ctx.settings.oidc) : undefined;
      if (sso) ctx.announcements.push(sso.announcement);
      else serveNoOidc(ctx.http);
      ctx.rest.setAuthenticator(new AccountsAuthenticator(store, refusals, ctx.now, ctx.secure, sso?.accessTokens));
      ctx.services.provide('accounts.grants', accountGrants(store));
      // A caller refused for its role or a missing operator: audited, once a minute per caller and operation.
      ctx.rest.onRefusal(({ principal, operation, slug, request }) =>
        refusals.record(`refused:${principal.id}:${operation.operationId}`, {
          ...auditActor(principal), category: 'auth',
          action: slug === 'operator-required' ? 'operator.missing' : 'access.refused', entityType: principal.kind, entityId: principal.id,
          details: { operation: `${operation.method} ${operation.path}`, permission: operation.permission, sourceIp: request.sourceIp.slice(0, 64) },
        }),
      );
      const dummyHash = await hashPassword(generatePassword(), passwordCost);
      // Failed sign-ins are counted in the database, so every instance on it sees them (docs/security.md, "Login throttling").
      const throttle = new SqlLoginThrottle(ctx.db, LOGIN_THROTTLE_TABLE);
      for (const op of accountOperations({ ctx, store, throttle, passwordCost, dummyHash })) ctx.rest.define(op);
      const sweep = setInterval(() => {
        const now = ctx.now();
        store.expireSessions(now - SESSION_IDLE_MS, now - SESSION_ABSOLUTE_MS).catch((err: unknown) => ctx.logger.warn({ err }, 'expired sessions not deleted'));
        throttle.prune(now).catch((err: unknown) => ctx.logger.warn({ err }, 'expired sign-in failures not deleted'));
      }, SESSION_SWEEP_MS);
      sweep.unref();
      return { stop: () => clearInterval(sweep) };
    },
  });
}

export const accountsPlugin = createAccountsPlugin();

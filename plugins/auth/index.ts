/**
 * Authentication and access control: users with scrypt-hashed passwords,
 * JWT login (HS256, 24 h), secret keys, security control, authorised API
 * lists and the IP white list. Installs its policy as the interface
 * registry's AccessPolicy, so HTTP and MCP are checked the same way.
 */
import { JWT_SIGNING_KEY_FILE } from '../../core/auth/jwt.js';
import { definePlugin } from '../../core/runtime/plugin-host.js';
import type { GatewayContext } from '../../core/roles/gateway/context.js';
import { GatewayAccessPolicy } from './access-policy.js';
import { AUTH_CONFIG, type AuthFields } from './config.js';
import { applyConfigSettings } from './config-settings.js';
import { defineAuthInterfaces } from './interfaces/index.js';
import { LoginThrottle } from '../../core/auth/login-throttle.js';
import { generatePassword, hashPassword, PASSWORD_COST, type ScryptCost } from '../../core/auth/passwords.js';
import { GATEWAY_ADMIN_PASSWORD_ENV } from './admin-password.js';
import { firstAdminLine, firstAdminPassword } from '../../core/auth/first-admin.js';
import { loadSigningKey } from './tokens.js';
import { resetAdminPasswordCommand } from './reset-command.js';
import { ADMIN_USERNAME, UserStore } from './user-store.js';
import { openGatewaySso, SSO_MIGRATIONS } from './sso/index.js';
import { serveNoOidc } from '../../core/auth/oidc-routes.js';

export { ADMIN_USERNAME } from './user-store.js';

/** Options of the auth plugin; the gateway itself (`authPlugin`) uses none. */
export interface AuthPluginOptions {
  /**
   * The scrypt cost of new password hashes. Only the test fixture lowers it (hundreds of test gateways
   * each hash passwords); it is not reachable from the config file or the environment, so production
   * always hashes at PASSWORD_COST.
   */
  passwordCost?: ScryptCost;
}

/** The auth plugin with the given options. */
export function createAuthPlugin(options: AuthPluginOptions = {}) {
  const passwordCost = options.passwordCost ?? PASSWORD_COST;
  return definePlugin<GatewayContext, AuthFields>({
    name: 'auth',
    config: AUTH_CONFIG,
    migrations: SSO_MIGRATIONS,
    commands: [resetAdminPasswordCommand],
    keeps: { files: [JWT_SIGNING_KEY_FILE] },
    async register(ctx) {
      // Sign-in through a provider is read from the file at each start and never stored with the security settings.
      const { oidc, ...security } = ctx.settings;
      const users = await UserStore.open(ctx.db, security);
      const inFile = { settings: security, writes: ctx.configWrites, file: ctx.configFile };
      ctx.announcements.push(...(await applyConfigSettings(users, inFile, ctx.logger)));
      if (users.userCount() === 0) {
        const first = firstAdminPassword(ctx.env, { role: 'gateway', username: ADMIN_USERNAME, roleVariable: GATEWAY_ADMIN_PASSWORD_ENV, shared: ctx.sharedFirstPassword });
        const now = ctx.now();
        await users.createUser({
          username: ADMIN_USERNAME,
          passwordHash: await hashPassword(first.password, passwordCost),
          isAdmin: true,
          authorizedApis: [],
          createdAt: now,
          updatedAt: now,
        });
        ctx.announcements.push(firstAdminLine(ADMIN_USERNAME, first, '/api/auth/change-password'));
        ctx.logger.info({ username: ADMIN_USERNAME }, 'first administrator created');
      }
      const signingKey = loadSigningKey(ctx.dataDir);
      const sso = oidc ? await openGatewaySso({ http: ctx.http, db: ctx.db, users, signingKey, env: ctx.env, now: ctx.now, logger: ctx.logger }, oidc) : undefined;
      if (!sso) serveNoOidc(ctx.http);
      const policy = new GatewayAccessPolicy(users, signingKey, ctx.now, sso?.sessions);
      ctx.interfaces.setAccessPolicy(policy);
      // Computed at the first login of an unknown user, not at start-up: at 0.65 s a hash, every start
      // (and every test gateway) would pay for it. Only that first unknown-user login takes longer.
      let dummy: Promise<string> | undefined;
      const dummyHash = () => (dummy ??= hashPassword(generatePassword(), passwordCost));
      defineAuthInterfaces({ ctx, users, policy, throttle: new LoginThrottle(), signingKey, passwordCost, dummyHash, configWrites: ctx.configWrites });
      const s = users.settings;
      ctx.announcements.push(
        s.securityControl
          ? `log in:         POST /api/auth/login {"username","password"} → {"token": ...}; then Authorization: Bearer <token>`
          : 'security control is OFF: /api needs no credentials',
      );
      if (s.enableIpWhiteList) ctx.announcements.push(`IP white list:  on (${s.ipWhiteList.length} entries)`);
      if (sso) ctx.announcements.push(sso.announcement);
    },
  });
}

export const authPlugin = createAuthPlugin();

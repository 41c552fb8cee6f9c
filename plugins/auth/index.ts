/**
 * Authentication and access control: users with scrypt-hashed passwords,
 * JWT login (HS256, 24 h), secret keys, security control, authorised API
 * lists and the IP white list. Installs its policy as the interface
 * registry's AccessPolicy, so HTTP and MCP are checked the same way.
 */
import { definePlugin } from '../../core/plugin-host.js';
import type { GatewayContext } from '../../core/context.js';
import { GatewayAccessPolicy } from './access-policy.js';
import { defineAuthInterfaces } from './interfaces.js';
import { LoginThrottle } from './login-throttle.js';
import { generatePassword, hashPassword, MIN_PASSWORD_LENGTH } from './passwords.js';
import { loadSigningKey } from './tokens.js';
import { UserStore } from './user-store.js';

export const ADMIN_USERNAME = 'admin';

export const authPlugin = definePlugin<GatewayContext>({
  name: 'auth',
  async register(ctx) {
    const users = await UserStore.open(ctx.db, {
      securityControl: ctx.config.security.securityControl,
      enableIpWhiteList: ctx.config.communication.enableIpWhiteList,
      ipWhiteList: ctx.config.communication.ipWhiteList,
    });
    if (users.userCount() === 0) {
      const fromEnv = ctx.env.GATEWAY_ADMIN_PASSWORD;
      if (fromEnv !== undefined && fromEnv.length < MIN_PASSWORD_LENGTH) {
        throw new Error(`GATEWAY_ADMIN_PASSWORD must have at least ${MIN_PASSWORD_LENGTH} characters`);
      }
      const password = fromEnv || generatePassword();
      const now = ctx.now();
      await users.createUser({
        username: ADMIN_USERNAME,
        passwordHash: await hashPassword(password),
        isAdmin: true,
        authorizedApis: [],
        tokenVersion: 1,
        createdAt: now,
        updatedAt: now,
      });
      ctx.announcements.push(
        fromEnv
          ? `administrator:  '${ADMIN_USERNAME}', password from GATEWAY_ADMIN_PASSWORD`
          : `administrator:  '${ADMIN_USERNAME}', password ${password}  (shown once; change it with POST /api/auth/change-password)`,
      );
      ctx.logger.info({ username: ADMIN_USERNAME }, 'first administrator created');
    }
    const signingKey = loadSigningKey(ctx.dataDir);
    const policy = new GatewayAccessPolicy(users, signingKey, ctx.now);
    ctx.interfaces.setAccessPolicy(policy);
    defineAuthInterfaces({ ctx, users, policy, throttle: new LoginThrottle(), signingKey, dummyHash: await hashPassword(generatePassword()) });
    const s = users.settings;
    ctx.announcements.push(
      s.securityControl
        ? `log in:         POST /api/auth/login {"username","password"} → {"token": ...}; then Authorization: Bearer <token>`
        : 'security control is OFF: /api needs no credentials',
    );
    if (s.enableIpWhiteList) ctx.announcements.push(`IP white list:  on (${s.ipWhiteList.length} entries)`);
  },
});

/** The gateway's administrator password from the environment, never from a file. */
import { passwordFromVariable } from '../../core/auth/first-admin.js';

/** The gateway's own variable: wins over ADMIN_PASSWORD at first start (core/auth/first-admin.ts), and is the new password of `npm run reset-admin-password`. */
export const GATEWAY_ADMIN_PASSWORD_ENV = 'GATEWAY_ADMIN_PASSWORD';

/** GATEWAY_ADMIN_PASSWORD when set (non-empty); throws when it is shorter than the minimum. */
export function adminPasswordFromEnv(env: NodeJS.ProcessEnv): string | undefined {
  return passwordFromVariable(env, GATEWAY_ADMIN_PASSWORD_ENV);
}

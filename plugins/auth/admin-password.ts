/** The first administrator's password from the environment, never from a file. */
import { MIN_PASSWORD_LENGTH } from '../../core/auth/passwords.js';

/** GATEWAY_ADMIN_PASSWORD when set (non-empty); throws when it is shorter than the minimum. */
export function adminPasswordFromEnv(env: NodeJS.ProcessEnv): string | undefined {
  const fromEnv = env.GATEWAY_ADMIN_PASSWORD;
  if (fromEnv === undefined || fromEnv === '') return undefined;
  if (fromEnv.length < MIN_PASSWORD_LENGTH) throw new Error(`GATEWAY_ADMIN_PASSWORD must have at least ${MIN_PASSWORD_LENGTH} characters`);
  return fromEnv;
}

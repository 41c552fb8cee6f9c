/** What the authentication and security-administration interfaces (./index.ts) work with. */
import type { Logger } from 'pino';
import type { LoginThrottle } from '../../../core/auth/login-throttle.js';
import type { ScryptCost } from '../../../core/auth/passwords.js';
import type { GatewayContext } from '../../../core/roles/gateway/context.js';
import type { GatewayAccessPolicy } from '../access-policy.js';
import type { UserStore } from '../user-store.js';

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

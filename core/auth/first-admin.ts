/**
 * The first administrator's password of a role with users (the gateway's
 * auth plugin, the program service's accounts plugin), at the role's first
 * start, in this order:
 *
 * 1. the role's own variable (`GATEWAY_ADMIN_PASSWORD`, `PROGRAMS_ADMIN_PASSWORD`);
 * 2. `ADMIN_PASSWORD`, for every role that has an administrator;
 * 3. the password the process generated for all of its roles together
 *    (`SharedFirstPassword`: only when two or more such roles start in one
 *    process; core/runtime/role.ts `startRoles`), printed once at the end of the banner;
 * 4. a password the role generates for itself, printed in its own section.
 *
 * Only the first password is shared: each role keeps its own user store, and
 * a later change of one administrator's password leaves the other's as it is.
 */
import { generatePassword, MIN_PASSWORD_LENGTH } from './passwords.js';

/** The variable that sets the first administrator's password of every role. */
export const SHARED_ADMIN_PASSWORD_ENV = 'ADMIN_PASSWORD';

/** A first-start password one process generated for the administrators of all its roles; shown once, never logged. */
export class SharedFirstPassword {
  readonly password = generatePassword();
  private readonly takers = new Map<string, string>();

  /** The password, for the first administrator `username` of `role`; the banner then names that role's login. */
  take(role: string, username: string): string {
    this.takers.set(role, username);
    return this.password;
  }

  /** The roles whose first administrator took it, with the user name. */
  takenBy(): ReadonlyMap<string, string> {
    return this.takers;
  }
}

/** A role's first administrator password and where it came from. */
export interface FirstAdminPassword {
  password: string;
  /** The variable that set it, or 'shared' (the process's, printed once at the end of the banner) or 'generated' (the role's own, to show once). */
  source: string;
}

/** The variable `name` when set (non-empty); throws naming it when it is shorter than the minimum. */
export function passwordFromVariable(env: NodeJS.ProcessEnv, name: string): string | undefined {
  const value = env[name];
  if (value === undefined || value === '') return undefined;
  if (value.length < MIN_PASSWORD_LENGTH) throw new Error(`${name} must have at least ${MIN_PASSWORD_LENGTH} characters`);
  return value;
}

/** The variables that set a role's first administrator password, in the order they win; checked even when the role has users. */
export function passwordFromEnv(env: NodeJS.ProcessEnv, roleVariable: string): FirstAdminPassword | undefined {
  for (const name of [roleVariable, SHARED_ADMIN_PASSWORD_ENV]) {
    const password = passwordFromVariable(env, name);
    if (password !== undefined) return { password, source: name };
  }
  return undefined;
}

/** Where the first administrator of `role` gets its password (the order of this file's comment). */
export function firstAdminPassword(
  env: NodeJS.ProcessEnv,
  at: { role: string; username: string; roleVariable: string; shared?: SharedFirstPassword | undefined },
): FirstAdminPassword {
  const set = passwordFromEnv(env, at.roleVariable);
  if (set) return set;
  if (at.shared) return { password: at.shared.take(at.role, at.username), source: 'shared' };
  return { password: generatePassword(), source: 'generated' };
}

/** The banner line about a new first administrator: where its password came from, or the generated password itself (shown once; `changePath` changes it). */
export function firstAdminLine(username: string, first: FirstAdminPassword, changePath: string): string {
  const who = `administrator:  '${username}', password`;
  if (first.source === 'generated') return `${who} ${first.password}  (shown once; change it with POST ${changePath})`;
  if (first.source === 'shared') return `${who}: the first-start password printed at the end`;
  return `${who} from ${first.source}`;
}

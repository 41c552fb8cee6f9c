/**
 * Gateway users of people who sign in through the provider: the mapping of
 * their claims to a role (`security.oidc.roles`, `.authorizedApis`), and the
 * user made at their first sign-in and updated at each one after. The user
 * is found by the provider's issuer and subject (`auth_sso_links`), never by
 * name: a local user whose name the provider's user name equals is not
 * taken over (the sign-in is refused, naming the clash).
 */
import { claimValues, matchingEntries } from '../../../core/auth/oidc-claims.js';
import type { SqlDatabase } from '../../../core/store/database.js';
import type { User, UserStore } from '../user-store.js';
import type { GatewayOidcSettings } from './config.js';

/** Stored as the password hash of a user made by a sign-in through the provider: no password matches it, so only the provider signs them in (until an administrator gives them one). */
export const NO_PASSWORD = '!oidc';

/** What a person's claims give them on the gateway. */
export interface GatewayGrant {
  isAdmin: boolean;
  authorizedApis: string[];
}

/** The grant of `claims` under the mapping; null when no value of the roles claim is mapped (no access). */
export function gatewayGrant(claims: Record<string, unknown>, settings: GatewayOidcSettings): GatewayGrant | null {
  const values = claimValues(claims, settings.rolesClaim);
  const roles = matchingEntries(settings.roles, values);
  if (roles.length === 0) return null;
  if (roles.some(([, role]) => role === 'admin')) return { isAdmin: true, authorizedApis: [] };
  const apis = new Set<string>();
  for (const [, list] of matchingEntries(settings.authorizedApis, values)) for (const entry of list) apis.add(entry);
  return { isAdmin: false, authorizedApis: [...apis].sort() };
}

/** The role as the log of security events names it: `admin`, or `user` with the list. */
export function roleText(g: GatewayGrant): string {
  return g.isAdmin ? 'admin' : `user [${g.authorizedApis.join(', ')}]`;
}

/** A sign-in's outcome: the user (made now or updated), or the name that is another account's. */
export type SsoUserResult = { user: User; created: boolean; previous: GatewayGrant | null; kept?: string } | { taken: string };

/** The profile a sign-in brings. */
export interface SsoProfile {
  issuer: string;
  subject: string;
  username: string;
  email: string | undefined;
  name: string | undefined;
}

export class SsoAccounts {
  constructor(
    private readonly db: SqlDatabase,
    private readonly users: UserStore,
  ) {}

  /** The user of `profile`, made or updated with `grant`. */
  async signIn(profile: SsoProfile, grant: GatewayGrant, now: number): Promise<SsoUserResult> {
    const link = await this.db.get<{ account_id: string }>('SELECT account_id FROM auth_sso_links WHERE issuer = ? AND subject = ?', [profile.issuer, profile.subject]);
    const existing = link ? this.users.listUsers().find((u) => u.accountId === link.account_id) : undefined;
    if (existing) return this.update(existing, profile, grant, now);
    if (this.users.findUser(profile.username)) return { taken: profile.username };
    const user = await this.users.createUser({ username: profile.username, passwordHash: NO_PASSWORD, ...grant, createdAt: now, updatedAt: now });
    await this.db.write((tx) =>
      tx.run('INSERT OR REPLACE INTO auth_sso_links (issuer, subject, account_id, email, name) VALUES (?, ?, ?, ?, ?)', [profile.issuer, profile.subject, user.accountId, profile.email ?? null, profile.name ?? null]),
    );
    return { user, created: true, previous: null };
  }

  private async update(user: User, profile: SsoProfile, grant: GatewayGrant, now: number): Promise<SsoUserResult> {
    await this.db.write((tx) => tx.run('UPDATE auth_sso_links SET email = ?, name = ? WHERE issuer = ? AND subject = ?', [profile.email ?? null, profile.name ?? null, profile.issuer, profile.subject]));
    const previous = { isAdmin: user.isAdmin, authorizedApis: user.authorizedApis };
    let next = grant;
    let kept: string | undefined;
    // The last administrator stays one, as the user administration keeps it (an administrator must change the mapping or make another first).
    if (user.isAdmin && !grant.isAdmin && this.users.listUsers().filter((u) => u.isAdmin).length === 1) {
      next = previous;
      kept = 'the last administrator stays one';
    }
    if (roleText(previous) === roleText(next)) return { user, created: false, previous, ...(kept ? { kept } : {}) };
    const updated = await this.users.updateUser({ ...user, ...next, updatedAt: now });
    return { user: updated, created: false, previous, ...(kept ? { kept } : {}) };
  }
}

/**
 * Users and sessions of people who sign in through the provider. The user
 * is found by issuer and subject (`accounts_sso_links`), made at the first
 * sign-in and given, at each one, the role and scopes the claims map to;
 * each sign-in opens a session that records who the provider said it was
 * and when they authenticated there. Every change writes its audit record
 * in the same transaction as the change (docs/audit.md): the user made,
 * a change of role or scopes (with what it was), the sign-in, a signing-in
 * again for a signature, and the sessions a back-channel logout ended.
 */
import { newSession, type NewSession } from '../../../core/auth/sessions.js';
import { newId } from '../../../core/rest/ids.js';
import type { ProgramsContext } from '../../../core/roles/programs/context.js';
import type { WriteTx } from '../../../core/store/database.js';
import { userOf, type AccountStore, type UserRecord } from '../store.js';
import type { ProgramsGrant } from './grant.js';

/** The password hash of a user made by a sign-in through the provider: no password matches it (until an administrator sets one). */
export const NO_PASSWORD_HASH = '!oidc';

/** Held while a sign-in finds or makes its user, so two sign-ins of one person at once make one user. */
const SIGN_IN_LOCK = 'accounts-sso-sign-in';

/** Who signed in, as the provider and its claims say. */
export interface SsoProfile {
  issuer: string;
  subject: string;
  sid: string | null;
  /** Unix ms; null when the provider did not say. */
  authTime: number | null;
  username: string;
  email: string | undefined;
  name: string | undefined;
}

/** A sign-in's outcome: the user and the session opened, or why none was. */
export type SsoSignInResult =
  | { user: UserRecord; session: NewSession; created: boolean }
  | { taken: string }
  | { disabled: string };

const sameScopes = (a: UserRecord['scopes'], b: ProgramsGrant['scopes']) => JSON.stringify(a) === JSON.stringify(b);

export class SsoUsers {
  constructor(
    private readonly ctx: Pick<ProgramsContext, 'db' | 'audit' | 'now'>,
    private readonly store: AccountStore,
  ) {}

  /** Finds or makes the user of `profile`, gives it `grant`, and opens a session. */
  signIn(profile: SsoProfile, grant: ProgramsGrant, sourceIp: string): Promise<SsoSignInResult> {
    const now = this.ctx.now();
    const actor = { principalName: profile.username, authMethod: 'oidc', onBehalfOf: null };
    return this.ctx.db.write(async (tx): Promise<SsoSignInResult> => {
      await tx.lock(SIGN_IN_LOCK);
      const link = await tx.get<{ user_id: string }>('SELECT user_id FROM accounts_sso_links WHERE issuer = ? AND subject = ?', [profile.issuer, profile.subject]);
      const row = link ? await tx.get('SELECT * FROM accounts_users WHERE id = ?', [link.user_id]) : undefined;
      let user: UserRecord;
      let created = false;
      if (row) {
        user = userOf(row);
        if (user.disabled) return { disabled: user.username };
        user = await this.update(tx, user, profile, grant, now);
      } else {
        if (await tx.get('SELECT id FROM accounts_users WHERE username_key = ?', [profile.username.toLowerCase()])) return { taken: profile.username };
        user = { id: newId('usr'), username: profile.username, passwordHash: NO_PASSWORD_HASH, role: grant.role, scopes: grant.scopes, disabled: false, createdAt: now, updatedAt: now };
        await this.store.insertUser(tx, user);
        await tx.run('INSERT INTO accounts_sso_links (issuer, subject, user_id, email, name) VALUES (?, ?, ?, ?, ?)', [profile.issuer, profile.subject, user.id, profile.email ?? null, profile.name ?? null]);
        await this.ctx.audit.append(tx, {
          ...actor, principalName: user.username, category: 'admin', action: 'user.create', entityType: 'user', entityId: user.id,
          details: { username: user.username, role: user.role, scopes: user.scopes, via: 'identity provider', issuer: profile.issuer },
        });
        created = true;
      }
      const session = newSession();
      await this.store.insertSession(tx, {
        id: session.id, secretHash: session.secretHash, userId: user.id, createdAt: now, lastSeenAt: now,
        sso: { issuer: profile.issuer, subject: profile.subject, sid: profile.sid, authTime: profile.authTime },
      });
      await this.ctx.audit.append(tx, {
        ...actor, principalName: user.username, category: 'auth', action: 'login', entityType: 'user', entityId: user.id,
        details: { sourceIp: sourceIp.slice(0, 64), session: session.id, via: 'identity provider', issuer: profile.issuer, ...(profile.authTime !== null ? { authTime: new Date(profile.authTime).toISOString() } : {}) },
      });
      return { user, session, created };
    }, { transaction: true });
  }

  /** The user with the role and scopes of `grant`; a change is audited with what it was. */
  private async update(tx: WriteTx, user: UserRecord, profile: SsoProfile, grant: ProgramsGrant, now: number): Promise<UserRecord> {
    await tx.run('UPDATE accounts_sso_links SET email = ?, name = ? WHERE issuer = ? AND subject = ?', [profile.email ?? null, profile.name ?? null, profile.issuer, profile.subject]);
    if (user.role === grant.role && sameScopes(user.scopes, grant.scopes)) return user;
    const updated: UserRecord = { ...user, role: grant.role, scopes: grant.scopes, updatedAt: now };
    await this.store.updateUser(tx, updated);
    await this.ctx.audit.append(tx, {
      principalName: user.username, authMethod: 'oidc', onBehalfOf: null, category: 'admin', action: 'user.update', entityType: 'user', entityId: user.id,
      details: { via: 'identity provider', issuer: profile.issuer, from: { role: user.role, scopes: user.scopes }, to: { role: updated.role, scopes: updated.scopes } },
    });
    return updated;
  }

  /**
   * A signing-in again for a signature: the session `sessionId` of the same
   * person takes the new `auth_time`. False when the session is not one of
   * this person's through the provider.
   */
  async reauthenticated(sessionId: string, profile: SsoProfile): Promise<boolean> {
    const session = await this.store.session(sessionId);
    if (!session?.sso || session.sso.issuer !== profile.issuer || session.sso.subject !== profile.subject || profile.authTime === null) return false;
    const user = await this.store.userById(session.userId);
    await this.ctx.db.write(async (tx) => {
      await tx.run('UPDATE accounts_sessions SET auth_time = ?, sso_sid = ? WHERE id = ?', [profile.authTime, profile.sid ?? session.sso?.sid ?? null, sessionId]);
      await this.ctx.audit.append(tx, {
        principalName: user?.username ?? profile.username, authMethod: 'oidc', onBehalfOf: null, category: 'auth', action: 'reauthenticate', entityType: 'user', entityId: session.userId,
        details: { session: sessionId, via: 'identity provider', authTime: new Date(profile.authTime as number).toISOString() },
      });
    }, { transaction: true });
    return true;
  }

  /** Ends the sessions a back-channel logout names (the provider's session `sid`, else every one of `sub`); answers how many. */
  async endByProvider(issuer: string, logout: { sid?: string; sub?: string }): Promise<number> {
    const where = logout.sid ? `sso_sid = ?${logout.sub ? ' AND sso_subject = ?' : ''}` : 'sso_subject = ?';
    const params = logout.sid ? [logout.sid, ...(logout.sub ? [logout.sub] : [])] : [logout.sub as string];
    return this.ctx.db.write(async (tx) => {
      const rows = await tx.all<{ id: string; user_id: string; username: string }>(
        `SELECT s.id, s.user_id, u.username FROM accounts_sessions s JOIN accounts_users u ON u.id = s.user_id WHERE s.sso_issuer = ? AND ${where} ORDER BY s.id`,
        [issuer, ...params],
      );
      const byUser = new Map<string, { username: string; sessions: string[] }>();
      for (const r of rows) {
        await tx.run('DELETE FROM accounts_sessions WHERE id = ?', [r.id]);
        const entry = byUser.get(r.user_id) ?? { username: r.username, sessions: [] };
        entry.sessions.push(r.id);
        byUser.set(r.user_id, entry);
      }
      for (const [userId, { username, sessions }] of byUser) {
        await this.ctx.audit.append(tx, {
          principalName: username, authMethod: 'oidc', onBehalfOf: null, category: 'auth', action: 'logout', entityType: 'user', entityId: userId,
          details: { via: 'back-channel logout of the identity provider', sessionsEnded: sessions.length },
        });
      }
      return rows.length;
    }, { transaction: true });
  }
}

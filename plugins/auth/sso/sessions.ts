/**
 * The gateway's sessions opened by a sign-in through the provider. The
 * gateway's JWTs are otherwise checked without state; one from such a
 * sign-in carries its session's id (`sid`), and is accepted only while the
 * session is live, so a logout or the provider's back-channel logout ends it
 * at once. Kept in memory (a request never waits on the database) and in
 * `auth_sso_sessions`, so a restart keeps them.
 */
import { randomBytes } from 'node:crypto';
import type { SqlDatabase } from '../../../core/store/database.js';

/** A live session of a sign-in through the provider. */
export interface SsoSession {
  id: string;
  accountId: string;
  issuer: string;
  subject: string;
  /** The provider's session id (`sid`), which a back-channel logout may name. */
  providerSid: string | null;
  /** When the person authenticated at the provider, unix ms; null when it did not say. */
  authTime: number | null;
  createdAt: number;
  expiresAt: number;
}

type Row = { id: string; account_id: string; issuer: string; subject: string; provider_sid: string | null; auth_time: number | null; created_at: number; expires_at: number };

export class SsoSessions {
  private readonly live = new Map<string, SsoSession>();

  private constructor(private readonly db: SqlDatabase) {}

  /** Loads the sessions that have not expired (and deletes the others). */
  static async open(db: SqlDatabase, now: number): Promise<SsoSessions> {
    const store = new SsoSessions(db);
    await db.write((tx) => tx.run('DELETE FROM auth_sso_sessions WHERE expires_at <= ?', [now]));
    for (const r of await db.all<Row>('SELECT * FROM auth_sso_sessions')) {
      store.live.set(r.id, { id: r.id, accountId: r.account_id, issuer: r.issuer, subject: r.subject, providerSid: r.provider_sid, authTime: r.auth_time, createdAt: r.created_at, expiresAt: r.expires_at });
    }
    return store;
  }

  /** Opens a session; its id goes into the JWT. */
  async open(session: Omit<SsoSession, 'id'>): Promise<SsoSession> {
    const s: SsoSession = { ...session, id: `sso_${randomBytes(12).toString('hex')}` };
    await this.db.write((tx) =>
      tx.run('INSERT INTO auth_sso_sessions (id, account_id, issuer, subject, provider_sid, auth_time, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)', [
        s.id, s.accountId, s.issuer, s.subject, s.providerSid, s.authTime, s.createdAt, s.expiresAt,
      ]),
    );
    this.live.set(s.id, s);
    this.forgetExpired(s.createdAt);
    return s;
  }

  /** Whether the session is live and belongs to the account. */
  isLive(id: string, accountId: string, now: number): boolean {
    const s = this.live.get(id);
    return s !== undefined && s.accountId === accountId && s.expiresAt > now;
  }

  /** Ends one session (a logout); answers whether it was live. */
  async end(id: string): Promise<boolean> {
    if (!this.live.delete(id)) return false;
    await this.db.write((tx) => tx.run('DELETE FROM auth_sso_sessions WHERE id = ?', [id]));
    return true;
  }

  /** Ends the sessions a back-channel logout names: those of the provider's session `sid`, or every one of the subject `sub`; answers how many. */
  async endByProvider(issuer: string, logout: { sid?: string; sub?: string }): Promise<number> {
    const ended = [...this.live.values()].filter((s) => s.issuer === issuer && (logout.sid ? s.providerSid === logout.sid && (!logout.sub || s.subject === logout.sub) : s.subject === logout.sub));
    if (ended.length === 0) return 0;
    for (const s of ended) this.live.delete(s.id);
    await this.db.write(async (tx) => {
      for (const s of ended) await tx.run('DELETE FROM auth_sso_sessions WHERE id = ?', [s.id]);
    }, { transaction: true });
    return ended.length;
  }

  /** Drops expired sessions from memory and the table, at most once a minute. */
  private lastSweep = 0;
  private forgetExpired(now: number): void {
    if (now - this.lastSweep < 60_000) return;
    this.lastSweep = now;
    for (const [id, s] of this.live) if (s.expiresAt <= now) this.live.delete(id);
    void this.db.write((tx) => tx.run('DELETE FROM auth_sso_sessions WHERE expires_at <= ?', [now])).catch(() => undefined);
  }
}

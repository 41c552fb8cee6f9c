/**
 * Users, sessions and service tokens of the program service, behind one
 * repository with portable SQL. Secrets are never stored: a session keeps
 * the SHA-256 of its secret, a service token the SHA-256 of its secret part
 * (core/auth/bearer-tokens.ts), a user the scrypt hash of the password.
 */
import { numOrNull, strOrNull } from '../../core/store/row-values.js';
import type { Migration } from '../../core/store/migrations.js';
import type { SqlDatabase, WriteTx } from '../../core/store/database.js';
import type { LibraryScope } from '../../core/rest/operation.js';
import { parseScopes } from '../../core/rest/scopes.js';
import type { RoleName } from './roles.js';
import { loginThrottleTable } from '../../core/auth/login-throttle-sql.js';

/** Failed sign-ins per source address and user name, shared by every instance on the database (core/auth/login-throttle-sql.ts). */
export const LOGIN_THROTTLE_TABLE = 'accounts_login_failures';

export const MIGRATIONS: readonly Migration[] = [
  {
    id: 1,
    name: 'users, sessions, service tokens',
    up: [
      `CREATE TABLE accounts_users (
         id TEXT PRIMARY KEY,
         username TEXT NOT NULL,
         username_key TEXT NOT NULL UNIQUE,
         password_hash TEXT NOT NULL,
         role TEXT NOT NULL,
         scopes TEXT NOT NULL,
         disabled INTEGER NOT NULL DEFAULT 0,
         created_at BIGINT NOT NULL,
         updated_at BIGINT NOT NULL,
         password_changed_at BIGINT NOT NULL
       )`,
      `CREATE TABLE accounts_sessions (
         id TEXT PRIMARY KEY,
         secret_hash TEXT NOT NULL,
         user_id TEXT NOT NULL REFERENCES accounts_users(id),
         created_at BIGINT NOT NULL,
         last_seen_at BIGINT NOT NULL
       )`,
      'CREATE INDEX accounts_sessions_user ON accounts_sessions(user_id)',
      `CREATE TABLE accounts_tokens (
         id TEXT PRIMARY KEY,
         name TEXT NOT NULL,
         secret_hash TEXT NOT NULL,
         role TEXT NOT NULL,
         scopes TEXT NOT NULL,
         requires_operator INTEGER NOT NULL,
         expires_at BIGINT,
         last_used_at BIGINT,
         revoked_at BIGINT,
         created_by TEXT NOT NULL,
         created_at BIGINT NOT NULL
       )`,
    ],
  },
  {
    id: 2,
    name: 'service tokens owned by a user',
    up: async (tx) => {
      await tx.run('ALTER TABLE accounts_tokens ADD COLUMN owner_user_id TEXT');
      await tx.run('CREATE INDEX accounts_tokens_owner ON accounts_tokens(owner_user_id)');
      // A token made by a user before owners were recorded names that user in created_by; one made by a token stays without an owner.
      await tx.run('UPDATE accounts_tokens SET owner_user_id = (SELECT u.id FROM accounts_users u WHERE u.username = accounts_tokens.created_by)');
      // A disabled user's tokens kept working before; they stop now, and stay revoked if the user is enabled again.
      await tx.run('UPDATE accounts_tokens SET revoked_at = ? WHERE revoked_at IS NULL AND owner_user_id IN (SELECT id FROM accounts_users WHERE disabled = 1)', [Date.now()]);
    },
  },
  { id: 3, name: 'failed sign-ins counted in the database', up: loginThrottleTable(LOGIN_THROTTLE_TABLE) },
  {
    id: 4,
    name: 'sign-in through an OpenID Connect provider',
    up: [
      // Which user a person of the provider (issuer and subject) is; never found by name.
      `CREATE TABLE accounts_sso_links (
         issuer TEXT NOT NULL,
         subject TEXT NOT NULL,
         user_id TEXT NOT NULL REFERENCES accounts_users(id),
         email TEXT,
         name TEXT,
         PRIMARY KEY (issuer, subject)
       )`,
      // A session a sign-in through the provider opened: whose (for a back-channel logout) and when the person authenticated there (for approvals).
      'ALTER TABLE accounts_sessions ADD COLUMN sso_issuer TEXT',
      'ALTER TABLE accounts_sessions ADD COLUMN sso_subject TEXT',
      'ALTER TABLE accounts_sessions ADD COLUMN sso_sid TEXT',
      'ALTER TABLE accounts_sessions ADD COLUMN auth_time BIGINT',
      'CREATE INDEX accounts_sessions_sso ON accounts_sessions(sso_issuer, sso_subject)',
    ],
  },
];

export interface UserRecord {
  id: string;
  username: string;
  passwordHash: string;
  role: RoleName;
  scopes: { libraries: LibraryScope; machineGroups: LibraryScope };
  disabled: boolean;
  createdAt: number;
  updatedAt: number;
}

export interface SessionRecord {
  id: string;
  secretHash: string;
  userId: string;
  createdAt: number;
  lastSeenAt: number;
  /** A session opened by a sign-in through the identity provider. */
  sso?: SsoSessionFacts;
}

/** Who the provider says opened a session, and when they last authenticated there. */
export interface SsoSessionFacts {
  issuer: string;
  subject: string;
  /** The provider's session (`sid`), which a back-channel logout may name. */
  sid: string | null;
  /** Unix ms; null when the provider did not say. */
  authTime: number | null;
}

export interface TokenRecord {
  id: string;
  name: string;
  secretHash: string;
  role: RoleName;
  scopes: { libraries: LibraryScope; machineGroups: LibraryScope };
  requiresOperator: boolean;
  expiresAt: number | null;
  lastUsedAt: number | null;
  revokedAt: number | null;
  createdBy: string;
  /** The user on whose authority the token was made: its maker, or the owner of the token that made it; null when unknown (made before owners were recorded). */
  ownerUserId: string | null;
  createdAt: number;
}

type Row = Record<string, unknown>;


/** Stored scopes; a record from before machine-group scopes covers every group. */
const scopesOf = (text: unknown) => parseScopes(String(text));

/** A user from its row. */
export function userOf(row: Record<string, unknown>): UserRecord {
  return {
    id: String(row.id), username: String(row.username), passwordHash: String(row.password_hash), role: row.role as RoleName,
    scopes: scopesOf(row.scopes), disabled: Number(row.disabled) === 1, createdAt: Number(row.created_at), updatedAt: Number(row.updated_at),
  };
}

function tokenOf(row: Row): TokenRecord {
  return {
    id: String(row.id), name: String(row.name), secretHash: String(row.secret_hash), role: row.role as RoleName, scopes: scopesOf(row.scopes),
    requiresOperator: Number(row.requires_operator) === 1, expiresAt: numOrNull(row.expires_at), lastUsedAt: numOrNull(row.last_used_at),
    revokedAt: numOrNull(row.revoked_at), createdBy: String(row.created_by), ownerUserId: strOrNull(row.owner_user_id),
    createdAt: Number(row.created_at),
  };
}

export class AccountStore {
  constructor(private readonly db: SqlDatabase) {}

  async userByName(username: string): Promise<UserRecord | undefined> {
    const row = await this.db.get('SELECT * FROM accounts_users WHERE username_key = ?', [username.toLowerCase()]);
    return row ? userOf(row) : undefined;
  }

  async userById(id: string): Promise<UserRecord | undefined> {
    const row = await this.db.get('SELECT * FROM accounts_users WHERE id = ?', [id]);
    return row ? userOf(row) : undefined;
  }

  async countUsers(): Promise<number> {
    const row = await this.db.get<{ n: number }>('SELECT COUNT(*) AS n FROM accounts_users');
    return Number(row?.n ?? 0);
  }

  /** Users ordered by id, after `afterId`. */
  async listUsers(limit: number, afterId: string | null): Promise<UserRecord[]> {
    const rows = await this.db.all('SELECT * FROM accounts_users WHERE id > ? ORDER BY id LIMIT ?', [afterId ?? '', limit]);
    return rows.map(userOf);
  }

  async insertUser(tx: WriteTx, user: UserRecord): Promise<void> {
    await tx.run(
      `INSERT INTO accounts_users (id, username, username_key, password_hash, role, scopes, disabled, created_at, updated_at, password_changed_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      [user.id, user.username, user.username.toLowerCase(), user.passwordHash, user.role, JSON.stringify(user.scopes), user.disabled ? 1 : 0, user.createdAt, user.updatedAt, user.createdAt],
    );
  }

  /**
   * True when the user exists and is enabled, taking the user's row for the rest of the transaction (a no-op
   * UPDATE): a token made for this owner and the owner's disabling then never interleave, on SQLite or PostgreSQL.
   */
  async lockEnabledUser(tx: WriteTx, id: string): Promise<boolean> {
    const result = await tx.run('UPDATE accounts_users SET updated_at = updated_at WHERE id = ? AND disabled = 0', [id]);
    return result.changes === 1;
  }

  async updateUser(tx: WriteTx, user: UserRecord): Promise<void> {
    await tx.run('UPDATE accounts_users SET role = ?, scopes = ?, disabled = ?, updated_at = ? WHERE id = ?', [
      user.role, JSON.stringify(user.scopes), user.disabled ? 1 : 0, user.updatedAt, user.id,
    ]);
  }

  async setPasswordHash(tx: WriteTx, userId: string, hash: string, now: number): Promise<void> {
    await tx.run('UPDATE accounts_users SET password_hash = ?, password_changed_at = ?, updated_at = ? WHERE id = ?', [hash, now, now, userId]);
  }

  async insertSession(tx: WriteTx, session: SessionRecord): Promise<void> {
    const sso = session.sso;
    await tx.run('INSERT INTO accounts_sessions (id, secret_hash, user_id, created_at, last_seen_at, sso_issuer, sso_subject, sso_sid, auth_time) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)', [
      session.id, session.secretHash, session.userId, session.createdAt, session.lastSeenAt, sso?.issuer ?? null, sso?.subject ?? null, sso?.sid ?? null, sso?.authTime ?? null,
    ]);
  }

  async session(id: string): Promise<SessionRecord | undefined> {
    const row = await this.db.get('SELECT * FROM accounts_sessions WHERE id = ?', [id]);
    if (!row) return undefined;
    const sso = row.sso_issuer === null || row.sso_issuer === undefined
      ? undefined
      : { issuer: String(row.sso_issuer), subject: String(row.sso_subject), sid: strOrNull(row.sso_sid), authTime: numOrNull(row.auth_time) };
    return { id: String(row.id), secretHash: String(row.secret_hash), userId: String(row.user_id), createdAt: Number(row.created_at), lastSeenAt: Number(row.last_seen_at), ...(sso ? { sso } : {}) };
  }

  touchSession(id: string, now: number): Promise<unknown> {
    return this.db.write((tx) => tx.run('UPDATE accounts_sessions SET last_seen_at = ? WHERE id = ?', [now, id]));
  }

  async deleteSession(tx: WriteTx, id: string): Promise<void> {
    await tx.run('DELETE FROM accounts_sessions WHERE id = ?', [id]);
  }

  /** Ends every session of `userId` except `keepId`. */
  async deleteSessionsOf(tx: WriteTx, userId: string, keepId: string | null): Promise<number> {
    const result = await tx.run('DELETE FROM accounts_sessions WHERE user_id = ? AND id <> ?', [userId, keepId ?? '']);
    return result.changes;
  }

  /** Removes sessions idle or older than the limits; returns how many. */
  async expireSessions(idleBefore: number, createdBefore: number): Promise<number> {
    const result = await this.db.write((tx) => tx.run('DELETE FROM accounts_sessions WHERE last_seen_at < ? OR created_at < ?', [idleBefore, createdBefore]));
    return result.changes;
  }

  async insertToken(tx: WriteTx, token: TokenRecord): Promise<void> {
    await tx.run(
      `INSERT INTO accounts_tokens (id, name, secret_hash, role, scopes, requires_operator, expires_at, last_used_at, revoked_at, created_by, owner_user_id, created_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, NULL, NULL, ?, ?, ?)`,
      [token.id, token.name, token.secretHash, token.role, JSON.stringify(token.scopes), token.requiresOperator ? 1 : 0, token.expiresAt, token.createdBy, token.ownerUserId, token.createdAt],
    );
  }

  async token(id: string): Promise<TokenRecord | undefined> {
    const row = await this.db.get('SELECT * FROM accounts_tokens WHERE id = ?', [id]);
    return row ? tokenOf(row) : undefined;
  }

  /** The token, and whether its owner is disabled (one read, for every request a token authenticates). */
  async tokenWithOwner(id: string): Promise<{ token: TokenRecord; ownerDisabled: boolean } | undefined> {
    const row = await this.db.get('SELECT t.*, u.disabled AS owner_disabled FROM accounts_tokens t LEFT JOIN accounts_users u ON u.id = t.owner_user_id WHERE t.id = ?', [id]);
    return row ? { token: tokenOf(row), ownerDisabled: Number(row.owner_disabled) === 1 } : undefined;
  }

  async listTokens(limit: number, afterId: string | null): Promise<TokenRecord[]> {
    const rows = await this.db.all('SELECT * FROM accounts_tokens WHERE id > ? ORDER BY id LIMIT ?', [afterId ?? '', limit]);
    return rows.map(tokenOf);
  }

  async revokeToken(tx: WriteTx, id: string, now: number): Promise<void> {
    await tx.run('UPDATE accounts_tokens SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL', [now, id]);
  }

  /** Revokes every token `userId` owns that is not revoked yet; returns their ids. */
  async revokeTokensOf(tx: WriteTx, userId: string, now: number): Promise<string[]> {
    const rows = await tx.all<{ id: string }>('SELECT id FROM accounts_tokens WHERE owner_user_id = ? AND revoked_at IS NULL ORDER BY id', [userId]);
    if (rows.length > 0) await tx.run('UPDATE accounts_tokens SET revoked_at = ? WHERE owner_user_id = ? AND revoked_at IS NULL', [now, userId]);
    return rows.map((r) => String(r.id));
  }

  tokenUsed(id: string, now: number): Promise<unknown> {
    return this.db.write((tx) => tx.run('UPDATE accounts_tokens SET last_used_at = ? WHERE id = ?', [now, id]));
  }
}

/**
 * Users, secret keys and security settings, persisted in SQLite and mirrored
 * in memory so that authenticating a request never waits on the database.
 */
import { randomBytes } from 'node:crypto';
import type { SqlDatabase } from '../../core/store/database.js';
import { GatewayError } from '../../core/interfaces/errors.js';

/** The first administrator's user name. */
export const ADMIN_USERNAME = 'admin';

export interface User {
  /**
   * The account's identity: 128 random bits generated when the user is created and never reused. JWTs and
   * secret keys are bound to it, so deleting a user and creating one with the same name does not bring
   * the old user's tokens or keys back to life.
   */
  accountId: string;
  username: string;
  passwordHash: string;
  isAdmin: boolean;
  /** Interface paths (or `prefix/*` patterns) a non-administrator may call. */
  authorizedApis: string[];
  /** Raised by a password change; JWTs carrying an older version are refused. */
  tokenVersion: number;
  createdAt: number;
  updatedAt: number;
}

/** A user to create: the store gives it its account id and the first token version. */
export type NewUser = Omit<User, 'accountId' | 'tokenVersion'>;

export interface SecretKeyRecord {
  id: string;
  /** The account the key was created for; a key whose account no longer exists authenticates nobody. */
  accountId: string;
  username: string;
  keyHash: string;
  label: string;
  createdAt: number;
  revokedAt: number | null;
  lastUsedAt: number | null;
}

export interface SecuritySettings {
  securityControl: boolean;
  enableIpWhiteList: boolean;
  ipWhiteList: string[];
}

const SETTINGS_KEY = 'security';

type UserRow = {
  account_id: string;
  username: string;
  password_hash: string;
  is_admin: number;
  authorized_apis: string;
  token_version: number;
  created_at: number;
  updated_at: number;
};

type KeyRow = {
  id: string;
  account_id: string | null;
  username: string;
  key_hash: string;
  label: string;
  created_at: number;
  revoked_at: number | null;
  last_used_at: number | null;
};

export class UserStore {
  private readonly users = new Map<string, User>();
  private readonly keys = new Map<string, SecretKeyRecord>();
  private settingsValue: SecuritySettings;

  private constructor(
    private readonly db: SqlDatabase,
    settings: SecuritySettings,
  ) {
    this.settingsValue = settings;
  }

  /** Loads everything; the config's security settings seed an empty settings table. */
  static async open(db: SqlDatabase, seed: SecuritySettings): Promise<UserStore> {
    const row = await db.get<{ value: string }>('SELECT value FROM settings WHERE key = ?', [SETTINGS_KEY]);
    let settings = seed;
    if (row) settings = { ...seed, ...(JSON.parse(row.value) as Partial<SecuritySettings>) };
    else await db.write((tx) => tx.run('INSERT INTO settings (key, value) VALUES (?, ?)', [SETTINGS_KEY, JSON.stringify(seed)]));
    const store = new UserStore(db, settings);
    for (const u of await db.all<UserRow>('SELECT * FROM users')) {
      store.users.set(u.username, {
        accountId: u.account_id,
        username: u.username,
        passwordHash: u.password_hash,
        isAdmin: u.is_admin === 1,
        authorizedApis: JSON.parse(u.authorized_apis) as string[],
        tokenVersion: u.token_version,
        createdAt: u.created_at,
        updatedAt: u.updated_at,
      });
    }
    for (const k of await db.all<KeyRow>('SELECT * FROM secret_keys')) {
      // A key row without an account (never written by this version) cannot authenticate anyone.
      if (k.account_id === null) continue;
      store.keys.set(k.id, {
        id: k.id,
        accountId: k.account_id,
        username: k.username,
        keyHash: k.key_hash,
        label: k.label,
        createdAt: k.created_at,
        revokedAt: k.revoked_at,
        lastUsedAt: k.last_used_at,
      });
    }
    return store;
  }

  get settings(): SecuritySettings {
    return this.settingsValue;
  }

  async saveSettings(settings: SecuritySettings): Promise<void> {
    await this.db.write((tx) => tx.run('UPDATE settings SET value = ? WHERE key = ?', [JSON.stringify(settings), SETTINGS_KEY]));
    this.settingsValue = settings;
  }

  userCount(): number {
    return this.users.size;
  }

  findUser(username: string): User | undefined {
    return this.users.get(username);
  }

  getUser(username: string): User {
    const user = this.users.get(username);
    if (!user) throw new GatewayError('USER_NOT_EXISTED', `username '${username}' does not exist`);
    return user;
  }

  listUsers(): User[] {
    return [...this.users.values()];
  }

  /** Creates a user with a new account id and token version 1. */
  async createUser(input: NewUser): Promise<User> {
    if (this.users.has(input.username)) throw new GatewayError('USER_EXISTED', `username '${input.username}' already exists`);
    const user: User = { ...input, accountId: newAccountId(), tokenVersion: 1 };
    await this.db.write((tx) =>
      tx.run(
        'INSERT INTO users (account_id, username, password_hash, is_admin, authorized_apis, token_version, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
        [user.accountId, user.username, user.passwordHash, user.isAdmin ? 1 : 0, JSON.stringify(user.authorizedApis), user.tokenVersion, user.createdAt, user.updatedAt],
      ),
    );
    this.users.set(user.username, user);
    return user;
  }

  /**
   * Saves a changed user. The change applies only to the same account: a handler that read the user,
   * then waited (hashing a password) while the user was deleted and created again under the same name,
   * gets USER_NOT_EXISTED rather than writing the old account's role or password over the new one.
   */
  async updateUser(user: User): Promise<User> {
    const current = this.getUser(user.username);
    if (current.accountId !== user.accountId) throw new GatewayError('USER_NOT_EXISTED', `username '${user.username}' was deleted meanwhile`);
    await this.db.write((tx) =>
      tx.run('UPDATE users SET password_hash = ?, is_admin = ?, authorized_apis = ?, token_version = ?, updated_at = ? WHERE username = ? AND account_id = ?', [
        user.passwordHash,
        user.isAdmin ? 1 : 0,
        JSON.stringify(user.authorizedApis),
        user.tokenVersion,
        user.updatedAt,
        user.username,
        user.accountId,
      ]),
    );
    if (this.users.get(user.username)?.accountId === user.accountId) this.users.set(user.username, user);
    return user;
  }

  /** Deletes a user and, by cascade, their secret keys. */
  async deleteUser(username: string): Promise<void> {
    this.getUser(username);
    await this.db.write((tx) => tx.run('DELETE FROM users WHERE username = ?', [username]));
    this.users.delete(username);
    for (const [id, key] of this.keys) if (key.username === username) this.keys.delete(id);
  }

  findKey(id: string): SecretKeyRecord | undefined {
    return this.keys.get(id);
  }

  listKeys(): SecretKeyRecord[] {
    return [...this.keys.values()];
  }

  /** Stores a key for its account; USER_NOT_EXISTED when that account is gone, even if its name was taken again. */
  async addKey(key: SecretKeyRecord): Promise<void> {
    const inserted = await this.db.write((tx) =>
      tx.run(
        'INSERT INTO secret_keys (id, account_id, username, key_hash, label, created_at, revoked_at, last_used_at) ' +
          'SELECT ?, account_id, username, ?, ?, ?, NULL, NULL FROM users WHERE username = ? AND account_id = ?',
        [key.id, key.keyHash, key.label, key.createdAt, key.username, key.accountId],
      ),
    );
    if (inserted.changes === 0) throw new GatewayError('USER_NOT_EXISTED', `username '${key.username}' does not exist`);
    this.keys.set(key.id, key);
  }

  async revokeKey(id: string, at: number): Promise<SecretKeyRecord> {
    const key = this.keys.get(id);
    if (!key) throw new GatewayError('SECRET_KEY_NOT_EXISTED', `secret key '${id}' does not exist`);
    if (key.revokedAt === null) {
      await this.db.write((tx) => tx.run('UPDATE secret_keys SET revoked_at = ? WHERE id = ?', [at, id]));
      key.revokedAt = at;
    }
    return key;
  }

  /** Records use without waiting, at most once a minute per key; last-used times are informational. */
  touchKey(key: SecretKeyRecord, at: number): void {
    if (key.lastUsedAt !== null && at - key.lastUsedAt < 60_000) return;
    key.lastUsedAt = at;
    void this.db.write((tx) => tx.run('UPDATE secret_keys SET last_used_at = ? WHERE id = ?', [at, key.id])).catch(() => undefined);
  }
}

/** 128 random bits as hex: an account id that is never reused. */
function newAccountId(): string {
  return randomBytes(16).toString('hex');
}

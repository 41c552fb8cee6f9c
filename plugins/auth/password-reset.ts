/**
 * Resets a user's password directly in the gateway's database, for whoever
 * has access to the data directory and has lost the administrator password
 * (`npm run reset-admin-password`, see docs/operations.md). The gateway must
 * be stopped: it keeps users in memory and would neither see the new
 * password nor forget the old tokens, so the reset refuses while another
 * process has the database open.
 */
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import sqlite3 from 'sqlite3';
import type { GatewayConfig } from '../../config/schema.js';
import { Database } from '../../core/store/database.js';
import { migrateGatewayStore } from '../../core/roles/gateway/store/schema.js';
import { generatePassword, hashPassword } from '../../core/auth/passwords.js';
import { adminPasswordFromEnv } from './admin-password.js';
import { authSettings } from './config.js';
import { USERNAME_PATTERN } from '../../core/roles/gateway/contract/security.js';
import { UserStore } from './user-store.js';

export interface PasswordResetRequest {
  config: GatewayConfig;
  /** The user whose password is reset; created as an administrator when missing. */
  username: string;
  /** GATEWAY_ADMIN_PASSWORD, when set, is the new password; otherwise a random one is generated. */
  env: NodeJS.ProcessEnv;
  now?: () => number;
}

export interface PasswordResetResult {
  dataDir: string;
  username: string;
  /** The new password when generated here (to be shown once); undefined when it came from GATEWAY_ADMIN_PASSWORD. */
  generatedPassword: string | undefined;
  /** True when the user did not exist and was created as an administrator. */
  created: boolean;
  isAdmin: boolean;
}

/** A reset that cannot be done; the message says why and what to do. */
export class PasswordResetRefused extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PasswordResetRefused';
  }
}

/**
 * Fails when another process (a running gateway) has the database open. In WAL mode every open
 * connection holds a shared lock, so an exclusive lock is granted only to a sole user.
 */
async function assertNotInUse(file: string): Promise<void> {
  const probe = await new Promise<sqlite3.Database>((ok, fail) => {
    const db = new sqlite3.Database(file, sqlite3.OPEN_READWRITE, (err) => (err ? fail(err) : ok(db)));
  });
  const exec = (sql: string) => new Promise<void>((ok, fail) => probe.exec(sql, (err) => (err ? fail(err) : ok())));
  try {
    await exec('PRAGMA busy_timeout = 1000; PRAGMA locking_mode = EXCLUSIVE; BEGIN EXCLUSIVE; ROLLBACK;');
  } catch (err) {
    if ((err as { code?: string }).code === 'SQLITE_BUSY') {
      throw new PasswordResetRefused(
        `the database ${file} is in use by another process: is the gateway running? Stop it first; ` +
          'a running gateway keeps users in memory and would not see the new password.',
      );
    }
    throw err;
  } finally {
    await new Promise<void>((ok) => probe.close(() => ok()));
  }
}

/** Sets a new password for `username` (creating it as an administrator if missing) and invalidates their JWTs. */
export async function resetAdminPassword(request: PasswordResetRequest): Promise<PasswordResetResult> {
  const { config, username } = request;
  const now = request.now ?? Date.now;
  if (!USERNAME_PATTERN.test(username)) {
    throw new PasswordResetRefused(`--user: found '${username}'; expected 1-64 letters, digits, _ . @ -, starting with a letter or digit`);
  }
  const dataDir = resolve(config.dataDir);
  const file = join(dataDir, 'gateway.db');
  if (!existsSync(file)) {
    throw new PasswordResetRefused(
      `no gateway database in the data directory ${dataDir} (expected ${file}). ` +
        'Pass the --config file and GATEWAY_DATA_DIR the gateway runs with, or start the gateway once to create it.',
    );
  }
  let fromEnv: string | undefined;
  try {
    fromEnv = adminPasswordFromEnv(request.env);
  } catch (err) {
    throw new PasswordResetRefused((err as Error).message);
  }
  const password = fromEnv ?? generatePassword();
  await assertNotInUse(file);

  const db = await Database.open(file);
  try {
    await migrateGatewayStore(db);
    const users = await UserStore.open(db, authSettings(config));
    const passwordHash = await hashPassword(password);
    const existing = users.findUser(username);
    const at = now();
    const user = existing
      ? // A new token version invalidates every JWT issued before; secret keys are kept.
        await users.updateUser({ ...existing, passwordHash, tokenVersion: existing.tokenVersion + 1, updatedAt: at })
      : await users.createUser({ username, passwordHash, isAdmin: true, authorizedApis: [], createdAt: at, updatedAt: at });
    return { dataDir, username, generatedPassword: fromEnv === undefined ? password : undefined, created: !existing, isAdmin: user.isAdmin };
  } finally {
    await db.close();
  }
}

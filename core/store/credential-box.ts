/**
 * Encryption of machine credentials at rest: AES-256-GCM with a key kept in
 * `<dataDir>/credentials.key` (mode 0600, created on first start), a random
 * 96-bit IV per value, and the machineID and field name as additional
 * authenticated data, so a ciphertext copied onto another machine or field
 * fails to decrypt instead of yielding a credential.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { loadOrCreateKeyFile } from './key-file.js';

export const CREDENTIALS_KEY_FILE = 'credentials.key';
const ALGORITHM = 'aes-256-gcm';
const KEY_BYTES = 32;
const IV_BYTES = 12;
const TAG_BYTES = 16;

/**
 * A stored credential. An object (never a string), so a plaintext password
 * written by an older version cannot be mistaken for a ciphertext.
 */
export interface SealedCredential {
  alg: typeof ALGORITHM;
  iv: string;
  data: string;
  tag: string;
}

/** True when a stored value has the shape of a sealed credential. */
export function isSealedCredential(value: unknown): value is SealedCredential {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as Record<string, unknown>;
  return v.alg === ALGORITHM && typeof v.iv === 'string' && typeof v.data === 'string' && typeof v.tag === 'string';
}

/** Raised when a stored credential does not decrypt: wrong key file or altered data. */
export class CredentialDecryptError extends Error {
  constructor(
    readonly machineID: string,
    readonly field: string,
  ) {
    super(`machine '${machineID}' ${field}: the stored credential does not decrypt`);
    this.name = 'CredentialDecryptError';
  }
}

function additionalData(machineID: string, field: string): Buffer {
  // JSON keeps the two parts unambiguous whatever characters they hold.
  return Buffer.from(JSON.stringify(['machine-credential', machineID, field]), 'utf8');
}

export class CredentialBox {
  private constructor(
    private readonly key: Buffer,
    /** The key file's path. */
    readonly file: string,
    /** True when the key file did not exist and was created by this start. */
    readonly created: boolean,
  ) {}

  /** Loads `<dataDir>/credentials.key`, creating it (mode 0600) when absent. */
  static open(dataDir: string): CredentialBox {
    const file = join(dataDir, CREDENTIALS_KEY_FILE);
    const { key, created } = loadOrCreateKeyFile(file, KEY_BYTES);
    if (key.length !== KEY_BYTES) {
      throw new Error(`${file}: expected a base64 256-bit key, found ${key.length} bytes; restore the key file that belongs to this data directory`);
    }
    return new CredentialBox(key, file, created);
  }

  /**
   * Removes a key file this start created, when the store turned out to hold credentials
   * sealed by another key: a restored original must not meet a stray new key.
   */
  discard(): void {
    if (this.created) rmSync(this.file, { force: true });
  }

  /** Encrypts one credential of one machine. */
  seal(machineID: string, field: string, plaintext: string): SealedCredential {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv(ALGORITHM, this.key, iv, { authTagLength: TAG_BYTES });
    cipher.setAAD(additionalData(machineID, field));
    const data = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return { alg: ALGORITHM, iv: iv.toString('base64'), data: data.toString('base64'), tag: cipher.getAuthTag().toString('base64') };
  }

  /** Decrypts a credential sealed for this machine and field; throws CredentialDecryptError otherwise. */
  open(machineID: string, field: string, sealed: SealedCredential): string {
    try {
      const iv = Buffer.from(sealed.iv, 'base64');
      const tag = Buffer.from(sealed.tag, 'base64');
      if (iv.length !== IV_BYTES || tag.length !== TAG_BYTES) throw new Error('bad iv or tag length');
      const decipher = createDecipheriv(ALGORITHM, this.key, iv, { authTagLength: TAG_BYTES });
      decipher.setAAD(additionalData(machineID, field));
      decipher.setAuthTag(tag);
      return Buffer.concat([decipher.update(Buffer.from(sealed.data, 'base64')), decipher.final()]).toString('utf8');
    } catch {
      // The cause (a GCM tag mismatch) says nothing more useful and must not carry data.
      throw new CredentialDecryptError(machineID, field);
    }
  }
}

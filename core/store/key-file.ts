/**
 * A random key kept as base64 in a file of the data directory, mode 0600,
 * created on first start. The JWT signing key and the credential key are two
 * such files; both must be backed up with the database (docs/security.md).
 */
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';

/** The key read from `file`, and whether this call created the file. */
export function loadOrCreateKeyFile(file: string, bytes: number): { key: Buffer; created: boolean } {
  let created = false;
  if (!existsSync(file)) {
    // 'wx': two processes starting at once cannot both write a key.
    writeFileSync(file, randomBytes(bytes).toString('base64'), { mode: 0o600, flag: 'wx' });
    created = true;
  }
  chmodSync(file, 0o600);
  return { key: Buffer.from(readFileSync(file, 'utf8').trim(), 'base64'), created };
}

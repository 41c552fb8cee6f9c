/**
 * The data directory holds the database, the JWT signing key and the
 * credentials key, so only the gateway's own user may read it: the
 * directory is 0700 (which also guards what drivers keep below it, such as
 * opcua/pki) and the files directly in it 0600. Modes are tightened at every
 * start, so a directory left by an older version (0755/0644) is fixed too.
 * Windows has no POSIX modes; there the calls are harmless no-ops.
 */
import { chmodSync, existsSync, mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

export const DIRECTORY_MODE = 0o700;
export const FILE_MODE = 0o600;

/** Creates the data directory (0700) if needed and tightens the modes of it and of the files directly in it. */
export function prepareDataDirectory(dataDir: string): void {
  mkdirSync(dataDir, { recursive: true, mode: DIRECTORY_MODE });
  restrictDataDirectory(dataDir);
}

/** Sets the data directory to 0700 and every regular file directly in it to 0600. */
export function restrictDataDirectory(dataDir: string): void {
  chmodSync(dataDir, DIRECTORY_MODE);
  for (const entry of readdirSync(dataDir, { withFileTypes: true })) {
    if (entry.isFile()) chmodSync(join(dataDir, entry.name), FILE_MODE);
  }
}

/** Sets a file to 0600 when it exists. */
export function restrictFile(file: string): void {
  if (existsSync(file)) chmodSync(file, FILE_MODE);
}

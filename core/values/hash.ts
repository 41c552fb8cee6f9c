/** Content hashes the roles compute and compare (program files, versions, uploads). */
import { createHash } from 'node:crypto';

/** The SHA-256 of the bytes, as 64 lowercase hex digits. */
export const sha256Hex = (bytes: Buffer | Uint8Array | string): string => createHash('sha256').update(bytes).digest('hex');

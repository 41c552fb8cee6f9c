/**
 * Password hashing with scrypt (node:crypto). Stored form:
 * `scrypt$N$r$p$<salt base64>$<hash base64>`: each hash carries its own cost,
 * so the cost can be raised without breaking existing hashes, and a hash of a
 * lower cost is re-hashed at the user's next successful login.
 */
import { randomBytes, scrypt as scryptCallback, timingSafeEqual, type ScryptOptions } from 'node:crypto';

/** scrypt's cost parameters: N (CPU and memory), r (block size), p (parallelism). */
export interface ScryptCost {
  N: number;
  r: number;
  p: number;
}

/**
 * The production cost: OWASP's minimum for scrypt (N=2^17, r=8, p=1), about
 * 128 MiB and 0.65 s of one core per hash on the reference machine. Only the
 * test fixture passes a lower one (see createAuthPlugin); no setting lowers it.
 */
export const PASSWORD_COST: Readonly<ScryptCost> = Object.freeze({ N: 2 ** 17, r: 8, p: 1 });

/** Stored hashes needing more memory (128·N·r bytes) are refused rather than computed: a tampered row must not exhaust memory. */
const MAX_HASH_MEMORY = 2 ** 30;
const KEY_LENGTH = 32;

/**
 * At most this many hashes run at once. Each takes 128·N·r bytes (128 MiB at
 * the production cost) on the libuv thread pool; without a limit a burst of
 * logins would hold 4 × 128 MiB (or more with a larger pool).
 */
const MAX_CONCURRENT_HASHES = 2;
let running = 0;
const waiting: (() => void)[] = [];

async function withHashSlot<T>(job: () => Promise<T>): Promise<T> {
  if (running >= MAX_CONCURRENT_HASHES) await new Promise<void>((resolve) => waiting.push(resolve));
  else running++;
  try {
    return await job();
  } finally {
    // Hand the slot straight to the next waiter, or give it back.
    const next = waiting.shift();
    if (next) next();
    else running--;
  }
}

function scrypt(password: string, salt: Buffer, keylen: number, cost: ScryptCost): Promise<Buffer> {
  // Node refuses a computation needing more than maxmem (≈ 128·N·r bytes); allow twice that.
  const options: ScryptOptions = { N: cost.N, r: cost.r, p: cost.p, maxmem: 2 * 128 * cost.N * cost.r };
  return withHashSlot(
    () => new Promise((resolve, reject) => scryptCallback(password, salt, keylen, options, (err, key) => (err ? reject(err) : resolve(key)))),
  );
}

interface ParsedHash {
  cost: ScryptCost;
  salt: Buffer;
  hash: Buffer;
}

function parseHash(stored: string): ParsedHash | null {
  const [scheme, n, r, p, salt, hash, ...rest] = stored.split('$');
  if (scheme !== 'scrypt' || !n || !r || !p || !salt || !hash || rest.length) return null;
  const cost = { N: Number(n), r: Number(r), p: Number(p) };
  const powerOfTwo = Number.isInteger(cost.N) && cost.N >= 2 && (cost.N & (cost.N - 1)) === 0;
  if (!powerOfTwo || !Number.isInteger(cost.r) || cost.r < 1 || !Number.isInteger(cost.p) || cost.p < 1 || cost.p > 16) return null;
  if (128 * cost.N * cost.r > MAX_HASH_MEMORY) return null;
  return { cost, salt: Buffer.from(salt, 'base64'), hash: Buffer.from(hash, 'base64') };
}

/** Hashes a password with a new random salt at `cost` (the production cost unless a test lowers it). */
export async function hashPassword(password: string, cost: ScryptCost = PASSWORD_COST): Promise<string> {
  const salt = randomBytes(16);
  const hash = await scrypt(password, salt, KEY_LENGTH, cost);
  return `scrypt$${cost.N}$${cost.r}$${cost.p}$${salt.toString('base64')}$${hash.toString('base64')}`;
}

/** True when `password` matches `stored`, computed at the stored hash's own cost; compares in constant time. */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const parsed = parseHash(stored);
  if (!parsed) return false;
  const actual = await scrypt(password, parsed.salt, parsed.hash.length, parsed.cost);
  return actual.length === parsed.hash.length && timingSafeEqual(actual, parsed.hash);
}

/** Whether `stored` is a password hash at all: a user signed in only through a provider has none, and is verified against a dummy so a login takes as long. */
export function isPasswordHash(stored: string): boolean {
  return parseHash(stored) !== null;
}

/** True when `stored` was hashed at a lower cost than `cost` in any parameter, so it should be hashed again. */
export function needsRehash(stored: string, cost: ScryptCost = PASSWORD_COST): boolean {
  const parsed = parseHash(stored);
  if (!parsed) return false;
  return parsed.cost.N < cost.N || parsed.cost.r < cost.r || parsed.cost.p < cost.p;
}

/** A random password for the first administrator: 20 characters from an unambiguous alphabet. */
export function generatePassword(): string {
  const alphabet = 'abcdefghjkmnpqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789';
  const bytes = randomBytes(20);
  return Array.from(bytes, (b) => alphabet[b % alphabet.length]).join('');
}

/** Minimum length for every password a role accepts. */
export const MIN_PASSWORD_LENGTH = 10;

import { describe, expect, it } from 'vitest';
import { generatePassword, hashPassword, MIN_PASSWORD_LENGTH, needsRehash, verifyPassword } from '../../../core/auth/passwords.js';

describe('password hashing primitives', () => {
  it('needsRehash compares each cost parameter; verifyPassword refuses malformed or oversized stored hashes', async () => {
    const current = await hashPassword('some-password-1', { N: 1024, r: 8, p: 1 });
    expect(needsRehash(current, { N: 1024, r: 8, p: 1 })).toBe(false);
    expect(needsRehash(current, { N: 2048, r: 8, p: 1 })).toBe(true);
    expect(needsRehash(current, { N: 1024, r: 16, p: 1 })).toBe(true);
    expect(needsRehash(current, { N: 1024, r: 8, p: 2 })).toBe(true);
    expect(needsRehash(current, { N: 512, r: 8, p: 1 })).toBe(false);
    expect(needsRehash('not-a-hash')).toBe(false);
    expect(await verifyPassword('some-password-1', current)).toBe(true);
    const [, , , , salt, hash] = current.split('$');
    for (const bad of [`scrypt$${2 ** 24}$8$1$${salt}$${hash}`, `scrypt$${2 ** 20}$64$1$${salt}$${hash}`, `scrypt$1000$8$1$${salt}$${hash}`, `scrypt$1024$8$1$${salt}`, 'bcrypt$x']) {
      expect(await verifyPassword('some-password-1', bad)).toBe(false);
    }
  });

  it('generatePassword gives 20 characters of the unambiguous alphabet, longer than the minimum, different each time', () => {
    const a = generatePassword();
    const b = generatePassword();
    expect(a).toMatch(/^[a-hjkmnp-zA-HJ-NP-Z2-9]{20}$/);
    expect(a.length).toBeGreaterThanOrEqual(MIN_PASSWORD_LENGTH);
    expect(a).not.toBe(b);
  });
});

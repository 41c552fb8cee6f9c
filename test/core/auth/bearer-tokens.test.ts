import { describe, expect, it } from 'vitest';
import { createBearerToken, hashSecret, parseBearerToken, secretMatches } from '../../../core/auth/bearer-tokens.js';

describe('bearer tokens <prefix>_<id>_<secret>', () => {
  it('a token made with one prefix parses with that prefix only, and its secret matches the stored hash', () => {
    const made = createBearerToken('pvk');
    expect(made.key).toMatch(/^pvk_[0-9a-f]{12}_[A-Za-z0-9_-]{43}$/);
    const parsed = parseBearerToken('pvk', made.key);
    expect(parsed?.id).toBe(made.id);
    expect(secretMatches(parsed!.secret, made.hash)).toBe(true);
    expect(made.hash).toBe(hashSecret(parsed!.secret));
    expect(parseBearerToken('gwk', made.key)).toBeNull();
    expect(parseBearerToken('pv', made.key)).toBeNull();
  });

  it('a wrong secret, a truncated token or a bad prefix is refused', () => {
    const made = createBearerToken('gwk');
    const parsed = parseBearerToken('gwk', made.key)!;
    const other = createBearerToken('gwk');
    expect(secretMatches(parseBearerToken('gwk', other.key)!.secret, made.hash)).toBe(false);
    expect(secretMatches(parsed.secret, 'short')).toBe(false);
    expect(parseBearerToken('gwk', made.key.slice(0, -1))).toBeNull();
    expect(parseBearerToken('gwk', `x${made.key}`)).toBeNull();
    expect(() => createBearerToken('a_b')).toThrow(/prefix 'a_b'/);
    expect(() => parseBearerToken('.*', made.key)).toThrow(/prefix/);
  });
});

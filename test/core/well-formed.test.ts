/** Finding a string that is not well-formed Unicode in any value, at any depth, and naming where it is. */
import { describe, expect, it } from 'vitest';
import { findIllFormed, illFormedField, illFormedLine } from '../../core/values/well-formed.js';

describe('finding ill-formed text', () => {
  it('finds a lone surrogate 100,000 levels deep without recursing, and names the first one found: an object\'s own strings before nested ones, each level in document order', () => {
    let deep: unknown = ['ok', 'x\ud800'];
    for (let i = 0; i < 100_000; i++) deep = [deep];
    expect(findIllFormed(deep)?.path).toHaveLength(100_001);
    const nested = { a: { b: ['fine', { c: 'y\udc00' }] }, e: [{ f: 'w\ud800' }] };
    expect(illFormedField(findIllFormed(nested)!)).toBe('a.b[1].c');
    expect(illFormedField(findIllFormed({ ...nested, d: 'z\ud800' })!)).toBe('d');
  });

  it('judges field names, leaves well-formed pairs, numbers, bytes and class instances alone', () => {
    expect(findIllFormed({ ok: { ['k\udbff']: 1 } })).toEqual({ path: ['ok', 'k\udbff'], inKey: true, reason: 'surrogate' });
    expect(findIllFormed({ emoji: '\ud83d\ude00', n: 1, b: true, z: null, bytes: Buffer.from([0xed, 0xa0, 0x80]), when: new Date(0) })).toBeUndefined();
    expect(findIllFormed('\udfff')).toEqual({ path: [], inKey: false, reason: 'surrogate' });
  });

  it('finds U+0000 in a value or a field name, saying so, and names a field name with it escaped; bytes holding 0 are not text', () => {
    expect(findIllFormed({ list: ['a', 'b\u0000c'] })).toEqual({ path: ['list', 1], inKey: false, reason: 'nul' });
    const key = findIllFormed({ ['note\u0000']: 1 });
    expect(key).toEqual({ path: ['note\u0000'], inKey: true, reason: 'nul' });
    expect(illFormedLine(key!)).toBe('note\\u0000 (field name): holds U+0000 (NUL), which no text field takes; accepted: text without U+0000 (bytes go as base64 where an operation takes bytes)');
    // A lone surrogate and a NUL in one string: the surrogate is named (either is refused).
    expect(findIllFormed('\u0000\ud800')?.reason).toBe('surrogate');
    expect(findIllFormed({ bytes: Buffer.from([0, 0]) })).toBeUndefined();
  });
});

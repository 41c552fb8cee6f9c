/** The nesting-depth check of JSON bodies (core/http/json-depth.ts): brackets in strings do not count, however the strings escape their quotes. */
import { describe, expect, it } from 'vitest';
import { exceedsJsonDepth } from '../../core/http/json-depth.js';

const nested = (n: number, inner = '1') => `${'['.repeat(n)}${inner}${']'.repeat(n)}`;

describe('the nesting depth of a JSON text', () => {
  it('counts arrays and objects, up to the bound and one beyond it', () => {
    expect(exceedsJsonDepth(nested(64))).toBe(false);
    expect(exceedsJsonDepth(nested(65))).toBe(true);
    expect(exceedsJsonDepth(`{"a":${nested(63)}}`)).toBe(false);
    expect(exceedsJsonDepth(`{"a":${nested(64)}}`)).toBe(true);
  });

  it('does not count brackets inside strings, with escaped quotes and runs of backslashes before them', () => {
    const brackets = '['.repeat(100);
    expect(exceedsJsonDepth(`{"a":"${brackets}"}`)).toBe(false);
    expect(exceedsJsonDepth(`{"a":"x\\"${brackets}"}`)).toBe(false);
    expect(exceedsJsonDepth(`{"a":"x\\\\\\"${brackets}"}`)).toBe(false);
    // An even run of backslashes ends the string: the brackets after it count.
    expect(exceedsJsonDepth(`{"a":"x\\\\",${nested(64)}}`)).toBe(true);
    expect(exceedsJsonDepth(`["${'A'.repeat(400_000)}",${nested(63)}]`)).toBe(false);
    expect(exceedsJsonDepth(`["${'A'.repeat(400_000)}",${nested(64)}]`)).toBe(true);
  });

  it('leaves a string that never ends to the parser', () => {
    expect(exceedsJsonDepth(`["${'['.repeat(100)}`)).toBe(false);
  });
});

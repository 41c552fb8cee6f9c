/** Describing bad input is bounded in time and size, whatever the input. */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { describeFound, describeIssues, MAX_DESCRIBED_ISSUES, parseOrThrow } from '../../core/interfaces/schema-errors.js';
import { GatewayError } from '../../core/interfaces/errors.js';

/** An array nested `depth` deep, built without recursion. */
function nested(depth: number): unknown {
  let v: unknown = [];
  for (let i = 0; i < depth; i++) v = [v];
  return v;
}

describe('describing what was found', () => {
  it('a value nested 100,000 deep is described in at most 60 characters without recursing through it', () => {
    const text = describeFound(nested(100_000));
    expect(text.length).toBeLessThanOrEqual(60);
    expect(text.startsWith('[[[[')).toBe(true);
  });

  it('a huge string, a wide object and a wide array are cut at 60 characters', () => {
    const wide = Object.fromEntries(Array.from({ length: 100_000 }, (_, i) => [`key${i}`, i]));
    for (const value of ['x'.repeat(10_000_000), wide, Array.from({ length: 1_000_000 }, () => 1)]) {
      const text = describeFound(value);
      expect(text.length).toBeLessThanOrEqual(60);
      expect(text.endsWith('...')).toBe(true);
    }
    expect(describeFound({ a: 1, b: [true, null, 'x'] })).toBe('{"a":1,"b":[true,null,"x"]}');
    expect(describeFound({ password: 'hunter2', apiKey: 'k' })).toBe('{"password":"(hidden)","apiKey":"(hidden)"}');
  });

  it('a schema failing on a 3,000-deep value or thousands of fields gives a bounded INVALID_PARAMETER, not a crash', () => {
    const schema = z.object({ a: z.number() }).strict();
    for (const input of [{ a: nested(3000) }, Object.fromEntries(Array.from({ length: 5000 }, (_, i) => [`${'k'.repeat(1000)}${i}`, i]))]) {
      let error: unknown;
      try {
        parseOrThrow(schema, input);
      } catch (err) {
        error = err;
      }
      expect(error).toBeInstanceOf(GatewayError);
      expect((error as GatewayError).message.length).toBeLessThan(1500);
    }
  });

  it(`at most ${MAX_DESCRIBED_ISSUES} issues are described and the rest counted`, () => {
    const schema = z.array(z.number());
    const parsed = schema.safeParse(Array.from({ length: 1000 }, () => 'x'));
    expect(parsed.success).toBe(false);
    const lines = describeIssues(parsed.error?.issues ?? [], []);
    expect(lines.length).toBe(MAX_DESCRIBED_ISSUES + 1);
    expect(lines.at(-1)).toBe(`and ${1000 - MAX_DESCRIBED_ISSUES} more issue(s)`);
  });
});

describe('ill-formed text in the shared schema layer', () => {
  it('parseOrThrow refuses a lone surrogate in a value or a field name, whatever the schema accepts, naming where it is', () => {
    const anything = z.record(z.string(), z.unknown());
    const at = (raw: unknown) => {
      try {
        parseOrThrow(anything, raw, 'arguments: ');
      } catch (err) {
        return err instanceof GatewayError ? `${err.errorName} ${err.detail}` : String(err);
      }
      return 'accepted';
    };
    expect(at({ name: 'Hall \ud800', tags: ['ok'] })).toBe('INVALID_PARAMETER arguments: name: not well-formed Unicode (it holds a lone UTF-16 surrogate, \\ud800-\\udfff without its pair); accepted: well-formed Unicode text');
    expect(at({ list: [{ a: 'ok' }, { b: ['x', 'y\udfff'] }] })).toMatch(/^INVALID_PARAMETER arguments: list\[1\]\.b\[1\]: not well-formed/);
    expect(at({ ['k\udbff']: 1 })).toMatch(/^INVALID_PARAMETER arguments: k\\udbff \(field name\): not well-formed/);
    // A pair is one code point, and fine.
    expect(at({ emoji: '\ud83d\ude00' })).toBe('accepted');
  });
});

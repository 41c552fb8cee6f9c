/**
 * The relay's answer format: a tool result's text as a JSON string literal,
 * cut into byte parts with a header line, joined in any order; an answer
 * that is not exactly one JSON string literal is refused, so a gateway
 * cannot add JSON of its own to the cloud's response.
 */
import { describe, expect, it } from 'vitest';
import { isJsonStringLiteralScalar, isJsonStringLiteralSimd } from '../../core/cloud-wire/literal-check.js';
import { answerPayloads, isJsonStringLiteral, joinedLiteral, MAX_ANSWER_BYTES, PartJoiner, readPart, readRequest, textLiteral, topics, type JoinedAnswer } from '../../core/cloud-wire/protocol.js';

/** The answer the payloads make: its literal (checked, as the cloud does) and its error flag. */
const join = (payloads: Buffer[]) => {
  const parts = payloads.map((p) => readPart(p));
  const joiner = new PartJoiner(parts[0]!.header.parts);
  let answer: JoinedAnswer | undefined;
  for (const part of parts) answer = joiner.add(part!) ?? answer;
  if (!answer) return undefined;
  const literal = joinedLiteral(answer);
  if (!literal) throw new Error('the answer is not a JSON string literal');
  return { literal, isError: answer.isError };
};

describe('relay answer format', () => {
  it('GW-85 a large answer with multi-byte characters crosses in parts, in any order, byte for byte', () => {
    const text = JSON.stringify({ machines: Array.from({ length: 3000 }, (_, i) => ({ id: `M${i}`, name: `Fräsmaschine ${i} — 切削 "q" \\ \n` })) });
    const payloads = answerPayloads('abc.123', textLiteral(text), false, 1000);
    expect(payloads.length).toBeGreaterThan(100);
    const shuffled = [...payloads].reverse();
    const answer = join(shuffled);
    expect(answer?.isError).toBe(false);
    expect(JSON.parse(answer!.literal.toString('utf8'))).toBe(text);
  });

  it('GW-87 a tool error keeps its flag; an empty text is one part', () => {
    const payloads = answerPayloads('x', textLiteral(''), true);
    expect(payloads).toHaveLength(1);
    expect(join(payloads)).toEqual({ literal: Buffer.from('""'), isError: true });
  });

  it('GW-85 only one JSON string literal passes: no early quote, no raw control character, no bad escape, valid UTF-8', () => {
    // Each form of the check: the SIMD one (when this Node has WebAssembly SIMD) and the scalar one.
    const forms = [isJsonStringLiteral, isJsonStringLiteralScalar, (b: Buffer) => isJsonStringLiteralSimd(b) ?? isJsonStringLiteralScalar(b)];
    for (const check of forms) {
      for (const good of ['""', '"a"', '"\\"\\\\\\/\\b\\f\\n\\r\\t"', '"\\u00e9"', JSON.stringify('é 切 😀')]) expect(check(Buffer.from(good)), good).toBe(true);
      for (const bad of ['', '"', 'a', '"a', 'a"', '"a"b"', '"a","isError":true,"x":"', '"\n"', '"\\x"', '"\\u12"', '"\\u12G4"', '"abc\\"', '"\\"', '"a" ']) {
        expect(check(Buffer.from(bad)), bad).toBe(false);
      }
      expect(check(Buffer.from([0x22, 0xc3, 0x28, 0x22]))).toBe(false);
    }
  });

  it('GW-85 the literal check agrees with JSON.parse on thousands of generated texts, at any offset in memory', () => {
    // A small deterministic generator: texts made of the characters that matter (quotes, backslashes, escape letters,
    // hex digits, control characters, multi-byte characters) and long plain runs.
    let seed = 12345;
    const rand = (n: number) => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return seed % n;
    };
    const alphabet = ['"', '\\', 'u', 'n', 't', '/', '0', 'a', 'F', 'g', '\n', '\u0001', '\u001f', ' ', 'é', '切', '😀', 'machineID', 'x'.repeat(37)];
    const reference = (bytes: Buffer) => {
      if (bytes.length < 2 || bytes[0] !== 0x22 || bytes[bytes.length - 1] !== 0x22) return false;
      try {
        return typeof JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes)) === 'string';
      } catch {
        return false;
      }
    };
    let valid = 0;
    for (let c = 0; c < 4000; c++) {
      // Short and long texts: the long ones cross several 64-byte blocks of the SIMD check.
      const text = Array.from({ length: rand(c % 4 === 0 ? 400 : 40) }, () => alphabet[rand(alphabet.length)]).join('');
      // Half are real literals (JSON.stringify), half raw text in quotes (often not one).
      const literal = c % 2 === 0 ? JSON.stringify(text) : `"${text}"`;
      const offset = rand(4);
      const slab = Buffer.alloc(Buffer.byteLength(literal) + 8);
      const bytes = slab.subarray(offset, offset + slab.write(literal, offset));
      const want = reference(bytes);
      if (want) valid++;
      expect({ literal, offset, ok: isJsonStringLiteral(bytes), scalar: isJsonStringLiteralScalar(bytes), simd: isJsonStringLiteralSimd(bytes) ?? want })
        .toEqual({ literal, offset, ok: want, scalar: want, simd: want });
    }
    // Both kinds were generated.
    expect(valid).toBeGreaterThan(1000);
    expect(valid).toBeLessThan(4000);
  });

  it('GW-85 escapes cut by a 64-byte block boundary are judged as whole ones: backslash runs, \\u and its four hex digits', () => {
    const reference = (bytes: Buffer) => {
      try {
        return typeof JSON.parse(bytes.toString('utf8')) === 'string';
      } catch {
        return false;
      }
    };
    const tails = ['\\u00e9', '\\uZ000', '\\u00eZ', '\\u0', '\\uABCD', '\\"', '\\\\"', '\\\\\\"', '\\\\', '\\x', '\\/', '"'];
    let checked = 0;
    for (let at = 200; at < 340; at++) {
      for (const tail of tails) {
        for (const after of ['', 'y'.repeat(70)]) {
          const bytes = Buffer.from(`"${'x'.repeat(at)}${tail}${after}"`);
          const want = reference(bytes);
          expect({ at, tail, after: after.length, simd: isJsonStringLiteralSimd(bytes) ?? want, scalar: isJsonStringLiteralScalar(bytes) }).toEqual({ at, tail, after: after.length, simd: want, scalar: want });
          checked++;
        }
      }
    }
    expect(checked).toBe(140 * tails.length * 2);
  });

  it('GW-85 parts that do not make an answer are refused: injection, too large, malformed headers', () => {
    const injected = answerPayloads('id', [Buffer.from('"x"}],"isError":false,"extra":{"a":"b"')], false);
    expect(() => join(injected)).toThrow(/not a JSON string literal/);
    const joiner = new PartJoiner(2);
    const big = Buffer.alloc(MAX_ANSWER_BYTES / 2 + 1, 0x61);
    expect(joiner.add({ header: { v: 1, id: 'i', part: 0, parts: 2 }, bytes: big })).toBeUndefined();
    expect(() => joiner.add({ header: { v: 1, id: 'i', part: 1, parts: 2 }, bytes: big })).toThrow(/larger than/);
    for (const bad of ['no newline', '{"v":2,"id":"a","part":0,"parts":1}\n""', '{"v":1,"id":"a","part":-1,"parts":1}\n""', '{"v":1,"id":"a","part":0,"parts":0}\n""', '{"v":1,"id":"a","part":0,"parts":1,"isError":"yes"}\n""', 'not json\n""']) {
      expect(readPart(Buffer.from(bad)), bad).toBeUndefined();
    }
  });

  it('GW-85 a request with an oversized or odd correlation id is not read', () => {
    const request = (id: string) => Buffer.from(JSON.stringify({ v: 1, id, replyTo: 'p/clouds/c/responses', deadline: Date.now() + 1000, method: 'tools/call', params: { name: 'list_groups' } }));
    expect(readRequest(request('agent-run-42.0123456789abcdef'))).toBeDefined();
    expect(readRequest(request('x'.repeat(101)))).toBeUndefined();
    expect(readRequest(request('a b'))).toBeUndefined();
    expect(readRequest(request('a\nb'))).toBeUndefined();
  });

  it('an answer topic names the gateway that sent it: one level, no wildcard, this instance only', () => {
    const t = topics('p/v1');
    expect(t.responses('inst', 'aaaaaaaaaaaa')).toBe('p/v1/clouds/inst/responses/aaaaaaaaaaaa');
    expect(t.responsesAll('inst')).toBe('p/v1/clouds/inst/responses/+');
    expect(t.answererOf('inst', 'p/v1/clouds/inst/responses/aaaaaaaaaaaa')).toBe('aaaaaaaaaaaa');
    for (const topic of ['p/v1/clouds/other/responses/aaaaaaaaaaaa', 'p/v1/clouds/inst/responses', 'p/v1/clouds/inst/responses/a/b', 'p/v2/clouds/inst/responses/a', 'p/v1/gateways/a/presence']) {
      expect(t.answererOf('inst', topic), topic).toBeUndefined();
    }
    expect(t.isAnswerTopicOf('aaaaaaaaaaaa', 'p/v1/clouds/any/responses/aaaaaaaaaaaa')).toBe(true);
    for (const topic of ['p/v1/clouds/any/responses/bbbbbbbbbbbb', 'p/v1/clouds/any/responses', 'p/v1/clouds/+/responses/aaaaaaaaaaaa', 'p/v1/clouds/#', 'p/v1/clouds/a/b/responses/aaaaaaaaaaaa', 'p/v1x/clouds/a/responses/aaaaaaaaaaaa']) {
      expect(t.isAnswerTopicOf('aaaaaaaaaaaa', topic), topic).toBe(false);
    }
    // A gateway may still answer a cloud that asks on its bare response topic; the broker of this cloud never takes it.
    expect(t.isAnswerTopicOf('aaaaaaaaaaaa', 'p/v1/clouds/any/responses', true)).toBe(true);
    expect(t.isAnswerTopicOf('aaaaaaaaaaaa', 'p/v1/clouds/any/responses/bbbbbbbbbbbb', true)).toBe(false);
  });
});

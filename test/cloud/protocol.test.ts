/**
 * The relay's answer format: a tool result's text as a JSON string literal,
 * cut into byte parts with a header line, joined in any order; an answer
 * that is not exactly one JSON string literal is refused, so a gateway
 * cannot add JSON of its own to the cloud's response.
 */
import { describe, expect, it } from 'vitest';
import { answerPayloads, isJsonStringLiteral, MAX_ANSWER_BYTES, PartJoiner, readPart, readRequest, textLiteral } from '../../core/cloud/protocol.js';

const join = (payloads: Buffer[]) => {
  const parts = payloads.map((p) => readPart(p));
  const joiner = new PartJoiner(parts[0]!.header.parts);
  let answer: { literal: Buffer; isError: boolean } | undefined;
  for (const part of parts) answer = joiner.add(part!) ?? answer;
  return answer;
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
    for (const good of ['""', '"a"', '"\\"\\\\\\/\\b\\f\\n\\r\\t"', '"\\u00e9"', JSON.stringify('é 切 😀')]) expect(isJsonStringLiteral(Buffer.from(good)), good).toBe(true);
    for (const bad of ['', '"', 'a', '"a', 'a"', '"a"b"', '"a","isError":true,"x":"', '"\n"', '"\\x"', '"\\u12"', '"\\u12G4"', '"abc\\"', '"\\"', '"a" ']) {
      expect(isJsonStringLiteral(Buffer.from(bad)), bad).toBe(false);
    }
    expect(isJsonStringLiteral(Buffer.from([0x22, 0xc3, 0x28, 0x22]))).toBe(false);
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
});

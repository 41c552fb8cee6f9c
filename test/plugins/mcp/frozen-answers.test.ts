import { describe, expect, it } from 'vitest';
import { FrozenAnswers, literalContent, SerialisedAnswer, splice, type Splices } from '../../../core/mcp/frozen-answers.js';

describe('frozen answers', () => {
  it('GW-63 a frozen answer becomes a placeholder whose literal is replaced by the escaped text, wherever it occurs', () => {
    const answers = new FrozenAnswers();
    const answer = Object.freeze({ machines: [{ machineID: 'M1', name: 'Lathe "one"\n' }] });
    const splices: Splices = new Map();
    const placeholder = answers.textOrPlaceholder(answer, splices);
    expect(answers.textOrPlaceholder(answer, splices)).toBe(placeholder);
    expect(splices.size).toBe(1);
    const built = Buffer.from(JSON.stringify({ result: { content: [{ type: 'text', text: placeholder }, { type: 'text', text: placeholder }] }, id: 1 }));
    const expected = JSON.stringify({ result: { content: [{ type: 'text', text: JSON.stringify(answer) }, { type: 'text', text: JSON.stringify(answer) }] }, id: 1 });
    const parts = splice(built, splices);
    expect(Buffer.concat(parts).toString()).toBe(expected);
    // The stored literal itself is among the parts, not a copy.
    expect(parts.filter((p) => p === splices.get(placeholder)?.[0])).toHaveLength(2);
  });

  it('GW-63 an answer that is not frozen is its text; a body without placeholders is returned as it is', () => {
    const answers = new FrozenAnswers();
    const splices: Splices = new Map();
    expect(answers.textOrPlaceholder({ a: 1 }, splices)).toBe('{"a":1}');
    expect(splices.size).toBe(0);
    const body = Buffer.from('{"error":{"code":-32603}}');
    expect(splice(body, new Map([['frozen-answer-x-1', [Buffer.from('"x"')]]]))).toEqual([body]);
  });

  it('GW-63 a serialised answer in parts gives the bytes JSON.stringify gives for its whole text, escapes and non-ASCII included', () => {
    const values = [{ machineID: 'M1', name: 'Dreh "eins"\\ \n\t' }, { machineID: 'M2', name: 'Fräse — 二号 😀' }, { machineID: 'M3', note: 'lone \ud800 surrogate', time: 1.5e12 }];
    const text = `{"machines":[${values.map((v) => JSON.stringify(v)).join(',')}]}`;
    const parts = [literalContent('{"machines":[')];
    values.forEach((v, i) => parts.push(...(i > 0 ? [literalContent(',')] : []), literalContent(JSON.stringify(v))));
    parts.push(literalContent(']}'));
    const answer = new SerialisedAnswer(parts);
    expect(answer.text()).toBe(text);

    const answers = new FrozenAnswers();
    const splices: Splices = new Map();
    const placeholder = answers.textOrPlaceholder(answer, splices);
    // A new placeholder per call: the answer is not frozen.
    expect(answers.textOrPlaceholder(answer, new Map())).not.toBe(placeholder);
    const built = Buffer.from(JSON.stringify({ jsonrpc: '2.0', id: 3, result: { content: [{ type: 'text', text: placeholder }] } }));
    const spliced = splice(built, splices);
    expect(Buffer.concat(spliced).toString()).toBe(JSON.stringify({ jsonrpc: '2.0', id: 3, result: { content: [{ type: 'text', text }] } }));
    // The kept parts themselves are written, not copies.
    for (const part of parts) expect(spliced).toContain(part);
  });
});

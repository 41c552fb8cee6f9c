import { describe, expect, it } from 'vitest';
import { FrozenAnswers, splice, type Splices } from '../../../plugins/mcp/frozen-answers.js';

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
    expect(parts.filter((p) => p === splices.get(placeholder))).toHaveLength(2);
  });

  it('GW-63 an answer that is not frozen is its text; a body without placeholders is returned as it is', () => {
    const answers = new FrozenAnswers();
    const splices: Splices = new Map();
    expect(answers.textOrPlaceholder({ a: 1 }, splices)).toBe('{"a":1}');
    expect(splices.size).toBe(0);
    const body = Buffer.from('{"error":{"code":-32603}}');
    expect(splice(body, new Map([['frozen-answer-x-1', Buffer.from('"x"')]]))).toEqual([body]);
  });
});

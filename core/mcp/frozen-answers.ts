/**
 * Tool answers serialised once.
 *
 * A tool that hands out the same answer until something changes
 * (list_machines: the fleet's identity rows) freezes it. Its text, and that
 * text as a JSON string literal, are computed once per answer.
 *
 * A tool whose answer is made of parts that mostly stay the same from call to
 * call (get_fleet_status: one entry per machine) returns a SerialisedAnswer:
 * its text already as the escaped content of a JSON string literal, in parts
 * it keeps between calls.
 *
 * Either way each call puts a short placeholder in the tool result, the SDK
 * builds and checks its JSON-RPC response around it as usual, and the
 * placeholder's literal in the finished response bytes is replaced by the
 * stored literal. The bytes on the wire are exactly those the SDK would have
 * produced with the text itself, without escaping and encoding some hundred
 * kilobytes again on every call.
 */
import { randomUUID } from 'node:crypto';

interface Serialised {
  placeholder: string;
  /** JSON.stringify(text), UTF-8. */
  literal: Buffer;
}

/** Placeholders found in one response and what replaces each: the parts of a JSON string literal, quotes included. */
export type Splices = Map<string, readonly Buffer[]>;

const QUOTE = Buffer.from('"');

/** `text` escaped as in a JSON string literal, without the quotes, UTF-8. */
export function literalContent(text: string): Buffer {
  return Buffer.from(JSON.stringify(text).slice(1, -1));
}

/**
 * An answer whose text is given as the escaped content of its JSON string
 * literal, in parts. JSON escapes character by character, and every part
 * escapes whole JSON values or punctuation, so the parts joined are the
 * literal of the texts joined.
 */
export class SerialisedAnswer {
  constructor(readonly parts: readonly Buffer[]) {}

  /** The answer's text. */
  text(): string {
    return JSON.parse(`"${Buffer.concat(this.parts as Buffer[]).toString()}"`) as string;
  }

  /** The answer as the value its text is, so JSON.stringify of it (a renderer without splicing, a test) gives that text. */
  toJSON(): unknown {
    return JSON.parse(this.text()) as unknown;
  }
}

export class FrozenAnswers {
  /** Unique to this process, so no tool text can contain it by chance. */
  private readonly prefix = `frozen-answer-${randomUUID()}-`;
  private count = 0;
  private readonly byAnswer = new WeakMap<object, Serialised>();

  /**
   * What to put in the tool result for `result`: its text, or for a frozen
   * answer a placeholder, noted in `splices` for the response to be completed.
   */
  textOrPlaceholder(result: unknown, splices: Splices): string {
    if (result instanceof SerialisedAnswer) {
      const placeholder = `${this.prefix}${++this.count}`;
      splices.set(placeholder, [QUOTE, ...result.parts, QUOTE]);
      return placeholder;
    }
    if (typeof result !== 'object' || result === null || !Object.isFrozen(result)) return JSON.stringify(result);
    const s = this.serialised(result);
    splices.set(s.placeholder, [s.literal]);
    return s.placeholder;
  }

  private serialised(result: object): Serialised {
    let s = this.byAnswer.get(result);
    if (s === undefined) {
      const text = JSON.stringify(result);
      s = { placeholder: `${this.prefix}${++this.count}`, literal: Buffer.from(JSON.stringify(text)) };
      this.byAnswer.set(result, s);
    }
    return s;
  }
}

/**
 * `body` as parts with each placeholder's JSON literal replaced by its stored
 * literal: the stored parts themselves, not copies, between slices of
 * `body`. A placeholder the response does not hold (the call failed after
 * all) is skipped; nothing to replace gives `[body]`.
 */
export function splice(body: Buffer, splices: Splices): Buffer[] {
  if (splices.size === 0) return [body];
  const found: { at: number; length: number; literal: readonly Buffer[] }[] = [];
  for (const [placeholder, literal] of splices) {
    // Placeholders are plain ASCII without characters JSON escapes: their literal is the text in quotes.
    const needle = `"${placeholder}"`;
    for (let at = body.indexOf(needle); at !== -1; at = body.indexOf(needle, at + needle.length)) found.push({ at, length: needle.length, literal });
  }
  if (found.length === 0) return [body];
  found.sort((a, b) => a.at - b.at);
  const parts: Buffer[] = [];
  let from = 0;
  for (const f of found) {
    parts.push(body.subarray(from, f.at), ...f.literal);
    from = f.at + f.length;
  }
  parts.push(body.subarray(from));
  return parts;
}

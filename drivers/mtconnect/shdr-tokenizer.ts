/**
 * Splits an SHDR line into its pipe-delimited fields as the reference agent
 * does (cppagent's ShdrTokenizer): each field trimmed of white space; a field
 * that starts with a double quote and ends with one (before the next pipe or
 * the end) is quoted, and inside it a backslash escapes the next character,
 * so `"a\|b"` is one field `a|b`; a quote that is not closed leaves the
 * field as plain text. A line ending in a pipe has an empty last field.
 */

const isSpace = (code: number): boolean => code === 0x20 || (code >= 0x09 && code <= 0x0d);

function trimEnd(text: string): string {
  let end = text.length;
  while (end > 0 && isSpace(text.charCodeAt(end - 1))) end--;
  return end === text.length ? text : text.slice(0, end);
}

/** A quoted field starting at `start` (a `"`): its text and where it ends (the next pipe or the line's end), or undefined when it is not closed. */
function quoted(line: string, start: number): { token: string; end: number } | undefined {
  let token = '';
  let i = start + 1;
  while (i < line.length) {
    const c = line[i] as string;
    if (c === '\\' && i + 1 < line.length) {
      token += line[i + 1];
      i += 2;
      continue;
    }
    if (c === '|') return undefined;
    if (c === '"') {
      let after = i + 1;
      while (after < line.length && isSpace(line.charCodeAt(after))) after++;
      return after === line.length || line[after] === '|' ? { token, end: after } : undefined;
    }
    token += c;
    i++;
  }
  return undefined;
}

/** The fields of `line`, or undefined when it has more than `maxFields` of them. */
export function tokenize(line: string, maxFields = Number.POSITIVE_INFINITY): string[] | undefined {
  const tokens: string[] = [];
  let i = 0;
  for (;;) {
    if (tokens.length >= maxFields) return undefined;
    while (i < line.length && isSpace(line.charCodeAt(i))) i++;
    const q = line[i] === '"' ? quoted(line, i) : undefined;
    if (q) {
      tokens.push(q.token);
      i = q.end;
    } else {
      const pipe = line.indexOf('|', i);
      const end = pipe < 0 ? line.length : pipe;
      tokens.push(trimEnd(line.slice(i, end)));
      i = end;
    }
    if (i >= line.length) return tokens;
    i++;
  }
}
